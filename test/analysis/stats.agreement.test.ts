import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../helpers/repoData.ts';
import {
  agreementOverDimensions,
  agreementReport,
  bootstrapCI,
  categoryCounts,
  chiSquareSf,
  cohensKappa,
  exactAgreement,
  fleissKappa,
  icc31,
  kruskalWallis,
  lightsKappa,
  majorityScore,
  mean,
  pearson,
  precisionRecallF1,
  spearman,
  withinOneAgreement,
} from '../../src/domain/stats.ts';

function expandTable(table: Record<string, number>): { a: string[]; b: string[] } {
  const a: string[] = [];
  const b: string[] = [];
  for (const [key, count] of Object.entries(table)) {
    const [x, y] = key.split('/');
    for (let i = 0; i < count; i++) {
      a.push(x);
      b.push(y);
    }
  }
  return { a, b };
}

describe("Cohen's kappa", () => {
  it('reproduces the Wikipedia worked example (κ = 0.4)', () => {
    const { a, b } = expandTable({ 'yes/yes': 20, 'yes/no': 5, 'no/yes': 10, 'no/no': 15 });
    expect(Math.abs(cohensKappa(a, b) - 0.4)).toBeLessThan(1e-12);
  });

  it('reproduces the Wikipedia "same agreement, different marginals" examples (0.1304, 0.2593)', () => {
    const first = expandTable({ 'yes/yes': 45, 'yes/no': 15, 'no/yes': 25, 'no/no': 15 });
    const second = expandTable({ 'yes/yes': 25, 'yes/no': 35, 'no/yes': 5, 'no/no': 35 });
    expect(cohensKappa(first.a, first.b)).toBeCloseTo(0.1304, 4);
    expect(cohensKappa(second.a, second.b)).toBeCloseTo(0.2593, 4);
  });

  // Hand-worked 3-category example. Table (rows rater a, cols rater b): [3,1,0],[0,2,2],[1,1,2]; all marginals 4,
  // so every expected cell is 1/9. Unweighted: p_o = 7/12, p_e = 1/3 → κ = 3/8.
  // Linear: observed disagreement (4·½ + 1·1)/12 = 1/4, expected 4/9·½ + 2/9·1 = 4/9 → κ = 1 − 9/16 = 7/16.
  // Quadratic: observed (4·¼ + 1)/12 = 1/6, expected 4/9·¼ + 2/9 = 1/3 → κ = 1/2.
  const a = [1, 1, 2, 2, 3, 3, 3, 1, 2, 3, 1, 2];
  const b = [1, 2, 2, 3, 3, 3, 1, 1, 2, 2, 1, 3];
  it('computes unweighted, linear and quadratic κ on a hand-worked ordinal example', () => {
    expect(Math.abs(cohensKappa(a, b) - 3 / 8)).toBeLessThan(1e-12);
    expect(Math.abs(cohensKappa(a, b, { weights: 'linear' }) - 7 / 16)).toBeLessThan(1e-12);
    expect(Math.abs(cohensKappa(a, b, { weights: 'quadratic' }) - 1 / 2)).toBeLessThan(1e-12);
  });

  it('weights use positions on the declared scale and reject ratings off the scale', () => {
    // unused end points rescale every weight by the same factor, which cancels
    expect(Math.abs(cohensKappa(a, b, { weights: 'linear', categories: [1, 2, 3, 4, 5] }) - 7 / 16)).toBeLessThan(1e-12);
    expect(() => cohensKappa([1, 7], [1, 2], { categories: [1, 2, 3] })).toThrow(/rating 1 \(7, 2\)/);
    expect(cohensKappa([2, 2, 2], [2, 2, 2])).toBe(1);
  });

  it("Light's κ is the mean of the pairwise Cohen's κ", () => {
    const c = [1, 2, 2, 3, 3, 1, 1, 1, 2, 3, 2, 2];
    const expected = (cohensKappa(a, b) + cohensKappa(a, c) + cohensKappa(b, c)) / 3;
    expect(Math.abs(lightsKappa([a, b, c]) - expected)).toBeLessThan(1e-12);
    expect(() => lightsKappa([a])).toThrow(/at least 2 raters/);
  });
});

describe("Fleiss' kappa", () => {
  // Wikipedia "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories → P̄ = 0.378, P̄e = 0.213, κ = 0.210
  const table = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
  ];
  it('reproduces the Wikipedia worked example (0.210)', () => {
    expect(fleissKappa(table)).toBeCloseTo(0.21, 3);
    expect(Math.abs(fleissKappa(table) - 0.20993070442195522)).toBeLessThan(1e-12);
  });

  it('rejects items with different numbers of raters', () => {
    expect(() => fleissKappa([[1, 1], [2, 1]])).toThrow(/item 1 has 3 ratings, expected 2/);
  });
});

describe('correlation and reliability', () => {
  it('Spearman ρ reproduces the Wikipedia IQ/TV example (−29/165)', () => {
    const iq = [106, 100, 86, 101, 99, 103, 97, 113, 112, 110];
    const tv = [7, 27, 2, 50, 28, 29, 20, 12, 6, 17];
    expect(Math.abs(spearman(iq, tv) - -29 / 165)).toBeLessThan(1e-12);
  });

  it('Spearman ρ uses average ranks for ties (equals Pearson of mid-ranks)', () => {
    expect(Math.abs(spearman([1, 2, 2, 3], [1, 3, 2, 4]) - pearson([1, 2.5, 2.5, 4], [1, 3, 2, 4]))).toBeLessThan(1e-12);
  });

  it('Pearson r reproduces Anscombe data set I (r = 0.816)', () => {
    const x = [10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5];
    const y = [8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68];
    expect(pearson(x, y)).toBeCloseTo(0.816, 3);
    expect(Math.abs(pearson(x, y) - 0.8164205163448395)).toBeLessThan(1e-12);
  });

  it('ICC(3,1) reproduces Shrout & Fleiss 1979 (0.71; 0.7148…)', () => {
    const ratings = [
      [9, 2, 5, 8],
      [6, 1, 3, 2],
      [8, 4, 6, 8],
      [7, 1, 2, 6],
      [10, 5, 6, 9],
      [6, 2, 4, 7],
    ];
    expect(icc31(ratings)).toBeCloseTo(0.71, 2);
    expect(Math.abs(icc31(ratings) - 0.7148407148407154)).toBeLessThan(1e-12);
  });
});

describe('agreement, classification, Kruskal–Wallis, bootstrap', () => {
  it('exact and within-one agreement count the right items', () => {
    expect(exactAgreement([1, 2, 3, 4], [1, 3, 3, 1])).toBe(0.5);
    expect(withinOneAgreement([1, 2, 3, 4], [1, 3, 3, 1])).toBe(0.75);
  });

  it('precision/recall/F1 from a confusion table', () => {
    // TP 3, FP 1, FN 2, TN 4 → P = 0.75, R = 0.6, F1 = 2·0.45/1.35 = 2/3
    const predicted = [true, true, true, true, false, false, false, false, false, false];
    const actual = [true, true, true, false, true, true, false, false, false, false];
    const s = precisionRecallF1(predicted, actual);
    expect([s.truePositives, s.falsePositives, s.falseNegatives, s.trueNegatives]).toEqual([3, 1, 2, 4]);
    expect(s.precision).toBe(0.75);
    expect(s.recall).toBe(0.6);
    expect(Math.abs(s.f1 - 2 / 3)).toBeLessThan(1e-12);
    expect(s.accuracy).toBe(0.7);
  });

  it('Kruskal–Wallis reproduces the SciPy documentation examples', () => {
    const r1 = kruskalWallis([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]]);
    expect(Math.abs(r1.h - 0.2727272727272734)).toBeLessThan(1e-12);
    expect(Math.abs(r1.p - 0.6015081344405895)).toBeLessThan(1e-12);
    const r2 = kruskalWallis([[1, 1, 1], [2, 2, 2], [2, 2]]);
    expect(Math.abs(r2.h - 7)).toBeLessThan(1e-12);
    expect(Math.abs(r2.p - 0.0301973834223185)).toBeLessThan(1e-12);
    expect(r2.df).toBe(2);
  });

  it('chi-square tail matches tabulated critical values', () => {
    expect(Math.abs(chiSquareSf(3.841458820694124, 1) - 0.05)).toBeLessThan(1e-12);
    expect(Math.abs(chiSquareSf(23.209251158954356, 10) - 0.01)).toBeLessThan(1e-12);
  });

  it('bootstrap CI is deterministic for a seed, brackets the estimate and narrows with more data', () => {
    const data = Array.from({ length: 40 }, (_, i) => Math.sin(i) * 3 + i / 10);
    const first = bootstrapCI(data, mean, { seed: 7, resamples: 1000 });
    const again = bootstrapCI(data, mean, { seed: 7, resamples: 1000 });
    expect(again).toEqual(first);
    expect(first.lower).toBeLessThan(first.estimate);
    expect(first.upper).toBeGreaterThan(first.estimate);
    expect(bootstrapCI(data, mean, { seed: 8, resamples: 1000 }).lower).not.toBe(first.lower);
    const bigger = bootstrapCI([...data, ...data, ...data, ...data], mean, { seed: 7, resamples: 1000 });
    expect(bigger.upper - bigger.lower).toBeLessThan(first.upper - first.lower);
    // the percentile interval of the mean is close to the normal-theory interval ±1.96·s/√n
    const sd = Math.sqrt(data.reduce((s, v) => s + (v - first.estimate) ** 2, 0) / data.length);
    const halfWidth = (1.96 * sd) / Math.sqrt(data.length);
    expect(Math.abs((first.upper - first.lower) / 2 - halfWidth) / halfWidth).toBeLessThan(0.15);
  });

  it('majority score breaks ties toward the median', () => {
    expect(majorityScore([1, 1, 2, 3])).toBe(1);
    expect(majorityScore([1, 1, 3, 3, 2])).toBe(1);
    expect(majorityScore([1, 3, 3, 4, 4])).toBe(3);
  });
});

// Real human ratings: FED (Mehri & Eskenazi 2020), 5 raters per item.
interface FedItem {
  annotations: Record<string, unknown[]>;
}
const fedPath = dataPath('fed/fed_data.json');
const fed = JSON.parse(readFileSync(fedPath, 'utf8')) as FedItem[];
function fedDimension(name: string): number[][] {
  return fed
    .map((item) => item.annotations[name])
    .filter((r): r is number[] => Array.isArray(r) && r.length === 5 && r.every((v) => typeof v === 'number'));
}

/** Fleiss' κ by its pairwise definition: share of agreeing rater pairs per item vs chance from category shares. */
function fleissByPairs(ratings: number[][]): number {
  let agreeing = 0;
  let pairs = 0;
  const shares = new Map<number, number>();
  for (const item of ratings) {
    for (let r = 0; r < item.length; r++) {
      shares.set(item[r], (shares.get(item[r]) ?? 0) + 1);
      for (let s = r + 1; s < item.length; s++) {
        pairs++;
        if (item[r] === item[s]) agreeing++;
      }
    }
  }
  const total = ratings.length * ratings[0].length;
  const chance = [...shares.values()].reduce((sum, c) => sum + (c / total) ** 2, 0);
  return (agreeing / pairs - chance) / (1 - chance);
}

describe('FED human ratings', () => {
  for (const dimension of ['Interesting', 'Engaging', 'Overall']) {
    it(`Fleiss' κ of "${dimension}" equals an independent pairwise implementation`, () => {
      const ratings = fedDimension(dimension);
      expect(ratings.length).toBeGreaterThan(300);
      const kappa = fleissKappa(categoryCounts(ratings));
      expect(Math.abs(kappa - fleissByPairs(ratings))).toBeLessThan(1e-12);
      expect(kappa).toBeGreaterThan(-1);
      expect(kappa).toBeLessThan(1);
    });
  }

  it('a judge that returns the human majority agrees perfectly; a shifted judge does not', () => {
    const ratings = fedDimension('Overall');
    const majority = ratings.map((r) => majorityScore(r));
    const perfect = agreementReport(majority, ratings, { scale: [0, 1, 2, 3, 4] });
    expect(perfect.kappa).toBe(1);
    expect(perfect.exact).toBe(1);
    expect(perfect.withinOne).toBe(1);
    expect(perfect.spearman).toBeGreaterThan(0.8);
    expect(perfect.humanFleissKappa).toBeCloseTo(fleissByPairs(ratings), 12);
    expect(perfect.humanLightsKappa).toBeNull();

    const shifted = agreementReport(majority.map((m) => Math.min(4, m + 1)), ratings, { scale: [0, 1, 2, 3, 4] });
    // only items whose majority is already the top score stay exact after the capped shift
    expect(shifted.exact).toBeCloseTo(majority.filter((m) => m === 4).length / majority.length, 12);
    expect(shifted.withinOne).toBe(1);
    expect(shifted.kappa).toBeLessThan(perfect.kappa);
    // Spearman is rank based: the shift only merges the top two levels, so the ranking survives
    expect(shifted.spearman).toBeGreaterThan(0.7);
  });

  it('pass/fail F1 is computed against the majority vote', () => {
    const ratings = [
      [1, 1, 2],
      [4, 4, 3],
      [0, 1, 4],
      [3, 4, 4],
    ];
    // threshold 2 (midpoint of 0..4): human majority fail, pass, fail, pass; judge says fail, pass, pass, pass
    const report = agreementReport([1, 4, 3, 4], ratings, { scale: [0, 1, 2, 3, 4] });
    expect(report.passFail.positive).toBe('fail');
    expect(report.passFail.truePositives).toBe(1);
    expect(report.passFail.falseNegatives).toBe(1);
    expect(report.passFail.f1).toBeCloseTo(2 / 3, 12);
    const aligned = agreementReport([1, 4, 3, 4], ratings, { scale: [0, 1, 2, 3, 4], ratersAligned: true, weights: 'linear' });
    const byRater = [0, 1, 2].map((r) => ratings.map((item) => item[r]));
    expect(aligned.humanLightsKappa).toBeCloseTo(lightsKappa(byRater, { weights: 'linear', categories: [0, 1, 2, 3, 4] }), 12);
  });

  it("the paper's RQ0 statistic is the mean over judge–rater pairs, not κ against the majority (hand-worked)", () => {
    // judge [0,1,2,2]; rater A [0,1,2,1], rater B [0,1,2,2], rater C [0,0,2,2]; majority [0,1,2,2] equals the judge
    const judge = [0, 1, 2, 2];
    const ratings = [
      [0, 0, 0],
      [1, 1, 0],
      [2, 2, 2],
      [1, 2, 2],
    ];
    const report = agreementReport(judge, ratings, { scale: [0, 1, 2], ratersAligned: true, weights: 'quadratic' });
    expect(report.kappa).toBe(1);
    expect(report.exact).toBe(1);
    // by hand, quadratic disagreement (i−j)²/4 on 0/1/2, κ = 1 − observed/expected:
    // judge vs A: observed (1/4)/4 = 4/64; marginals judge (1,1,2)/4, A (1,2,1)/4 → expected Σ p_i q_j (i−j)²/4 = 20/64 → κ = 1 − 4/20 = 0.8
    // judge vs B: identical → 1; judge vs C: observed 4/64; C (2,0,2)/4 → expected 28/64 → κ = 1 − 4/28 = 6/7
    expect(report.pairMean!.kappa).toBeCloseTo((0.8 + 1 + 6 / 7) / 3, 12);
    expect(report.pairMean!.exact).toBeCloseTo((3 / 4 + 1 + 3 / 4) / 3, 12);
    expect(report.pairMean!.pairs).toBe(3);
    // unaligned raters define no pairs
    expect(agreementReport(judge, ratings, { scale: [0, 1, 2] }).pairMean).toBeNull();
    // the human–human row over the rater pairs: A–B = judge–A (the judge equals B) 0.8, B–C = judge–C 6/7, and A–C:
    // observed ((1/4) + (1/4))/4 = 8/64; A (1,2,1)/4, C (2,0,2)/4 → expected 24/64 → κ = 1 − 8/24 = 2/3
    expect(report.humanPairMean!.kappa).toBeCloseTo((0.8 + 6 / 7 + 2 / 3) / 3, 12);
    expect(report.humanPairMean!.kappa).toBeCloseTo(report.humanLightsKappa!, 12);
    expect(report.humanPairMean!.exact).toBeCloseTo((3 / 4 + 3 / 4 + 2 / 4) / 3, 12);
    expect(report.humanPairMean!.pairs).toBe(3);
  });

  it("one RQ0 figure over the four dimensions: each statistic's mean over the dimensions that define it", () => {
    const judge = [0, 1, 2, 2];
    const ratings = [
      [0, 0, 0],
      [1, 1, 0],
      [2, 2, 2],
      [1, 2, 2],
    ];
    const first = agreementReport(judge, ratings, { scale: [0, 1, 2], ratersAligned: true });
    // a second dimension on which the judge agrees with every rater exactly
    const perfect = [0, 1, 2, 1];
    const second = agreementReport(perfect, perfect.map((x) => [x, x, x]), { scale: [0, 1, 2], ratersAligned: true });
    expect(second.pairMean!.kappa).toBe(1);
    const overall = agreementOverDimensions([first, second]);
    expect(overall.dimensions).toBe(2);
    expect(overall.judgePairMean!.kappa).toBeCloseTo(((0.8 + 1 + 6 / 7) / 3 + 1) / 2, 12);
    expect(overall.judgePairMean!.exact).toBeCloseTo(((3 / 4 + 1 + 3 / 4) / 3 + 1) / 2, 12);
    expect(overall.humanPairMean!.kappa).toBeCloseTo(((0.8 + 6 / 7 + 2 / 3) / 3 + 1) / 2, 12);
    expect(overall.judgeVsMajorityKappa).toBe(1);
    // unaligned raters: no pair means to average
    expect(agreementOverDimensions([agreementReport(judge, ratings, { scale: [0, 1, 2] })]).judgePairMean).toBeNull();
  });
});
