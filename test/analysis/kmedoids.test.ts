import { describe, expect, it } from 'vitest';
import { kMedoids, medoidCost, silhouetteScore, type DistanceMatrix } from '../../src/analysis/kmedoids.ts';
import { pcaProjection, toSparse } from '../../src/analysis/projection.ts';
import { createRng } from '../../src/domain/rng.ts';

function euclidean(points: readonly number[][]): DistanceMatrix {
  const n = points.length;
  const data = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) data[i * n + j] = Math.hypot(...points[i].map((x, d) => x - points[j][d]));
  return { n, data };
}

/** The reference: the optimal k-medoids cost by enumerating every k-subset of medoids. */
function bruteForceOptimum(m: DistanceMatrix, k: number): { cost: number; medoids: number[] } {
  let best = { cost: Infinity, medoids: [] as number[] };
  const choose = (start: number, chosen: number[]) => {
    if (chosen.length === k) {
      const cost = medoidCost(m, chosen);
      if (cost < best.cost - 1e-9) best = { cost, medoids: [...chosen] };
      return;
    }
    for (let i = start; i < m.n; i++) choose(i + 1, [...chosen, i]);
  };
  choose(0, []);
  return best;
}

// a fixed data set: three well-separated groups of 2-D points (12 points) and one straggler
const POINTS = [
  [0, 0], [0.4, 0.1], [0.2, 0.5], [-0.3, 0.2],
  [5, 5], [5.5, 4.8], [4.7, 5.3], [5.2, 5.6],
  [10, 0], [10.4, 0.3], [9.6, -0.2], [10.1, -0.6],
  [2.5, 2.4],
];

describe('k-medoids and the silhouette against reference computations on a fixed data set', () => {
  it('reaches the brute-force optimal medoids for k = 2, 3, 4 from every one of 10 seeds', () => {
    const m = euclidean(POINTS);
    for (const k of [2, 3, 4]) {
      const reference = bruteForceOptimum(m, k);
      for (let seed = 1; seed <= 10; seed++) {
        const result = kMedoids(m, k, createRng(seed));
        expect(result.cost).toBeCloseTo(reference.cost, 5);
        expect([...result.medoids].sort((a, b) => a - b)).toEqual(reference.medoids);
      }
    }
  });

  it('silhouette equals the hand computation (Rousseeuw 1987; a singleton scores 0, as scikit-learn)', () => {
    // points 0, 1, 4, 6 in clusters {0,1} {4,6}: s = 0.8, 0.75, 1.5/3.5, 3.5/5.5
    const line = euclidean([[0], [1], [4], [6]]);
    const expected = (0.8 + 0.75 + 1.5 / 3.5 + 3.5 / 5.5) / 4;
    expect(silhouetteScore(line, Int32Array.from([0, 0, 1, 1]), 2)).toBeCloseTo(expected, 6);
    // add 20 alone in a third cluster: its s is 0; the others' b may now be the singleton's distance
    const withSingleton = euclidean([[0], [1], [4], [6], [20]]);
    const s = [0.8, 0.75, 1.5 / 3.5, 3.5 / 5.5, 0];
    expect(silhouetteScore(withSingleton, Int32Array.from([0, 0, 1, 1, 2]), 3)).toBeCloseTo(s.reduce((a, b) => a + b) / 5, 6);
  });

  it('the silhouette is highest at the true number of groups (3) on the fixed set', () => {
    const m = euclidean(POINTS);
    const scores = [2, 3, 4, 5].map((k) => silhouetteScore(m, kMedoids(m, k, createRng(7)).assignment, k));
    expect(Math.max(...scores)).toBe(scores[1]);
  });

  it('rejects a k outside 1..n', () => {
    expect(() => kMedoids(euclidean([[0], [1]]), 3, createRng(1))).toThrow(/k must be an integer in 1\.\.2/);
  });

  it('PCA: points on a line project onto the first component with their spacing, and the second is ~0', () => {
    // x = t·(3,4)/5 + (1,1): the first component is the direction (3,4)/5
    const rows = [0, 1, 2, 5].map((t) => toSparse(Float32Array.from([1 + (3 * t) / 5, 1 + (4 * t) / 5, 0])));
    const projected = pcaProjection(rows, 3);
    const xs = projected.map((p) => p.x);
    expect(xs[1] - xs[0]).toBeCloseTo(xs[2] - xs[1], 5);
    expect(Math.abs(xs[3] - xs[0])).toBeCloseTo(5, 5);
    for (const p of projected) expect(Math.abs(p.y)).toBeLessThan(1e-5);
  });
});
