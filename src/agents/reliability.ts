import { z } from 'zod';

/**
 * Reliability over repeated trials (scoring.md §4), generic: the input is, per item (a task, a conversation plan),
 * the list of its trial outcomes in trial order. Both CAR-bench conventions, for k = 1..n:
 * - unbiased (tau-bench estimator, run.py): pass^k = mean_t C(c_t,k)/C(n_t,k); pass@k = mean_t 1 − C(n_t−c_t,k)/C(n_t,k);
 * - first-k (analyze_results_v2.py, the leaderboard): pass^k = share of items whose trials 0..k−1 all pass,
 *   pass@k = share with at least one pass among trials 0..k−1; only items with ≥ k trials count.
 * RDI = mean over k = 1..K of (pass@k − pass^k) with the first-k convention.
 */
export const ReliabilityPointSchema = z.object({
  k: z.number().int().positive(),
  items: z.number().int().nonnegative(),
  passHatK: z.number().min(0).max(1),
  passAtK: z.number().min(0).max(1),
});
export const ReliabilitySchema = z.object({
  items: z.number().int().nonnegative(),
  maxTrials: z.number().int().nonnegative(),
  unbiased: z.array(ReliabilityPointSchema),
  firstK: z.array(ReliabilityPointSchema),
  rdi: z.number().nullable(),
});
export type Reliability = z.infer<typeof ReliabilitySchema>;

/** C(n, k) as a float (exact for the small n of trial counts); 0 when k > n. */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

export function reliability(outcomes: ReadonlyArray<readonly boolean[]>): Reliability {
  const maxTrials = outcomes.reduce((m, o) => Math.max(m, o.length), 0);
  const unbiased: Reliability['unbiased'] = [];
  const firstK: Reliability['firstK'] = [];
  for (let k = 1; k <= maxTrials; k++) {
    const eligible = outcomes.filter((o) => o.length >= k);
    if (!eligible.length) continue;
    let hat = 0;
    let at = 0;
    let fHat = 0;
    let fAt = 0;
    for (const o of eligible) {
      const n = o.length;
      const c = o.filter(Boolean).length;
      const total = binomial(n, k);
      hat += binomial(c, k) / total;
      at += 1 - binomial(n - c, k) / total;
      const first = o.slice(0, k);
      if (first.every(Boolean)) fHat++;
      if (first.some(Boolean)) fAt++;
    }
    unbiased.push({ k, items: eligible.length, passHatK: hat / eligible.length, passAtK: at / eligible.length });
    firstK.push({ k, items: eligible.length, passHatK: fHat / eligible.length, passAtK: fAt / eligible.length });
  }
  const rdi = firstK.length ? firstK.reduce((s, p) => s + (p.passAtK - p.passHatK), 0) / firstK.length : null;
  return { items: outcomes.length, maxTrials, unbiased, firstK, rdi };
}
