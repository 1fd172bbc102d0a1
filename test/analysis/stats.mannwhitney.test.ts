import { describe, expect, it } from 'vitest';
import { a12Magnitude, mannWhitneyU, normalSf, varghaDelaneyA12 } from '../../src/domain/stats.ts';

describe('mannWhitneyU', () => {
  // SciPy docs, scipy.stats.mannwhitneyu example (male/female ages): U1 = 17, exact p = 0.1111…, asymptotic p = 0.11134688653314041
  const males = [19, 22, 16, 29, 24];
  const females = [20, 11, 17, 12];

  it('reproduces the SciPy documentation example exactly', () => {
    const r = mannWhitneyU(males, females);
    expect(r.method).toBe('exact');
    expect(r.u).toBe(17);
    expect(r.p).toBeCloseTo(1 / 9, 12);
  });

  it('reproduces the SciPy documentation example with the normal approximation', () => {
    const r = mannWhitneyU(males, females, { method: 'normal' });
    expect(r.u).toBe(17);
    expect(Math.abs(r.p - 0.11134688653314041)).toBeLessThan(1e-12);
    expect(r.z).toBeGreaterThan(0);
  });

  it('reports U for sample a (swapping the samples gives n1·n2 − U and the same p)', () => {
    const r = mannWhitneyU(females, males);
    expect(r.u).toBe(3);
    expect(r.p).toBeCloseTo(1 / 9, 12);
  });

  it('uses tie-corrected variance and continuity correction when there are ties (reference: scipy 1.17.1)', () => {
    const r = mannWhitneyU([1, 2, 2, 3, 3, 3, 4, 5], [2, 3, 4, 4, 5, 5, 6]);
    expect(r.method).toBe('normal');
    expect(r.u).toBe(13.5);
    expect(Math.abs(r.p - 0.0983349877585014)).toBeLessThan(1e-12);
    expect(r.z).toBeLessThan(0);
  });

  it('uses the normal approximation for larger samples (reference: scipy 1.17.1)', () => {
    const a = Array.from({ length: 25 }, (_, i) => i + 1);
    const b = Array.from({ length: 30 }, (_, i) => i + 10.5);
    const r = mannWhitneyU(a, b);
    expect(r.method).toBe('normal');
    expect(r.u).toBe(120);
    expect(Math.abs(r.p - 1.693893136602701e-5) / 1.693893136602701e-5).toBeLessThan(1e-9);
  });

  it('computes the exact distribution for a second small sample (reference: scipy 1.17.1)', () => {
    const r = mannWhitneyU([1.5, 3.1, 4.7, 2.2, 8.9, 6.1], [5.5, 7.2, 9.3, 10.1, 4.4, 6.6, 7.9]);
    expect(r.method).toBe('exact');
    expect(r.u).toBe(8);
    expect(Math.abs(r.p - 0.07342657342657342)).toBeLessThan(1e-12);
  });

  it('gives p = 1 when all values are tied and refuses exact with ties', () => {
    expect(mannWhitneyU([3, 3, 3], [3, 3]).p).toBe(1);
    expect(() => mannWhitneyU([1, 2, 2], [2, 3], { method: 'exact' })).toThrow(/ties/);
    expect(() => mannWhitneyU([], [1])).toThrow(/non-empty/);
  });

  it('normal tail matches known quantiles', () => {
    expect(Math.abs(normalSf(1.959963984540054) - 0.025)).toBeLessThan(1e-15);
    expect(Math.abs(normalSf(5) - 2.866515718791939e-7) / 2.866515718791939e-7).toBeLessThan(1e-12);
    expect(Math.abs(normalSf(-1) - 0.8413447460685429)).toBeLessThan(1e-15);
  });
});

describe('varghaDelaneyA12', () => {
  it('equals the pair-count definition P(X>Y) + ½P(X=Y)', () => {
    const a = [1, 2, 2, 3, 3, 3, 4, 5];
    const b = [2, 3, 4, 4, 5, 5, 6];
    let wins = 0;
    for (const x of a) for (const y of b) wins += x > y ? 1 : x === y ? 0.5 : 0;
    expect(varghaDelaneyA12(a, b)).toBeCloseTo(wins / (a.length * b.length), 14);
    expect(varghaDelaneyA12(a, b)).toBeCloseTo(13.5 / 56, 14);
  });

  it('is U/(n1 n2) for the SciPy example, 1 for full dominance, 0.5 for identical samples', () => {
    expect(varghaDelaneyA12([19, 22, 16, 29, 24], [20, 11, 17, 12])).toBeCloseTo(17 / 20, 14);
    expect(varghaDelaneyA12([10, 11], [1, 2, 3])).toBe(1);
    expect(varghaDelaneyA12([1, 2, 3], [1, 2, 3])).toBe(0.5);
  });

  it('labels magnitudes with the Vargha–Delaney thresholds', () => {
    expect(a12Magnitude(0.55)).toBe('negligible');
    expect(a12Magnitude(0.6)).toBe('small');
    expect(a12Magnitude(0.3)).toBe('medium');
    expect(a12Magnitude(0.85)).toBe('large');
  });
});
