import { describe, expect, it } from 'vitest';
import { alignmentReport, humanMetrics, type FactAnnotation } from '../../src/manual/alignment.ts';
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
});
