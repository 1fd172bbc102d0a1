import { describe, expect, it } from 'vitest';
import { binomial, reliability } from '../../src/agents/reliability.ts';

describe('pass^k / pass@k', () => {
  it('binomial coefficients', () => {
    expect([binomial(5, 2), binomial(3, 3), binomial(2, 3), binomial(4, 0)]).toEqual([10, 1, 0, 1]);
  });

  it('worked example: unbiased estimator vs first-k trials', () => {
    // task A: 3/3, task B: 2/3 with the failure first, task C: 0/3
    const r = reliability([
      [true, true, true],
      [false, true, true],
      [false, false, false],
    ]);
    const u = Object.fromEntries(r.unbiased.map((p) => [p.k, p]));
    // pass^1 = (1 + 2/3 + 0)/3 = 5/9 ; pass^2 = (1 + C(2,2)/C(3,2) + 0)/3 = (1 + 1/3)/3 = 4/9 ; pass^3 = 1/3
    expect(u[1].passHatK).toBeCloseTo(5 / 9, 12);
    expect(u[2].passHatK).toBeCloseTo(4 / 9, 12);
    expect(u[3].passHatK).toBeCloseTo(1 / 3, 12);
    // pass@2 = (1 + (1 − C(1,2)/C(3,2)) + 0)/3 = 2/3
    expect(u[2].passAtK).toBeCloseTo(2 / 3, 12);
    const f = Object.fromEntries(r.firstK.map((p) => [p.k, p]));
    // first-k: B fails its first trial, so pass^1 = pass^2 = 1/3; pass@1 = 1/3, pass@2 = 2/3
    expect([f[1].passHatK, f[2].passHatK, f[3].passHatK]).toEqual([1 / 3, 1 / 3, 1 / 3]);
    expect([f[1].passAtK, f[2].passAtK, f[3].passAtK]).toEqual([1 / 3, 2 / 3, 2 / 3]);
    // with n = k the conventions agree
    expect(u[3].passHatK).toBeCloseTo(f[3].passHatK, 12);
    // RDI = mean(pass@k − pass^k) over k = 1..3 (first-k) = (0 + 1/3 + 1/3)/3
    expect(r.rdi).toBeCloseTo(2 / 9, 12);
  });

  it('tau-bench example: c = 4 of n = 8, k = 2', () => {
    const r = reliability([[true, true, true, true, false, false, false, false]]);
    expect(r.unbiased[1].passHatK).toBeCloseTo(6 / 28, 12);
    expect(r.unbiased[1].passAtK).toBeCloseTo(1 - 6 / 28, 12);
  });

  it('items with fewer trials only count up to their n', () => {
    const r = reliability([[true], [true, false]]);
    expect(r.unbiased.map((p) => p.items)).toEqual([2, 1]);
    expect(r.firstK[1]).toMatchObject({ k: 2, items: 1, passHatK: 0, passAtK: 1 });
    expect(reliability([]).unbiased).toEqual([]);
  });
});
