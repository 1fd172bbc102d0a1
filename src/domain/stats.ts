/**
 * Statistics used by the bench's analysis and by the judge benchmark.
 *
 * Every function states its formula and the worked example its test reproduces
 * (test/analysis/stats.test.ts). Inputs are plain arrays so the functions stay pure
 * and can be reused by reports, the UI and the judge benchmark alike.
 */

import { createRng } from './rng.ts';

// ---------------------------------------------------------------------------
// Special functions (normal and chi-square tails)
// ---------------------------------------------------------------------------

/**
 * Complementary error function, full double precision.
 * |x| < 2.5: erf by the all-positive series erf(x) = 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1))
 * (no cancellation); larger |x|: erfc by its continued fraction (modified Lentz), which keeps
 * relative precision in the far tail where tiny p-values live.
 */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x < 0) return 2 - erfc(-x);
  if (x < 2.5) {
    let term = x;
    let sum = x;
    for (let n = 1; n < 200; n++) {
      term *= (2 * x * x) / (2 * n + 1);
      sum += term;
      if (term < sum * 1e-17) break;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * Math.exp(-x * x) * sum;
  }
  // erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let n = 1; n < 500; n++) {
    const a = n / 2;
    d = x + a * d;
    d = d === 0 ? tiny : d;
    c = x + a / c;
    c = c === 0 ? tiny : c;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}

/** Upper tail of the standard normal, P(Z > z) = erfc(z/√2)/2. */
export function normalSf(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; ~1e-15 relative). */
export function lnGamma(x: number): number {
  const coefficients = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lnGamma(1 - x);
  const xm = x - 1;
  let a = coefficients[0];
  const t = xm + 7.5;
  for (let i = 1; i < 9; i++) a += coefficients[i] / (xm + i);
  return 0.5 * Math.log(2 * Math.PI) + (xm + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Regularized upper incomplete gamma Q(s, x): series for x < s+1, continued fraction otherwise. */
export function regularizedGammaQ(s: number, x: number): number {
  if (x <= 0) return 1;
  const logPrefix = -x + s * Math.log(x) - lnGamma(s);
  if (x < s + 1) {
    let term = 1 / s;
    let sum = term;
    for (let n = 1; n < 1000; n++) {
      term *= x / (s + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-16) break;
    }
    return 1 - sum * Math.exp(logPrefix);
  }
  const tiny = 1e-300;
  let b = x + 1 - s;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - s);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(logPrefix) * h;
}

/** Upper tail of the chi-square distribution with `df` degrees of freedom: Q(df/2, x/2). */
export function chiSquareSf(x: number, df: number): number {
  return regularizedGammaQ(df / 2, x / 2);
}

// ---------------------------------------------------------------------------
// Ranks and basic helpers
// ---------------------------------------------------------------------------

function requireFinite(values: readonly number[], name: string): void {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) throw new RangeError(`${name}[${i}] must be a finite number, got ${values[i]}`);
  }
}

function requireSameLength(a: readonly unknown[], b: readonly unknown[], what: string): void {
  if (a.length !== b.length) throw new RangeError(`${what}: both arrays must have the same length (got ${a.length} and ${b.length})`);
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('mean: empty array');
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median: empty array');
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Ranks 1..n with ties given the average of the ranks they span ("fractional ranking").
 * Also returns Σ(t³ − t) over tie groups, the tie term of rank-test variances.
 */
export function averageRanks(values: readonly number[]): { ranks: number[]; tieTerm: number } {
  const order = values.map((v, i) => [v, i] as const).sort((x, y) => x[0] - y[0]);
  const ranks = new Array<number>(values.length);
  let tieTerm = 0;
  for (let start = 0; start < order.length; ) {
    let end = start + 1;
    while (end < order.length && order[end][0] === order[start][0]) end++;
    const rank = (start + 1 + end) / 2;
    for (let k = start; k < end; k++) ranks[order[k][1]] = rank;
    const t = end - start;
    tieTerm += t * t * t - t;
    start = end;
  }
  return { ranks, tieTerm };
}

// ---------------------------------------------------------------------------
// Mann–Whitney U and Vargha–Delaney Â12
// ---------------------------------------------------------------------------

export interface MannWhitneyResult {
  /** U of sample a: the number of pairs (x in a, y in b) with x > y, ties counting ½ */
  u: number;
  /** signed standard score of U (normal approximation, tie-corrected, continuity corrected), given for both methods */
  z: number;
  /** two-sided p-value */
  p: number;
  method: 'exact' | 'normal';
}

/** Largest sample size for which the exact null distribution is used (when there are no ties). */
export const MANN_WHITNEY_EXACT_MAX_N = 20;

/** Number of arrangements of m a's and n b's giving each U = 0..mn (the exact null distribution, by recursion on the largest element). */
function mannWhitneyCounts(m: number, n: number): number[] {
  // counts[i][j] is the distribution for sizes (i, j); built row by row.
  let previous: number[][] = [];
  for (let i = 0; i <= m; i++) {
    const row: number[][] = [];
    for (let j = 0; j <= n; j++) {
      if (i === 0 || j === 0) {
        row.push([1]);
        continue;
      }
      // the largest observation is an a (adds j to U) or a b (adds nothing)
      const withA = previous[j];
      const withB = row[j - 1];
      const dist = new Array<number>(i * j + 1).fill(0);
      for (let u = 0; u < withA.length; u++) dist[u + j] += withA[u];
      for (let u = 0; u < withB.length; u++) dist[u] += withB[u];
      row.push(dist);
    }
    previous = row;
  }
  return previous[n];
}

/**
 * Two-sided Mann–Whitney U test (Wilcoxon rank-sum).
 *
 * U_a = R_a − n₁(n₁+1)/2, R_a the sum of a's average ranks in the pooled sample.
 * exact (n₁, n₂ ≤ 20, no ties): p = min(1, 2·P(U ≥ max(U_a, U_b))) from the exact null distribution.
 * normal otherwise: μ = n₁n₂/2, σ² = n₁n₂/12 · ((N+1) − Σ(t³−t)/(N(N−1))),
 *   z = sign(U_a−μ)·max(0, |U_a−μ| − ½)/σ, p = min(1, 2·P(Z > |z|)).
 * Matches scipy.stats.mannwhitneyu (method "exact" / "asymptotic", use_continuity=True).
 * Worked example (SciPy docs): a = [19,22,16,29,24], b = [20,11,17,12] → U = 17, exact p = 1/9,
 * normal p = 0.11134688653314041.
 */
export function mannWhitneyU(
  a: readonly number[],
  b: readonly number[],
  options: { method?: 'auto' | 'exact' | 'normal' } = {},
): MannWhitneyResult {
  if (a.length === 0 || b.length === 0) throw new RangeError(`mannWhitneyU: both samples must be non-empty (got ${a.length} and ${b.length})`);
  requireFinite(a, 'a');
  requireFinite(b, 'b');
  const n1 = a.length;
  const n2 = b.length;
  const { ranks, tieTerm } = averageRanks([...a, ...b]);
  let rankSumA = 0;
  for (let i = 0; i < n1; i++) rankSumA += ranks[i];
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const mu = (n1 * n2) / 2;
  const requested = options.method ?? 'auto';
  if (requested === 'exact' && tieTerm > 0) throw new RangeError('mannWhitneyU: the exact method needs samples without ties');
  const exact = requested === 'exact' || (requested === 'auto' && tieTerm === 0 && n1 <= MANN_WHITNEY_EXACT_MAX_N && n2 <= MANN_WHITNEY_EXACT_MAX_N);
  const n = n1 + n2;
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  const distance = Math.abs(u - mu);
  const z = sigma === 0 ? 0 : (Math.sign(u - mu) * Math.max(0, distance - 0.5)) / sigma;
  if (exact) {
    const counts = mannWhitneyCounts(n1, n2);
    const total = counts.reduce((s, c) => s + c, 0);
    const upper = Math.max(u, n1 * n2 - u);
    let tail = 0;
    for (let k = Math.round(upper); k < counts.length; k++) tail += counts[k];
    return { u, z, p: Math.min(1, (2 * tail) / total), method: 'exact' };
  }
  const p = sigma === 0 ? 1 : Math.min(1, 2 * normalSf(Math.abs(z)));
  return { u, z, p, method: 'normal' };
}

/**
 * Vargha–Delaney Â12: the probability that a value drawn from a is larger than one drawn
 * from b, ties counting ½. Â12 = U_a/(n₁n₂) = (R_a/n₁ − (n₁+1)/2)/n₂ (Vargha & Delaney 2000, eq. 14).
 * 0.5 = no effect; 0.56 / 0.64 / 0.71 are the small / medium / large thresholds.
 */
export function varghaDelaneyA12(a: readonly number[], b: readonly number[]): number {
  if (a.length === 0 || b.length === 0) throw new RangeError(`varghaDelaneyA12: both samples must be non-empty (got ${a.length} and ${b.length})`);
  requireFinite(a, 'a');
  requireFinite(b, 'b');
  const { ranks } = averageRanks([...a, ...b]);
  let rankSumA = 0;
  for (let i = 0; i < a.length; i++) rankSumA += ranks[i];
  return (rankSumA / a.length - (a.length + 1) / 2) / b.length;
}

/** Vargha & Delaney's magnitude label for |Â12 − 0.5| (thresholds 0.56, 0.64, 0.71 mirrored around 0.5). */
export function a12Magnitude(a12: number): 'negligible' | 'small' | 'medium' | 'large' {
  const d = Math.abs(a12 - 0.5);
  if (d < 0.06) return 'negligible';
  if (d < 0.14) return 'small';
  if (d < 0.21) return 'medium';
  return 'large';
}

// ---------------------------------------------------------------------------
// Agreement between raters
// ---------------------------------------------------------------------------

export type KappaWeights = 'none' | 'linear' | 'quadratic';
export type Category = number | string;

/** Sorted distinct categories (numbers numerically, otherwise as strings). */
function categoriesOf(values: readonly Category[]): Category[] {
  const distinct = [...new Set(values)];
  const numeric = distinct.every((v) => typeof v === 'number');
  return numeric ? (distinct as number[]).sort((x, y) => x - y) : distinct.map(String).sort();
}

/** Disagreement weight between category positions i and j of k ordered categories. */
function disagreementWeight(i: number, j: number, k: number, weights: KappaWeights): number {
  if (weights === 'none') return i === j ? 0 : 1;
  const d = Math.abs(i - j) / Math.max(1, k - 1);
  return weights === 'linear' ? d : d * d;
}

/**
 * Cohen's κ for two raters, unweighted or weighted by ordinal distance.
 *
 * With observed proportions o_ij, expected e_ij = row_i·col_j (marginals) and disagreement
 * weights w_ij (0/1; |i−j|/(k−1); (|i−j|/(k−1))²): κ_w = 1 − Σ w_ij o_ij / Σ w_ij e_ij.
 * Unweighted this is (p_o − p_e)/(1 − p_e).
 * Categories are the union of both raters' values in order, or `categories` when given (needed when
 * a middle scale point was never used, since weights depend on positions on the scale).
 * Worked example (Wikipedia "Cohen's kappa"): 50 proposals, yes/yes 20, yes/no 5, no/yes 10, no/no 15 → κ = 0.4.
 * Returns 1 when both raters use a single identical category throughout (no disagreement possible).
 */
export function cohensKappa(
  a: readonly Category[],
  b: readonly Category[],
  options: { weights?: KappaWeights; categories?: readonly Category[] } = {},
): number {
  requireSameLength(a, b, 'cohensKappa');
  if (a.length === 0) throw new RangeError('cohensKappa: no ratings');
  const weights = options.weights ?? 'none';
  const categories = options.categories ? [...options.categories] : categoriesOf([...a, ...b]);
  const index = new Map(categories.map((c, i) => [c, i] as const));
  const k = categories.length;
  const observed = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  const rowTotals = new Array<number>(k).fill(0);
  const colTotals = new Array<number>(k).fill(0);
  for (let n = 0; n < a.length; n++) {
    const i = index.get(a[n]);
    const j = index.get(b[n]);
    if (i === undefined || j === undefined) throw new RangeError(`cohensKappa: rating ${n} (${a[n]}, ${b[n]}) is not one of the categories ${categories.join(', ')}`);
    observed[i][j]++;
    rowTotals[i]++;
    colTotals[j]++;
  }
  const total = a.length;
  let observedDisagreement = 0;
  let expectedDisagreement = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const w = disagreementWeight(i, j, k, weights);
      observedDisagreement += (w * observed[i][j]) / total;
      expectedDisagreement += (w * rowTotals[i] * colTotals[j]) / (total * total);
    }
  }
  if (expectedDisagreement === 0) return 1;
  return 1 - observedDisagreement / expectedDisagreement;
}

/**
 * Light's κ: the mean of Cohen's κ over all pairs of raters (Light 1971).
 * `ratingsByRater[r][i]` is rater r's rating of item i; every rater rates every item.
 */
export function lightsKappa(
  ratingsByRater: readonly (readonly Category[])[],
  options: { weights?: KappaWeights; categories?: readonly Category[] } = {},
): number {
  if (ratingsByRater.length < 2) throw new RangeError(`lightsKappa: needs at least 2 raters, got ${ratingsByRater.length}`);
  const categories = options.categories ?? categoriesOf(ratingsByRater.flat());
  let sum = 0;
  let pairs = 0;
  for (let r = 0; r < ratingsByRater.length; r++) {
    for (let s = r + 1; s < ratingsByRater.length; s++) {
      sum += cohensKappa(ratingsByRater[r], ratingsByRater[s], { weights: options.weights, categories });
      pairs++;
    }
  }
  return sum / pairs;
}

/**
 * Fleiss' κ for a fixed number n of raters per item (Fleiss 1971).
 * `counts[i][j]` = raters who put item i in category j. With N items:
 * P_i = (Σ_j n_ij² − n)/(n(n−1)), P̄ = mean P_i, p_j = Σ_i n_ij/(N n), P̄e = Σ_j p_j², κ = (P̄ − P̄e)/(1 − P̄e).
 * Worked example (Wikipedia "Fleiss' kappa", 10 items × 14 raters × 5 categories): P̄ = 0.378, P̄e = 0.213, κ = 0.210.
 */
export function fleissKappa(counts: readonly (readonly number[])[]): number {
  if (counts.length === 0) throw new RangeError('fleissKappa: no items');
  const raters = counts[0].reduce((s, c) => s + c, 0);
  if (raters < 2) throw new RangeError(`fleissKappa: needs at least 2 ratings per item, item 0 has ${raters}`);
  const k = counts[0].length;
  const categoryTotals = new Array<number>(k).fill(0);
  let agreementSum = 0;
  counts.forEach((row, i) => {
    if (row.length !== k) throw new RangeError(`fleissKappa: item ${i} has ${row.length} categories, expected ${k}`);
    const n = row.reduce((s, c) => s + c, 0);
    if (n !== raters) throw new RangeError(`fleissKappa: item ${i} has ${n} ratings, expected ${raters} (same number of raters per item)`);
    let squares = 0;
    row.forEach((c, j) => {
      squares += c * c;
      categoryTotals[j] += c;
    });
    agreementSum += (squares - raters) / (raters * (raters - 1));
  });
  const meanAgreement = agreementSum / counts.length;
  const expected = categoryTotals.reduce((s, t) => s + (t / (counts.length * raters)) ** 2, 0);
  if (expected === 1) return 1;
  return (meanAgreement - expected) / (1 - expected);
}

/** Turns per-item rating lists (`ratingsByItem[i]` = all ratings of item i) into Fleiss count rows over `categories`. */
export function categoryCounts(ratingsByItem: readonly (readonly Category[])[], categories?: readonly Category[]): number[][] {
  const cats = categories ?? categoriesOf(ratingsByItem.flat());
  const index = new Map(cats.map((c, i) => [c, i] as const));
  return ratingsByItem.map((ratings, item) => {
    const row = new Array<number>(cats.length).fill(0);
    for (const r of ratings) {
      const j = index.get(r);
      if (j === undefined) throw new RangeError(`categoryCounts: item ${item} has rating ${r}, not one of ${cats.join(', ')}`);
      row[j]++;
    }
    return row;
  });
}

/** Share of items on which two raters give exactly the same rating. */
export function exactAgreement(a: readonly Category[], b: readonly Category[]): number {
  requireSameLength(a, b, 'exactAgreement');
  if (a.length === 0) throw new RangeError('exactAgreement: no ratings');
  let same = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same++;
  return same / a.length;
}

/** Share of items on which two numeric ratings differ by at most `tolerance` (default 1 scale point). */
export function withinOneAgreement(a: readonly number[], b: readonly number[], tolerance = 1): number {
  requireSameLength(a, b, 'withinOneAgreement');
  if (a.length === 0) throw new RangeError('withinOneAgreement: no ratings');
  let close = 0;
  for (let i = 0; i < a.length; i++) if (Math.abs(a[i] - b[i]) <= tolerance) close++;
  return close / a.length;
}

// ---------------------------------------------------------------------------
// Correlation and reliability
// ---------------------------------------------------------------------------

/**
 * Pearson's r = Σ(x−x̄)(y−ȳ) / √(Σ(x−x̄)² Σ(y−ȳ)²). NaN when either variable is constant.
 * Worked example (Anscombe 1973, data set I): r = 0.816.
 */
export function pearson(x: readonly number[], y: readonly number[]): number {
  requireSameLength(x, y, 'pearson');
  if (x.length < 2) throw new RangeError(`pearson: needs at least 2 pairs, got ${x.length}`);
  requireFinite(x, 'x');
  requireFinite(y, 'y');
  const mx = mean(x);
  const my = mean(y);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < x.length; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

/**
 * Spearman's ρ: Pearson's r of the average ranks (so ties are handled correctly; without ties
 * it equals 1 − 6Σd²/(n(n²−1))).
 * Worked example (Wikipedia "Spearman's rank correlation coefficient", IQ vs hours of TV): ρ = −29/165 = −0.175757….
 */
export function spearman(x: readonly number[], y: readonly number[]): number {
  requireSameLength(x, y, 'spearman');
  return pearson(averageRanks(x).ranks, averageRanks(y).ranks);
}

/**
 * ICC(3,1) of Shrout & Fleiss (1979): two-way mixed model, consistency, single rater.
 * `ratings[i][j]` = judge j's rating of target i (n targets, k judges):
 * ICC(3,1) = (BMS − EMS)/(BMS + (k−1)·EMS), BMS the between-targets mean square and EMS the residual mean square.
 * Worked example (Shrout & Fleiss 1979, Table 2, 6 targets × 4 judges): ICC(3,1) = 0.71 (0.7148…).
 */
export function icc31(ratings: readonly (readonly number[])[]): number {
  const n = ratings.length;
  if (n < 2) throw new RangeError(`icc31: needs at least 2 targets, got ${n}`);
  const k = ratings[0].length;
  if (k < 2) throw new RangeError(`icc31: needs at least 2 judges, got ${k}`);
  ratings.forEach((row, i) => {
    if (row.length !== k) throw new RangeError(`icc31: target ${i} has ${row.length} ratings, expected ${k}`);
    requireFinite(row, `ratings[${i}]`);
  });
  const grand = mean(ratings.flat());
  const rowMeans = ratings.map((row) => mean(row));
  const colMeans = Array.from({ length: k }, (_, j) => mean(ratings.map((row) => row[j])));
  let ssRows = 0;
  let ssCols = 0;
  let ssTotal = 0;
  for (let i = 0; i < n; i++) ssRows += k * (rowMeans[i] - grand) ** 2;
  for (let j = 0; j < k; j++) ssCols += n * (colMeans[j] - grand) ** 2;
  for (const row of ratings) for (const v of row) ssTotal += (v - grand) ** 2;
  const bms = ssRows / (n - 1);
  const ems = (ssTotal - ssRows - ssCols) / ((n - 1) * (k - 1));
  return (bms - ems) / (bms + (k - 1) * ems);
}

// ---------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------

export interface ClassificationScores {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  trueNegatives: number;
  /** TP/(TP+FP); 0 when nothing was predicted positive */
  precision: number;
  /** TP/(TP+FN); 0 when there are no positives */
  recall: number;
  /** 2PR/(P+R) = 2TP/(2TP+FP+FN); 0 when undefined */
  f1: number;
  accuracy: number;
}

/** Precision, recall and F1 of boolean predictions against boolean truth (true = the positive class). */
export function precisionRecallF1(predicted: readonly boolean[], actual: readonly boolean[]): ClassificationScores {
  requireSameLength(predicted, actual, 'precisionRecallF1');
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  for (let i = 0; i < predicted.length; i++) {
    if (predicted[i] && actual[i]) tp++;
    else if (predicted[i]) fp++;
    else if (actual[i]) fn++;
    else tn++;
  }
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const f1 = 2 * tp + fp + fn === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
  const accuracy = predicted.length === 0 ? 0 : (tp + tn) / predicted.length;
  return { truePositives: tp, falsePositives: fp, falseNegatives: fn, trueNegatives: tn, precision, recall, f1, accuracy };
}

// ---------------------------------------------------------------------------
// Kruskal–Wallis H
// ---------------------------------------------------------------------------

/**
 * Kruskal–Wallis H test over g ≥ 2 groups, tie corrected, p from the chi-square distribution with g−1 df:
 * H = [12/(N(N+1)) Σ R_i²/n_i − 3(N+1)] / (1 − Σ(t³−t)/(N³−N)).
 * Worked examples (SciPy docs, scipy.stats.kruskal): [1,3,5,7,9] vs [2,4,6,8,10] → H = 0.2727…, p = 0.6015…;
 * [1,1,1], [2,2,2], [2,2] → H = 7.0, p = 0.0301973834223185.
 */
export function kruskalWallis(groups: readonly (readonly number[])[]): { h: number; df: number; p: number } {
  if (groups.length < 2) throw new RangeError(`kruskalWallis: needs at least 2 groups, got ${groups.length}`);
  groups.forEach((g, i) => {
    if (g.length === 0) throw new RangeError(`kruskalWallis: group ${i} is empty`);
    requireFinite(g, `groups[${i}]`);
  });
  const pooled = groups.flat();
  const total = pooled.length;
  const { ranks, tieTerm } = averageRanks(pooled);
  let offset = 0;
  let sum = 0;
  for (const g of groups) {
    let rankSum = 0;
    for (let i = 0; i < g.length; i++) rankSum += ranks[offset + i];
    sum += (rankSum * rankSum) / g.length;
    offset += g.length;
  }
  const correction = 1 - tieTerm / (total ** 3 - total);
  const df = groups.length - 1;
  if (correction === 0) return { h: 0, df, p: 1 };
  const h = ((12 / (total * (total + 1))) * sum - 3 * (total + 1)) / correction;
  return { h, df, p: chiSquareSf(h, df) };
}

// ---------------------------------------------------------------------------
// Bootstrap
// ---------------------------------------------------------------------------

/** Linear-interpolation quantile of sorted values (type 7, the default of R and NumPy). */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new RangeError('quantileSorted: empty array');
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
}

export interface BootstrapInterval {
  estimate: number;
  lower: number;
  upper: number;
  confidence: number;
  resamples: number;
  seed: number;
}

/**
 * Percentile bootstrap confidence interval (Efron & Tibshirani 1993, ch. 13): resample the items
 * with replacement `resamples` times, compute the statistic each time, and take the (1−c)/2 and
 * (1+c)/2 quantiles. Items are resampled as units, so paired data (judge, human) stay paired.
 * Seeded, so the same call gives the same interval. Resamples where the statistic is NaN are dropped.
 */
export function bootstrapCI<T>(
  items: readonly T[],
  statistic: (sample: readonly T[]) => number,
  options: { resamples?: number; confidence?: number; seed?: number } = {},
): BootstrapInterval {
  if (items.length === 0) throw new RangeError('bootstrapCI: no items');
  const resamples = options.resamples ?? 2000;
  const confidence = options.confidence ?? 0.95;
  const seed = options.seed ?? 1;
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`bootstrapCI: confidence must be in (0, 1), got ${confidence}`);
  const random = createRng(seed).next;
  const values: number[] = [];
  const sample = new Array<T>(items.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < items.length; i++) sample[i] = items[Math.floor(random() * items.length)];
    const v = statistic(sample);
    if (!Number.isNaN(v)) values.push(v);
  }
  if (values.length === 0) throw new RangeError('bootstrapCI: the statistic was NaN on every resample');
  values.sort((x, y) => x - y);
  return {
    estimate: statistic(items),
    lower: quantileSorted(values, (1 - confidence) / 2),
    upper: quantileSorted(values, (1 + confidence) / 2),
    confidence,
    resamples: values.length,
    seed,
  };
}

// ---------------------------------------------------------------------------
// Judge-vs-human agreement (the multi-turn paper's Table III)
// ---------------------------------------------------------------------------

/**
 * The humans' consensus on one item: the most frequent score; a tie between modes goes to the
 * mode nearest the median, then to the lower one (deterministic and stays on the scale).
 */
export function majorityScore(ratings: readonly number[]): number {
  if (ratings.length === 0) throw new RangeError('majorityScore: no ratings');
  const counts = new Map<number, number>();
  for (const r of ratings) counts.set(r, (counts.get(r) ?? 0) + 1);
  const top = Math.max(...counts.values());
  const modes = [...counts.entries()].filter(([, c]) => c === top).map(([v]) => v).sort((x, y) => x - y);
  const mid = median(ratings);
  return modes.reduce((best, v) => (Math.abs(v - mid) < Math.abs(best - mid) ? v : best), modes[0]);
}

export interface AgreementReport {
  items: number;
  /** weighted Cohen's κ of the judge against the per-item majority score */
  kappa: number;
  kappaWeights: KappaWeights;
  /** Spearman ρ of the judge against the per-item mean human score */
  spearman: number;
  /** share of items where the judge equals the majority score */
  exact: number;
  /** share of items where the judge is within one point of the majority score */
  withinOne: number;
  /** pass/fail of the judge against the human majority vote on pass/fail; positive class = `positive` */
  passFail: ClassificationScores & { positive: 'pass' | 'fail' };
  /** human–human baseline: Light's κ (mean pairwise, same weights) when every item has the same raters in the same order */
  humanLightsKappa: number | null;
  /**
   * The paper's RQ0 statistics (Negi et al.): the judge against each rater separately, then the mean
   * over the judge–rater pairs (κ with the same weights, Spearman ρ, exact agreement over all
   * ratings). Null unless every item has the same raters in the same order (`ratersAligned`).
   */
  pairMean: { kappa: number; spearman: number; exact: number; pairs: number } | null;
  /** human–human baseline: Fleiss' κ (unweighted) when every item has the same number of ratings */
  humanFleissKappa: number | null;
  /**
   * human–human baseline as the paper's Table III row reports it: κ (Light's, the mean pairwise κ), Spearman ρ and
   * exact agreement, each a mean over the rater pairs. Null unless every item has the same raters in the same order.
   */
  humanPairMean: { kappa: number; spearman: number; exact: number; pairs: number } | null;
}

export interface AgreementOptions {
  /** κ weights for the ordinal scale (default quadratic) */
  weights?: KappaWeights;
  /** the full ordinal scale, e.g. [1,2,3,4,5]; default: every score that occurs */
  scale?: readonly number[];
  /** a score ≥ this is a pass, unless explicit pass/fail is given (default: the scale's midpoint) */
  passThreshold?: number;
  judgePass?: readonly boolean[];
  /** `humanPass[i][r]`: rater r's pass/fail on item i */
  humanPass?: readonly (readonly boolean[])[];
  /** which class counts as positive for F1 (default "fail": the bench's judge exists to find failures) */
  positive?: 'pass' | 'fail';
  /** true when `humanRatings[i][r]` is the same rater r on every item (enables Light's κ) */
  ratersAligned?: boolean;
}

/** The part of an agreement report that one item already defines (κ and ρ need at least two). */
export type AgreementShares = Pick<AgreementReport, 'items' | 'exact' | 'withinOne' | 'passFail'>;

/**
 * Checks the inputs and computes what agreementReport and agreementShares have in common: the
 * scale, the per-item majority score, and the shares (exact, within one, pass/fail).
 */
function agreementBasis(
  name: string,
  judge: readonly number[],
  humanRatings: readonly (readonly number[])[],
  options: AgreementOptions,
): { scale: readonly number[]; majority: number[]; shares: AgreementShares } {
  requireSameLength(judge, humanRatings, `${name} (judge scores vs items with human ratings)`);
  if (judge.length === 0) throw new RangeError(`${name}: no items`);
  humanRatings.forEach((r, i) => {
    if (r.length === 0) throw new RangeError(`${name}: item ${i} has no human ratings`);
  });
  const scale = options.scale ?? (categoriesOf([...judge, ...humanRatings.flat()]) as number[]);
  const threshold = options.passThreshold ?? (scale[0] + scale[scale.length - 1]) / 2;
  const positive = options.positive ?? 'fail';
  const majority = humanRatings.map((r) => majorityScore(r));

  const judgePass = options.judgePass ?? judge.map((s) => s >= threshold);
  const humanPassVotes = options.humanPass ?? humanRatings.map((r) => r.map((s) => s >= threshold));
  requireSameLength(judgePass, judge, `${name} judgePass`);
  requireSameLength(humanPassVotes, judge, `${name} humanPass`);
  // majority vote on pass/fail; a tie counts as fail (the conservative reading for a test bench)
  const humanPass = humanPassVotes.map((votes) => votes.filter(Boolean).length * 2 > votes.length);
  const asPositive = (pass: boolean) => (positive === 'pass' ? pass : !pass);
  const passFail = precisionRecallF1(judgePass.map(asPositive), humanPass.map(asPositive));
  return {
    scale,
    majority,
    shares: {
      items: judge.length,
      exact: exactAgreement(judge, majority),
      withinOne: withinOneAgreement(judge, majority),
      passFail: { ...passFail, positive },
    },
  };
}

/**
 * The shares of agreementReport, which are defined from a single item on: exact and within-one
 * agreement of the judge with the per-item majority score, and the judge's pass/fail against the
 * humans' majority vote. Same inputs and options as agreementReport.
 */
export function agreementShares(judge: readonly number[], humanRatings: readonly (readonly number[])[], options: AgreementOptions = {}): AgreementShares {
  return agreementBasis('agreementShares', judge, humanRatings, options).shares;
}

/**
 * Judge-vs-human agreement for one dimension, as in Negi et al.'s Table III.
 * `judge[i]` is the judge's score for item i; `humanRatings[i]` all human scores for item i.
 */
export function agreementReport(judge: readonly number[], humanRatings: readonly (readonly number[])[], options: AgreementOptions = {}): AgreementReport {
  const { scale, majority, shares } = agreementBasis('agreementReport', judge, humanRatings, options);
  const weights = options.weights ?? 'quadratic';
  const humanMean = humanRatings.map((r) => mean(r));

  const sameCount = humanRatings.every((r) => r.length === humanRatings[0].length);
  const raters = humanRatings[0].length;
  const humanLightsKappa =
    options.ratersAligned && sameCount && raters >= 2
      ? lightsKappa(Array.from({ length: raters }, (_, r) => humanRatings.map((item) => item[r])), { weights, categories: scale })
      : null;
  const humanFleissKappa = sameCount && raters >= 2 ? fleissKappa(categoryCounts(humanRatings, scale)) : null;
  const pairMean = options.ratersAligned && sameCount ? judgeRaterPairMean(judge, humanRatings, { weights, categories: scale }) : null;
  const humanPairMean = options.ratersAligned && sameCount && raters >= 2 ? raterPairMean(humanRatings, { weights, categories: scale }) : null;

  return {
    items: shares.items,
    kappa: cohensKappa(judge, majority, { weights, categories: scale }),
    kappaWeights: weights,
    spearman: spearman(judge, humanMean),
    exact: shares.exact,
    withinOne: shares.withinOne,
    passFail: shares.passFail,
    humanLightsKappa,
    humanFleissKappa,
    pairMean,
    humanPairMean,
  };
}

/**
 * Mean over the judge–rater pairs of κ, ρ and exact agreement (`humanRatings[i][r]` is rater r on
 * item i, the same rater on every item). A pair whose κ or ρ is undefined (a constant series)
 * drops out of that mean only; NaN when no pair defines it.
 */
export function judgeRaterPairMean(
  judge: readonly number[],
  humanRatings: readonly (readonly number[])[],
  kappaOptions: { weights: KappaWeights; categories: readonly number[] },
): PairMeans {
  const raters = humanRatings[0]?.length ?? 0;
  const pairs = Array.from({ length: raters }, (_, r) => [judge, humanRatings.map((item) => item[r])] as const);
  return meanOverPairs(pairs, kappaOptions);
}

/** Mean over the rater pairs (r < s) of κ, ρ and exact agreement; `humanRatings[i][r]` is rater r on item i. NaN where no pair defines it. */
export function raterPairMean(
  humanRatings: readonly (readonly number[])[],
  kappaOptions: { weights: KappaWeights; categories: readonly number[] },
): PairMeans {
  const raters = humanRatings[0]?.length ?? 0;
  const column = (r: number) => humanRatings.map((item) => item[r]);
  const pairs: Array<readonly [readonly number[], readonly number[]]> = [];
  for (let r = 0; r < raters; r++) for (let q = r + 1; q < raters; q++) pairs.push([column(r), column(q)]);
  return meanOverPairs(pairs, kappaOptions);
}

type PairMeans = { kappa: number; spearman: number; exact: number; pairs: number };

/** κ, ρ and exact agreement averaged over the given pairs of series; an undefined κ or ρ drops out of its mean only. */
function meanOverPairs(
  pairs: ReadonlyArray<readonly [readonly number[], readonly number[]]>,
  kappaOptions: { weights: KappaWeights; categories: readonly number[] },
): PairMeans {
  const kappas: number[] = [];
  const rhos: number[] = [];
  const exacts: number[] = [];
  for (const [a, b] of pairs) {
    const k = cohensKappa(a, b, kappaOptions);
    const rho = spearman(a, b);
    if (Number.isFinite(k)) kappas.push(k);
    if (Number.isFinite(rho)) rhos.push(rho);
    exacts.push(exactAgreement(a, b));
  }
  const meanOrNaN = (xs: number[]) => (xs.length ? mean(xs) : Number.NaN);
  return { kappa: meanOrNaN(kappas), spearman: meanOrNaN(rhos), exact: meanOrNaN(exacts), pairs: pairs.length };
}

/** Negi et al.'s single RQ0 figures: each statistic averaged over the dimensions that define it (null when none does). */
export interface AgreementOverDimensions {
  dimensions: number;
  /** the judge: mean over dimensions of the judge–rater pair means (the paper's κ, ρ, exact) */
  judgePairMean: { kappa: number | null; spearman: number | null; exact: number | null } | null;
  /** the judge against the raters' majority score (the lab's reading), mean κ over dimensions */
  judgeVsMajorityKappa: number | null;
  /** human–human: mean over dimensions of the rater-pair means (κ is Light's) */
  humanPairMean: { kappa: number | null; spearman: number | null; exact: number | null } | null;
  /** human–human: mean over dimensions of Fleiss' κ */
  humanFleissKappa: number | null;
}

/** The mean of each agreement statistic over the dimensions' reports (the paper reports "the mean across all 12 pairs and four dimensions"). */
export function agreementOverDimensions(reports: readonly AgreementReport[]): AgreementOverDimensions {
  const meanOf = (xs: readonly (number | null | undefined)[]) => {
    const defined = xs.filter((x): x is number => x !== null && x !== undefined && Number.isFinite(x));
    return defined.length ? mean(defined) : null;
  };
  const triple = (rows: readonly ({ kappa: number; spearman: number; exact: number } | null)[]) =>
    rows.some((r) => r !== null) ? { kappa: meanOf(rows.map((r) => r?.kappa)), spearman: meanOf(rows.map((r) => r?.spearman)), exact: meanOf(rows.map((r) => r?.exact)) } : null;
  return {
    dimensions: reports.length,
    judgePairMean: triple(reports.map((r) => r.pairMean)),
    judgeVsMajorityKappa: meanOf(reports.map((r) => r.kappa)),
    humanPairMean: triple(reports.map((r) => r.humanPairMean)),
    humanFleissKappa: meanOf(reports.map((r) => r.humanFleissKappa)),
  };
}
