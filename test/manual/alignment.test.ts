import { describe, expect, it } from 'vitest';
import { alignmentReport, evaluatorBias, familyBias, humanMetrics, type FactAnnotation } from '../../src/manual/alignment.ts';
import { modelFamily } from '../../src/llm/modelRef.ts';
import { kruskalWallis } from '../../src/domain/stats.ts';
import { blankMarks } from '../../src/ui/views/ManualRunView.tsx';
import type { ManualEvaluation } from '../../src/manual/evaluate.ts';
import { MANUAL_METRICS } from '../../src/manual/model.ts';

function evaluation(completeness: number, essentialTags: boolean[]): ManualEvaluation {
  const metrics = Object.fromEntries(MANUAL_METRICS.map((m) => [m, { status: 'not_judged', reason: 'x' }])) as ManualEvaluation['metrics'];
  metrics.completeness_hard = { status: 'judged', value: completeness, reason: '' };
  return {
    tier: 'oracle',
    outcome: 'judged',
    metrics,
    referenceFacts: essentialTags.map((essential, i) => ({ id: `f${i}`, text: `fact ${i}`, essential, safetyCritical: i === 0 })),
    coverage: [],
    answerFacts: [],
    reasoning: '',
  };
}

const mark = (itemId: string, rater: string, covered: boolean[], essential: boolean[]): FactAnnotation => ({
  itemId,
  rater,
  referenceFacts: covered.map((c, i) => ({ factId: `f${i}`, covered: c, essential: essential[i], safetyCritical: i === 0 })),
  answerFacts: [],
});

describe('human alignment: Pearson per metric, ICC among raters, P/R/F1 of the tags', () => {
  it('derives the human metrics with the evaluator’s formulas', () => {
    expect(humanMetrics(mark('q', 'r', [true, false, true, true], [true, true, false, false]))).toMatchObject({ completeness_hard: 0.75, completeness_soft: 0.5, risk_awareness: 1, relevance: null });
  });

  it('computes Pearson of tier vs rater mean, ICC(3,1) among raters and the tags’ precision/recall/F1 on a worked example', () => {
    const evaluations = new Map([
      ['q1', evaluation(1, [true, true, false, false])],
      ['q2', evaluation(0.5, [true, true, false, false])],
      ['q3', evaluation(0.25, [true, false, false, false])],
    ]);
    // both raters: q1 4/4, q2 2/4 (A) and 3/4 (B), q3 1/4 — essential labels: A marks f0,f1; B marks f0,f2
    const annotations = [
      mark('q1', 'A', [true, true, true, true], [true, true, false, false]),
      mark('q1', 'B', [true, true, true, true], [true, false, true, false]),
      mark('q2', 'A', [true, true, false, false], [true, true, false, false]),
      mark('q2', 'B', [true, true, true, false], [true, false, true, false]),
      mark('q3', 'A', [true, false, false, false], [true, true, false, false]),
      mark('q3', 'B', [true, false, false, false], [true, false, true, false]),
    ];
    const report = alignmentReport(evaluations, annotations);
    // tier (1, 0.5, 0.25) vs rater means (1, 0.625, 0.25): Sxy = 0.28125, Sxx = 0.2916667, Syy = 0.28125 → r = 0.9819805…
    expect(report.pearson.completeness_hard.n).toBe(3);
    expect(report.pearson.completeness_hard.r).toBeCloseTo(0.9819805, 6);
    // ICC(3,1) of rows (1,1), (0.5,0.75), (0.25,0.25): BMS = 0.28125, EMS = 0.0104167 → 0.2708333/0.2916667 = 0.9285714…
    expect(report.icc.completeness_hard.icc).toBeCloseTo(0.9285714, 6);
    expect(report.icc.completeness_hard.raters).toBe(2);
    expect(report.pearson.relevance).toEqual({ r: null, n: 0 });
    // majority (ties positive): f0 yes, f1 yes (1 of 2), f2 yes (1 of 2), f3 no; tier tags q1,q2: T T F F; q3: T F F F
    // → TP = 2+2+1 = 5, FP = 0, FN = 1+1+2 = 4 (f2 ×3, f1 in q3) … checked against precisionRecallF1
    expect(report.tags.essential).toMatchObject({ truePositives: 5, falsePositives: 0, falseNegatives: 4, precision: 1 });
    expect(report.tags.essential!.recall).toBeCloseTo(5 / 9, 10);
    expect(report.tags.safetyCritical).toMatchObject({ precision: 1, recall: 1, f1: 1 });
  });

  it('rejects an annotation with an unknown field, naming it', () => {
    const bad = { ...mark('q', 'r', [true], [true]), extra: 1 } as unknown as FactAnnotation;
    expect(() => alignmentReport(new Map(), [bad])).toThrow(/extra|Unrecognized/);
  });

  it("GEAR's Table 6 and Table 3: confidence / actionability against the raters' majority, the test-set generator's relevance and correctness", () => {
    const judged = (completeness: number, confidence: 0 | 1, actionability: 0 | 1) => {
      const e = evaluation(completeness, [true]);
      e.metrics.confidence = { status: 'judged', value: confidence, reason: '' };
      e.metrics.actionability = { status: 'judged', value: actionability, reason: '' };
      return e;
    };
    const evaluations = new Map([
      ['q1', judged(1, 1, 1)],
      ['q2', judged(1, 1, 0)],
      ['q3', judged(1, 0, 1)],
    ]);
    const rated = (itemId: string, rater: string, confidence: boolean, actionability: boolean, relevant: boolean, correct: boolean): FactAnnotation => ({
      ...mark(itemId, rater, [true], [true]),
      referenceFacts: [{ factId: 'f0', covered: true, essential: true, safetyCritical: true, relevantToQuestion: relevant, correctInManual: correct }],
      confidence,
      actionability,
    });
    // majority per item — confidence: q1 yes, q2 no, q3 no; actionability: q1 yes, q2 yes, q3 yes
    const annotations = [rated('q1', 'A', true, true, true, true), rated('q1', 'B', true, true, true, false), rated('q2', 'A', false, true, true, true), rated('q2', 'B', false, true, false, true), rated('q3', 'A', false, true, true, true), rated('q3', 'B', false, true, true, true)];
    const report = alignmentReport(evaluations, annotations);
    // confidence: tier 1,1,0 vs humans 1,0,0 → TP 1, FP 1, FN 0
    expect(report.binary.confidence).toMatchObject({ truePositives: 1, falsePositives: 1, falseNegatives: 0, precision: 0.5, recall: 1 });
    // actionability: tier 1,0,1 vs humans 1,1,1 → TP 2, FN 1
    expect(report.binary.actionability).toMatchObject({ truePositives: 2, falsePositives: 0, falseNegatives: 1, precision: 1 });
    // test-set generator: A marks 3/3 relevant, 3/3 correct; B 2/3 relevant, 2/3 correct → means 5/6 and 5/6
    expect(report.testSet.relevance.n).toBe(6);
    expect(report.testSet.relevance.value).toBeCloseTo(5 / 6, 12);
    expect(report.testSet.correctness.n).toBe(6);
    expect(report.testSet.correctness.value).toBeCloseTo(5 / 6, 12);
  });

  it('evaluator bias: Kruskal–Wallis of the tiers\' per-question values per metric (GEAR §4.5)', () => {
    const tier = (name: string, values: number[]) => ({ tier: name, evaluations: values.map((v) => ({ ...evaluation(v, [true]), tier: name })) });
    const bias = evaluatorBias([tier('a', [0.2, 0.4, 0.5, 0.6]), tier('b', [0.7, 0.8, 0.9, 1])]);
    expect(bias.completeness_hard!.p).toBeCloseTo(kruskalWallis([[0.2, 0.4, 0.5, 0.6], [0.7, 0.8, 0.9, 1]]).p, 12);
    expect(bias.completeness_hard!.n).toEqual({ a: 4, b: 4 });
    // a metric no tier judged has no p; one tier alone is no comparison
    expect(bias.relevance).toEqual({ p: null, h: null, n: { a: 0, b: 0 } });
    expect(evaluatorBias([tier('a', [0.5])])).toEqual({});
  });

  it("GEAR's bias test: the assistant's family as evaluator against each other family, by hand", () => {
    const tier = (name: string, values: number[]) => ({ tier: name, family: modelFamily(name), evaluations: values.map((v) => ({ ...evaluation(v, [true]), tier: name })) });
    const qwen = tier('ollama:qwen2.5:14b', [0.2, 0.4, 0.6]);
    const llama = tier('ollama:llama3.1:8b', [0.8, 0.9, 1]);
    const gpt = tier('openai-compat:http://127.0.0.1:8080/v1#gpt-4o', [0.2, 0.4, 0.6]);
    const oracle = { tier: 'oracle', family: modelFamily('oracle'), evaluations: [evaluation(1, [true])] };
    const bias = familyBias('qwen', [oracle, qwen, llama, gpt]);
    expect(bias.families).toEqual({ oracle: null, 'ollama:qwen2.5:14b': 'qwen', 'ollama:llama3.1:8b': 'llama', 'openai-compat:http://127.0.0.1:8080/v1#gpt-4o': 'gpt' });
    expect(bias.sameFamily).toBe('ollama:qwen2.5:14b');
    expect(bias.pairs.map((p) => [p.other, p.otherFamily])).toEqual([
      ['ollama:llama3.1:8b', 'llama'],
      ['openai-compat:http://127.0.0.1:8080/v1#gpt-4o', 'gpt'],
    ]);
    // qwen 0.2 0.4 0.6 vs llama 0.8 0.9 1: ranks 1 2 3 | 4 5 6, rank sums 6 and 15, N = 6:
    // H = 12 / (6·7) · (6²/3 + 15²/3) − 3·7 = (2/7) · 87 − 21 = 27/7 ≈ 3.857; df 1: p = erfc(√(H/2)) ≈ 0.0495
    const llamaPair = bias.pairs[0].metrics.completeness_hard;
    expect(llamaPair.h).toBeCloseTo(27 / 7, 12);
    expect(llamaPair.p).toBeCloseTo(0.049535, 5);
    expect(llamaPair.n).toEqual({ same: 3, other: 3 });
    // gpt scored the same values: H = 0 after the tie correction, p = 1 (no sign of a difference)
    expect(bias.pairs[1].metrics.completeness_hard.p).toBeCloseTo(1, 12);
    // a metric neither judged has no p
    expect(bias.pairs[0].metrics.relevance).toEqual({ p: null, h: null, n: { same: 0, other: 0 } });
    // without what the test needs, it says why instead of "no bias"
    expect(familyBias(null, [qwen, llama]).undecided).toMatch(/assistantFamily/);
    expect(familyBias('gemma', [qwen, llama]).undecided).toBe("no judge tier of the assistant's family (gemma)");
    expect(familyBias('qwen', [oracle, qwen]).undecided).toBe('no judge tier of another model family than qwen');
    expect(modelFamily('gguf:models/Llama-3.1-8B-Q4.gguf')).toBe('llama');
    expect(modelFamily('ollama:deepseek-r1:7b')).toBe('deepseek');
  });

  it('the rater form starts blank: none of the machine\'s labels (coverage, tags, relevance, correctness, confidence, actionability)', () => {
    const e = evaluation(1, [true, false]);
    e.coverage = [{ factId: 'f0', covered: true, by: ['a0'], score: null }];
    e.metrics.confidence = { status: 'judged', value: 1, reason: '' };
    e.metrics.actionability = { status: 'judged', value: 1, reason: '' };
    e.answerFacts = [{ id: 'a0', text: 'Press the button.', instruction: true, grounded: true, relevant: true, correct: true, covers: ['f0'], note: '' }];
    expect(blankMarks(e, 'r')).toEqual({
      rater: 'r',
      referenceFacts: [
        { factId: 'f0', covered: false, essential: false, safetyCritical: false },
        { factId: 'f1', covered: false, essential: false, safetyCritical: false },
      ],
      answerFacts: [{ factId: 'a0', relevant: false, correct: false }],
      confidence: false,
      actionability: false,
    });
  });

  it("GEAR's Table 3 completeness: the share of the raters' own essential key facts the reference states, averaged over raters, by hand", () => {
    const own = (itemId: string, rater: string, facts: Array<[essential: boolean, inReference: boolean]>): FactAnnotation => ({
      ...mark(itemId, rater, [true], [true]),
      ownFacts: facts.map(([essential, inReference], i) => ({ text: `own ${i}`, essential, inReference })),
    });
    // rater A: q1 essential facts in/in/out, q2 in → 3 of 4 essential; an optional fact (not in) does not count
    // rater B: q1 in/out, q2 out → 1 of 3; rater C wrote no own facts and is left out
    // completeness = (3/4 + 1/3) / 2 = 13/24 ≈ 0.5417, over 7 essential facts
    const annotations = [own('q1', 'A', [[true, true], [true, true], [true, false], [false, false]]), own('q2', 'A', [[true, true]]), own('q1', 'B', [[true, true], [true, false]]), own('q2', 'B', [[true, false]]), mark('q1', 'C', [true], [true])];
    const report = alignmentReport(new Map(), annotations);
    expect(report.testSet.completeness.n).toBe(7);
    expect(report.testSet.completeness.value).toBeCloseTo(13 / 24, 12);
    // without own facts there is nothing to measure: null, not 0 or 1
    expect(alignmentReport(new Map(), [mark('q1', 'A', [true], [true])]).testSet.completeness).toEqual({ value: null, n: 0 });
    // an own fact without text is refused, naming the field
    expect(() => alignmentReport(new Map(), [{ ...own('q1', 'A', []), ownFacts: [{ text: ' ', essential: true, inReference: true }] }])).toThrow(/text/);
  });
});
