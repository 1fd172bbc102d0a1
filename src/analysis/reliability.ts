import { z } from 'zod';

/**
 * Reliability over repeated trials: pass^k (all k trials of an item succeed) and pass@k (at least
 * one does), averaged over items, for k = 1 … n. Generic: an item is anything tried several times
 * (a dialogue conversation plan run `repeats` times, a tool task run in several trials), given as
 * its list of trial outcomes in trial order.
 *
 * Two conventions, both reported:
 * - unbiased: from c successes of n trials, the estimator of drawing k trials without replacement:
 *   pass@k = 1 − C(n−c, k) / C(n, k) (Chen et al. 2021), pass^k = C(c, k) / C(n, k) (τ-bench);
 * - firstK: the first k trials as run: pass@k = any of them succeeded, pass^k = all of them did.
 * An item counts at k only when it has at least k trials; `items` says how many counted.
 * The unbiased convention is τ-bench's run.py (CAR-bench uses it too); first-k is CAR-bench's
 * analyze_results_v2.py (its leaderboard). With n = k the two agree.
 *
 * RDI (CAR-bench's reliability-decay index) = mean over k = 1 … maxTrials of (pass@k − pass^k),
 * first-k convention: 0 when every item either always or never succeeds, larger when items are flaky.
 */

/** C(n, k) as a float; exact for the small n of repeated trials (n ≤ 100 in configs). */
export function binomial(n: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(k) || n < 0) throw new Error(`binomial: n and k must be integers with n ≥ 0 (got n=${n}, k=${k})`);
  if (k < 0 || k > n) return 0;
  let result = 1;
  const m = Math.min(k, n - k);
  for (let i = 1; i <= m; i++) result = (result * (n - m + i)) / i;
  return Math.round(result);
}

/** pass@k of one item by the unbiased estimator: 1 − C(n−c, k)/C(n, k). */
export function passAtKUnbiased(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  return 1 - binomial(n - c, k) / binomial(n, k);
}

/** pass^k of one item by the unbiased estimator: C(c, k)/C(n, k). */
export function passHatKUnbiased(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  return binomial(c, k) / binomial(n, k);
}

function checkCounts(n: number, c: number, k: number): void {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || c < 0 || c > n || k < 1 || k > n) {
    throw new Error(`pass^k/pass@k: need integers 0 ≤ c ≤ n and 1 ≤ k ≤ n (got n=${n}, c=${c}, k=${k})`);
  }
}

const share = z.number().min(0).max(1);

export const ReliabilityAtKSchema = z.object({
  k: z.number().int().min(1),
  /** items with at least k trials (the ones averaged) */
  items: z.number().int().min(0),
  passHatK: z.object({ unbiased: share, firstK: share }),
  passAtK: z.object({ unbiased: share, firstK: share }),
});
export type ReliabilityAtK = z.infer<typeof ReliabilityAtKSchema>;

export const ReliabilitySchema = z.object({
  /** items tried at least once */
  items: z.number().int().min(0),
  /** trials over all items */
  trials: z.number().int().min(0),
  /** trials per item: the fewest and the most */
  minTrials: z.number().int().min(0),
  maxTrials: z.number().int().min(0),
  /** k = 1 … maxTrials */
  byK: z.array(ReliabilityAtKSchema),
  /** mean of pass@k − pass^k (first-k) over k = 1 … maxTrials; null without trials */
  rdi: z.number().min(0).max(1).nullable(),
});
export type Reliability = z.infer<typeof ReliabilitySchema>;

/** pass^k and pass@k for k = 1 … the most trials of any item, averaged over the items with at least k trials. */
export function reliability(items: ReadonlyMap<string, readonly boolean[]> | Iterable<readonly boolean[]>): Reliability {
  const lists = [...(items instanceof Map ? items.values() : (items as Iterable<readonly boolean[]>))].filter((l) => l.length > 0);
  const lengths = lists.map((l) => l.length);
  const maxTrials = lengths.length ? Math.max(...lengths) : 0;
  const byK: ReliabilityAtK[] = [];
  for (let k = 1; k <= maxTrials; k++) {
    const counted = lists.filter((l) => l.length >= k);
    const mean = (f: (trials: readonly boolean[]) => number) => counted.reduce((s, l) => s + f(l), 0) / counted.length;
    const successes = (l: readonly boolean[]) => l.filter(Boolean).length;
    byK.push({
      k,
      items: counted.length,
      passHatK: { unbiased: mean((l) => passHatKUnbiased(l.length, successes(l), k)), firstK: mean((l) => (l.slice(0, k).every(Boolean) ? 1 : 0)) },
      passAtK: { unbiased: mean((l) => passAtKUnbiased(l.length, successes(l), k)), firstK: mean((l) => (l.slice(0, k).some(Boolean) ? 1 : 0)) },
    });
  }
  const rdi = byK.length ? byK.reduce((s, p) => s + (p.passAtK.firstK - p.passHatK.firstK), 0) / byK.length : null;
  return { items: lists.length, trials: lengths.reduce((s, n) => s + n, 0), minTrials: lengths.length ? Math.min(...lengths) : 0, maxTrials, byK, rdi };
}
