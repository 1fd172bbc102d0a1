import { describe, expect, it } from 'vitest';
import type { ConversationResult } from '../../../src/domain/conversation.ts';
import { computeAgreement } from '../../../src/kinds/dialogue/agreement.ts';
import { RatingFormSchema, decodeRatings, encodeRating, type Rating } from '../../../src/kinds/dialogue/ratings.ts';
import type { Annotation } from '../../../src/store/types.ts';

/** Ratings as they come back from the store: the encoded rows, stamped. */
function stored(rows: ReturnType<typeof encodeRating>): Annotation[] {
  return rows.map((r) => ({ note: '', ...r, createdAt: '2026-01-01T00:00:00Z' }));
}

function rate(key: string, rater: string, instruction: 0 | 1 | 2, previous: Rating | null = null, turnLabels: { turn: number; label: 'constraint_missed' }[] = []) {
  const form = RatingFormSchema.parse({ rater, dimensions: { instruction, context: instruction, plan: 2, safety: 2 }, targets: { t1: 1 }, turnLabels });
  return stored(encodeRating(key, form, previous));
}

/** Only status and verdicts matter to the agreement (the deciding verdict). */
function judged(instruction: 0 | 1 | 2, pass: boolean): ConversationResult {
  const dims = { instruction: { score: instruction, reasoning: '' }, context: { score: instruction, reasoning: '' }, plan: { score: 2, reasoning: '' }, safety: { score: 2, reasoning: '' } };
  return { status: 'completed', verdicts: [{ tier: 'oracle', outcome: 'judged', dimensions: dims, completedShare: 1, score: pass ? 1 : 0.5, pass, reasoning: '' }] } as unknown as ConversationResult;
}

describe('ratings in the store', () => {
  it('round-trip, compute C and pass with the judge formula, and let a rater revise', () => {
    const first = decodeRatings(rate('c1', 'alice', 0, null, [{ turn: 2, label: 'constraint_missed' }]));
    expect(first).toHaveLength(1);
    // C = (T + Σ d/2) / 5 = (1 + 0 + 0 + 1 + 1) / 5 = 0.6 < 0.75
    expect(first[0]).toMatchObject({ rater: 'alice', completedShare: 1, pass: false, turnLabels: [{ turn: 2, label: 'constraint_missed' }] });
    expect(first[0].score).toBeCloseTo(0.6, 10);
    const revisedRows = [...rate('c1', 'alice', 0, null, [{ turn: 2, label: 'constraint_missed' }]), ...rate('c1', 'alice', 2, first[0])];
    const revised = decodeRatings(revisedRows);
    expect(revised).toHaveLength(1);
    expect(revised[0].dimensions.instruction).toBe(2);
    expect(revised[0].turnLabels).toEqual([]);
    expect(revised[0].pass).toBe(true);
  });

  it("takes T from the rater's target statuses by the judge's rule: a dropped target is not completed", () => {
    const form = RatingFormSchema.parse({ rater: 'alice', dimensions: { instruction: 2, context: 2, plan: 2, safety: 0 }, targets: { t1: 1, t2: 0, t3: -1 } });
    const [rating] = decodeRatings(stored(encodeRating('c1', form, null)));
    expect(rating.completedShare).toBeCloseTo(1 / 3, 12);
    // C = (1/3 + 1 + 1 + 1 + 0) / 5 = 2/3 < 0.75
    expect(rating.score).toBeCloseTo(2 / 3, 12);
    expect(rating.pass).toBe(false);
    const allDropped = RatingFormSchema.parse({ ...form, targets: { t1: -1 } });
    expect(decodeRatings(stored(encodeRating('c1', allDropped, null)))[0].completedShare).toBe(0);
  });

  it('refuses scores off the 0/1/2 scale and odd rater names', () => {
    expect(RatingFormSchema.safeParse({ rater: 'a', dimensions: { instruction: 3, context: 0, plan: 0, safety: 0 }, targets: {} }).success).toBe(false);
    expect(RatingFormSchema.safeParse({ rater: '<script>', dimensions: { instruction: 0, context: 0, plan: 0, safety: 0 }, targets: {} }).success).toBe(false);
  });
});

describe('computeAgreement', () => {
  const annotations = [
    ...rate('c1', 'alice', 0),
    ...rate('c2', 'alice', 1),
    ...rate('c3', 'alice', 2),
    ...rate('c4', 'alice', 2),
    ...rate('c1', 'bob', 0),
    ...rate('c2', 'bob', 1),
    ...rate('c3', 'bob', 2),
    ...rate('c4', 'bob', 1),
  ];
  const results = new Map([
    ['c1', judged(0, false)],
    ['c2', judged(1, false)],
    ['c3', judged(2, true)],
    ['c4', judged(2, true)],
  ]);
  const view = computeAgreement(decodeRatings(annotations), results);

  it('compares the raters with each other (values computed independently)', () => {
    expect(view.raters).toEqual(['alice', 'bob']);
    expect(view.ratedConversations).toBe(4);
    const pair = view.raterPairs[0];
    expect(pair.items).toBe(4);
    const instruction = pair.dimensions.find((d) => d.dimension === 'instruction')!;
    // alice [0,1,2,2] vs bob [0,1,2,1]: quadratic κ 0.8, ρ 0.8333, exact 0.75, within one 1
    expect(instruction.kappa).toBeCloseTo(0.8, 10);
    expect(instruction.spearman).toBeCloseTo(0.8333333333, 8);
    expect(instruction.exact).toBe(0.75);
    expect(instruction.withinOne).toBe(1);
    // C = (3 + d)/5: alice passes c2..c4, bob passes c2..c4 (d=1 gives 0.8)
    expect(pair.passAgreement).toBe(1);
  });

  it('compares the judge with the raters: majority score, mean for ρ, pass/fail F1 against the majority vote', () => {
    const instruction = view.judgeVsRaters.find((d) => d.dimension === 'instruction')!;
    expect(instruction.items).toBe(4);
    // majority of [2,1] is a tie, resolved to the lower mode → majority [0,1,2,1] vs judge [0,1,2,2]
    expect(instruction.kappa).toBeCloseTo(0.8, 10);
    // judge vs mean [0,1,2,1.5]
    expect(instruction.spearman).toBeCloseTo(0.9486832981, 8);
    expect(instruction.exact).toBe(0.75);
    // judge fails c1,c2; raters fail only c1 → fail-positive TP 1, FP 1, FN 0 → F1 2/3
    expect(instruction.passFail?.f1).toBeCloseTo(2 / 3, 10);
    expect(instruction.passFail).toMatchObject({ truePositives: 1, falsePositives: 1, falseNegatives: 0, trueNegatives: 2, positive: 'fail' });
    expect(instruction.ratersLightsKappa).toBeCloseTo(0.8, 10);
  });

  it("gives the paper's single figures: each statistic averaged over the four dimensions (hand-worked)", () => {
    // judge vs alice identical on instruction and context (κ 1, exact 1), vs bob κ 0.8, exact 0.75, ρ 5/6: pair means 0.9, 0.875, 11/12;
    // plan and safety all 2: κ 1, exact 1, ρ undefined (left out of the ρ mean)
    expect(view.overall.judge!.kappa).toBeCloseTo((0.9 + 0.9 + 1 + 1) / 4, 10);
    expect(view.overall.judge!.exact).toBeCloseTo((0.875 + 0.875 + 1 + 1) / 4, 10);
    expect(view.overall.judge!.spearman).toBeCloseTo(11 / 12, 10);
    // the one rater pair: κ 0.8, 0.8, 1, 1; exact 0.75, 0.75, 1, 1; ρ 5/6 twice
    expect(view.overall.raters!.kappa).toBeCloseTo(0.9, 10);
    expect(view.overall.raters!.exact).toBeCloseTo(0.875, 10);
    expect(view.overall.raters!.spearman).toBeCloseTo(5 / 6, 10);
  });

  it('reports κ and ρ as undefined for a single rated conversation, and still the shares', () => {
    const single = computeAgreement(decodeRatings([...rate('c1', 'alice', 0), ...rate('c1', 'bob', 1)]), results);
    expect(single.raterPairs[0].dimensions[0]).toMatchObject({ items: 1, kappa: null, spearman: null, exact: 0, withinOne: 1 });
    expect(single.raterPairs[0].passAgreement).toBe(0);
    // majority of [0,1] is a tie, resolved to the lower mode 0 = the judge's score;
    // alice fails (C 0.6), bob passes (C 0.8): a tied vote counts as fail, as the judge says
    expect(single.judgeVsRaters[0]).toMatchObject({ items: 1, kappa: null, spearman: null, exact: 1, withinOne: 1, ratersLightsKappa: null });
    expect(single.judgeVsRaters[0].passFail).toMatchObject({ truePositives: 1, falsePositives: 0, falseNegatives: 0, trueNegatives: 0, f1: 1, positive: 'fail' });
  });

  it('reports ρ of a constant series as undefined while κ and the shares stand', () => {
    // every judge and rater score on plan is 2
    const plan = view.judgeVsRaters.find((d) => d.dimension === 'plan')!;
    expect(plan).toMatchObject({ items: 4, kappa: 1, spearman: null, exact: 1, withinOne: 1 });
    const pairPlan = view.raterPairs[0].dimensions.find((d) => d.dimension === 'plan')!;
    expect(pairPlan).toMatchObject({ items: 4, kappa: 1, spearman: null, exact: 1 });
  });

  it('leaves every statistic undefined when no rated conversation was judged', () => {
    const none = computeAgreement(decodeRatings(annotations), new Map());
    expect(none.ratedConversations).toBe(4);
    for (const row of none.judgeVsRaters) {
      expect(row).toMatchObject({ items: 0, kappa: null, spearman: null, exact: null, withinOne: null, passFail: null, ratersLightsKappa: null });
    }
  });

  it("gives the raters' Light's κ only when the same raters rated every conversation", () => {
    const uneven = computeAgreement(decodeRatings([...annotations, ...rate('c1', 'carol', 1)]), results);
    const instruction = uneven.judgeVsRaters.find((d) => d.dimension === 'instruction')!;
    expect(instruction.items).toBe(4);
    expect(instruction.ratersLightsKappa).toBeNull();
    // c1 now has [0,0,1] → majority 0, mean 1/3; the rest as before
    expect(instruction.kappa).toBeCloseTo(0.8, 10);
    expect(uneven.raterPairs.map((p) => [p.a, p.b, p.items])).toEqual([
      ['alice', 'bob', 4],
      ['alice', 'carol', 1],
      ['bob', 'carol', 1],
    ]);
  });
});
