import { describe, expect, it } from 'vitest';
import { binomial, passAtKUnbiased, passHatKUnbiased, reliability } from '../../src/analysis/reliability.ts';

describe('pass^k and pass@k (src/analysis/reliability.ts)', () => {
  it('binomial coefficients', () => {
    expect(binomial(10, 5)).toBe(252);
    expect(binomial(7, 5)).toBe(21);
    expect(binomial(3, 5)).toBe(0);
    expect(binomial(5, 0)).toBe(1);
    expect(binomial(100, 50)).toBeCloseTo(1.0089134454556417e29, -15);
  });

  it('the unbiased estimator: worked examples', () => {
    // n = 10 trials, c = 3 successes, k = 5: pass@5 = 1 − C(7,5)/C(10,5) = 1 − 21/252; pass^5 = C(3,5)/C(10,5) = 0
    expect(passAtKUnbiased(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 12);
    expect(passHatKUnbiased(10, 3, 5)).toBe(0);
    // pass^2 = C(3,2)/C(10,2) = 3/45
    expect(passHatKUnbiased(10, 3, 2)).toBeCloseTo(1 / 15, 12);
    // k = 1: both are c/n
    expect(passAtKUnbiased(4, 1, 1)).toBeCloseTo(0.25, 12);
    expect(passHatKUnbiased(4, 1, 1)).toBeCloseTo(0.25, 12);
    // k = n: pass^n is "all succeeded", pass@n "any succeeded"
    expect(passHatKUnbiased(3, 2, 3)).toBe(0);
    expect(passAtKUnbiased(3, 1, 3)).toBe(1);
    expect(() => passAtKUnbiased(3, 4, 1)).toThrow(/0 ≤ c ≤ n/);
    expect(() => passHatKUnbiased(3, 1, 4)).toThrow(/1 ≤ k ≤ n/);
  });

  it('averages over items, both conventions, k = 1 … n (worked example)', () => {
    const r = reliability(
      new Map([
        ['A', [true, false, true]],
        ['B', [false, false, false]],
        ['C', [true, true, true]],
      ]),
    );
    expect(r).toMatchObject({ items: 3, trials: 9, minTrials: 3, maxTrials: 3 });
    const [k1, k2, k3] = r.byK;
    // k = 1: unbiased = mean(c/n) = (2/3 + 0 + 1)/3; first trial: A, C pass
    expect(k1.passHatK.unbiased).toBeCloseTo(5 / 9, 12);
    expect(k1.passAtK.unbiased).toBeCloseTo(5 / 9, 12);
    expect(k1.passHatK.firstK).toBeCloseTo(2 / 3, 12);
    expect(k1.passAtK.firstK).toBeCloseTo(2 / 3, 12);
    // k = 2: pass^2 unbiased A = C(2,2)/C(3,2) = 1/3, C = 1 → 4/9; first two trials: only C passes both
    expect(k2.passHatK.unbiased).toBeCloseTo(4 / 9, 12);
    expect(k2.passHatK.firstK).toBeCloseTo(1 / 3, 12);
    // pass@2 unbiased A = 1 − C(1,2)/C(3,2) = 1, B = 0, C = 1
    expect(k2.passAtK.unbiased).toBeCloseTo(2 / 3, 12);
    expect(k2.passAtK.firstK).toBeCloseTo(2 / 3, 12);
    // k = n: both conventions agree
    expect(k3.passHatK).toEqual({ unbiased: 1 / 3, firstK: 1 / 3 });
    expect(k3.passAtK.unbiased).toBeCloseTo(2 / 3, 12);
    expect(k3.passAtK.firstK).toBeCloseTo(2 / 3, 12);
  });

  it('the first-k convention depends on trial order, the unbiased one does not', () => {
    const early = reliability([[false, true, true]]).byK[1];
    const late = reliability([[true, true, false]]).byK[1];
    expect(early.passHatK.unbiased).toBeCloseTo(late.passHatK.unbiased, 12);
    expect(early.passHatK.firstK).toBe(0);
    expect(late.passHatK.firstK).toBe(1);
  });

  it('items with fewer trials count only up to their trial count', () => {
    const r = reliability([[true], [true, false]]);
    expect(r.byK.map((row) => row.items)).toEqual([2, 1]);
    expect(r.byK[1].passAtK.firstK).toBe(1);
    expect(r.byK[1].passHatK.firstK).toBe(0);
    expect(reliability([])).toEqual({ items: 0, trials: 0, minTrials: 0, maxTrials: 0, byK: [], rdi: null });
  });

  it('CAR-bench worked example: failure first, RDI', () => {
    // task A: 3/3, task B: 2/3 with the failure first, task C: 0/3
    const r = reliability([
      [true, true, true],
      [false, true, true],
      [false, false, false],
    ]);
    const [k1, k2, k3] = r.byK;
    // unbiased pass^1 = 5/9, pass^2 = (1 + C(2,2)/C(3,2) + 0)/3 = 4/9, pass^3 = 1/3; pass@2 = 2/3
    expect([k1.passHatK.unbiased, k2.passHatK.unbiased, k3.passHatK.unbiased].map((x) => x.toFixed(12))).toEqual([5 / 9, 4 / 9, 1 / 3].map((x) => x.toFixed(12)));
    expect(k2.passAtK.unbiased).toBeCloseTo(2 / 3, 12);
    // first-k: B fails its first trial, so pass^1 = pass^2 = 1/3; pass@1 = 1/3, pass@2 = 2/3
    expect([k1.passHatK.firstK, k2.passHatK.firstK, k3.passHatK.firstK]).toEqual([1 / 3, 1 / 3, 1 / 3]);
    expect([k1.passAtK.firstK, k2.passAtK.firstK, k3.passAtK.firstK]).toEqual([1 / 3, 2 / 3, 2 / 3]);
    // RDI = mean(pass@k − pass^k) over k = 1..3 (first-k) = (0 + 1/3 + 1/3)/3
    expect(r.rdi).toBeCloseTo(2 / 9, 12);
    // an item that always or never succeeds does not decay
    expect(reliability([[true, true], [false, false]]).rdi).toBe(0);
  });

  it('τ-bench example: c = 4 of n = 8, k = 2', () => {
    const k2 = reliability([[true, true, true, true, false, false, false, false]]).byK[1];
    expect(k2.passHatK.unbiased).toBeCloseTo(6 / 28, 12);
    expect(k2.passAtK.unbiased).toBeCloseTo(1 - 6 / 28, 12);
  });
});
