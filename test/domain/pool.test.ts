import { describe, expect, it } from 'vitest';
import { runPool } from '../../src/domain/pool.ts';
import { createRng } from '../../src/domain/rng.ts';

/** Lets the event loop run the other workers: a deterministic yield, not a timer. */
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the worker pool', () => {
  it('takes every item once, in index order, with at most `concurrency` in flight', async () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const taken: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const random = createRng(7).next;
    await runPool(
      items,
      async (item, index) => {
        expect(item).toBe(index);
        taken.push(index);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        for (let k = Math.floor(random() * 4); k >= 0; k--) await yieldTurn();
        inFlight--;
      },
      { concurrency: 4 },
    );
    expect(taken).toEqual(items);
    expect(maxInFlight).toBe(4);
  });

  it('stops taking items when beforeTake says so; items in flight finish', async () => {
    const finished: number[] = [];
    let asked = 0;
    await runPool(
      Array.from({ length: 20 }, (_, i) => i),
      async (item) => {
        await yieldTurn();
        finished.push(item);
      },
      { concurrency: 3, beforeTake: async () => ++asked <= 5 },
    );
    expect(finished.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
  });

  it('rejects with the first error and validates the concurrency', async () => {
    await expect(runPool([1, 2, 3], async (item) => {
      if (item === 2) throw new Error('boom at 2');
    }, { concurrency: 2 })).rejects.toThrow('boom at 2');
    await expect(runPool([1], async () => undefined, { concurrency: 0 })).rejects.toThrow(/concurrency must be a positive integer, got 0/);
    let calls = 0;
    await runPool([], async () => void calls++, { concurrency: 8 });
    expect(calls).toBe(0);
  });
});
