import type { Rng } from '../domain/rng.ts';

/** A symmetric n×n distance matrix, row-major (zero diagonal). */
export interface DistanceMatrix {
  readonly n: number;
  readonly data: Float32Array;
}

export function distanceAt(m: DistanceMatrix, i: number, j: number): number {
  return m.data[i * m.n + j];
}

export interface KMedoidsResult {
  /** indices of the medoids, in cluster order */
  medoids: number[];
  /** cluster of every point (index into medoids) */
  assignment: Int32Array;
  /** sum of the distances of every point to its medoid */
  cost: number;
  iterations: number;
}

function assign(m: DistanceMatrix, medoids: readonly number[], assignment: Int32Array): number {
  let cost = 0;
  for (let i = 0; i < m.n; i++) {
    let best = 0;
    let bestDistance = Infinity;
    const row = i * m.n;
    for (let c = 0; c < medoids.length; c++) {
      const d = m.data[row + medoids[c]];
      if (d < bestDistance) {
        bestDistance = d;
        best = c;
      }
    }
    assignment[i] = best;
    cost += bestDistance;
  }
  return cost;
}

/** k-medoids++ seeding: the first medoid uniformly, each next one with probability ∝ distance² to the nearest chosen. */
function seedMedoids(m: DistanceMatrix, k: number, rng: Rng): number[] {
  const medoids = [Math.floor(rng.next() * m.n)];
  const nearest = new Float64Array(m.n).fill(Infinity);
  while (medoids.length < k) {
    const last = medoids[medoids.length - 1];
    let total = 0;
    for (let i = 0; i < m.n; i++) {
      nearest[i] = Math.min(nearest[i], distanceAt(m, i, last));
      total += nearest[i] * nearest[i];
    }
    let next = -1;
    if (total > 0) {
      let r = rng.next() * total;
      for (let i = 0; i < m.n && next < 0; i++) {
        r -= nearest[i] * nearest[i];
        if (r <= 0 && nearest[i] > 0) next = i;
      }
    }
    // all remaining points coincide with a medoid (or rounding ran past the end): take the first unchosen point
    if (next < 0 || medoids.includes(next)) next = Array.from({ length: m.n }, (_, i) => i).find((i) => !medoids.includes(i))!;
    medoids.push(next);
  }
  return medoids;
}

/** Nearest and second-nearest medoid of every point (the state FasterPAM updates after a swap). */
function nearestTwo(m: DistanceMatrix, medoids: readonly number[], nearest: Int32Array, dNearest: Float64Array, dSecond: Float64Array): void {
  for (let o = 0; o < m.n; o++) {
    let best = -1;
    let d1 = Infinity;
    let d2 = Infinity;
    const row = o * m.n;
    for (let c = 0; c < medoids.length; c++) {
      const d = m.data[row + medoids[c]];
      if (d < d1) {
        d2 = d1;
        d1 = d;
        best = c;
      } else if (d < d2) d2 = d;
    }
    nearest[o] = best;
    dNearest[o] = d1;
    dSecond[o] = d2;
  }
}

/**
 * k-medoids minimising the total distance to the medoids: PAM's SWAP phase in its FasterPAM form
 * (Schubert & Rousseeuw 2021), from a seeded k-medoids++ start (so repetitions with different
 * seeds start differently). For a candidate c, the change of the total distance for swapping it
 * with every medoid i is found in one pass over the points:
 *   ΔTD_i = Σ_o min(0, d(o,c) − dn(o)) + Σ_{o: nearest(o) = i} [min(ds(o), d(o,c)) − dn(o) − min(0, d(o,c) − dn(o))]
 * (dn, ds: distance to the nearest and second-nearest medoid); the best improving swap of each
 * candidate is applied at once, and the loop ends when a full pass over the non-medoids improves nothing
 * by more than `tolerance` of the current total distance (swaps that gain less are rounding noise on
 * text embeddings, and each costs a full pass).
 */
export function kMedoids(m: DistanceMatrix, k: number, rng: Rng, options: { maxPasses?: number; tolerance?: number } = {}): KMedoidsResult {
  const maxPasses = options.maxPasses ?? 100;
  const tolerance = options.tolerance ?? 1e-4;
  if (!Number.isInteger(k) || k < 1 || k > m.n) throw new Error(`kMedoids: k must be an integer in 1..${m.n} (got ${k})`);
  const medoids = seedMedoids(m, k, rng);
  const isMedoid = new Uint8Array(m.n);
  for (const x of medoids) isMedoid[x] = 1;
  const nearest = new Int32Array(m.n);
  const dNearest = new Float64Array(m.n);
  const dSecond = new Float64Array(m.n);
  nearestTwo(m, medoids, nearest, dNearest, dSecond);
  let total = dNearest.reduce((s, d) => s + d, 0);
  const delta = new Float64Array(k);
  const { n, data } = m;
  let iterations = 0;
  let lastSwap = -1;
  for (let pass = 0; pass < maxPasses; pass++) {
    iterations++;
    let swapped = false;
    for (let c = 0; c < n; c++) {
      if (c === lastSwap && pass > 0 && !swapped) break; // a full cycle since the last swap found nothing
      if (isMedoid[c]) continue;
      delta.fill(0);
      let shared = 0;
      const row = c * n;
      for (let o = 0; o < n; o++) {
        const doc = data[row + o];
        const dn = dNearest[o];
        const ds = dSecond[o];
        // gain = min(0, doc − dn); the medoid's own term = min(ds, doc) − dn − gain
        if (doc < dn) {
          shared += doc - dn;
          delta[nearest[o]] += dn - doc + (doc < ds ? doc : ds) - dn;
        } else {
          delta[nearest[o]] += (doc < ds ? doc : ds) - dn;
        }
      }
      let bestI = 0;
      for (let i = 1; i < k; i++) if (delta[i] < delta[bestI]) bestI = i;
      if (shared + delta[bestI] < -Math.max(1e-9, tolerance * total)) {
        isMedoid[medoids[bestI]] = 0;
        medoids[bestI] = c;
        isMedoid[c] = 1;
        nearestTwo(m, medoids, nearest, dNearest, dSecond);
        total = dNearest.reduce((s, d) => s + d, 0);
        swapped = true;
        lastSwap = c;
      }
    }
    if (!swapped) break;
  }
  const assignment = new Int32Array(m.n);
  const cost = assign(m, medoids, assignment);
  return { medoids, assignment, cost, iterations };
}

/** Sum of distances of every point to its nearest medoid (the k-medoids objective). */
export function medoidCost(m: DistanceMatrix, medoids: readonly number[]): number {
  return assign(m, medoids, new Int32Array(m.n));
}

/**
 * The mean silhouette (Rousseeuw 1987) of a clustering: for point i in cluster A, a(i) = mean
 * distance to the other members of A, b(i) = the least mean distance to the members of another
 * cluster, s(i) = (b − a) / max(a, b), and s(i) = 0 for a point alone in its cluster (as
 * scikit-learn's silhouette_score). Needs at least two clusters.
 */
export function silhouetteScore(m: DistanceMatrix, assignment: Int32Array, k: number): number {
  if (k < 2) throw new Error('silhouetteScore: needs at least two clusters');
  const sizes = new Float64Array(k);
  for (let i = 0; i < m.n; i++) sizes[assignment[i]]++;
  const sums = new Float64Array(k);
  let total = 0;
  for (let i = 0; i < m.n; i++) {
    sums.fill(0);
    const row = i * m.n;
    for (let j = 0; j < m.n; j++) sums[assignment[j]] += m.data[row + j];
    const own = assignment[i];
    if (sizes[own] <= 1) continue;
    const a = sums[own] / (sizes[own] - 1);
    let b = Infinity;
    for (let c = 0; c < k; c++) if (c !== own && sizes[c] > 0) b = Math.min(b, sums[c] / sizes[c]);
    const denominator = Math.max(a, b);
    total += denominator > 0 && Number.isFinite(b) ? (b - a) / denominator : 0;
  }
  return total / m.n;
}
