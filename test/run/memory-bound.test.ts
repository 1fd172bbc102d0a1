import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * Issue #37 / #34: a run's memory is bounded by how many conversations it runs at once, not by how many it runs.
 * Counted, not timed: a child (`node --expose-gc`, test/helpers/retained-run.ts) watches every spec, turn record and
 * result the run hands out through WeakRefs and counts, after a full garbage collection, how many are still
 * reachable half-way through the run and after it. A plan held whole, a transcript kept by a listener, a cache
 * growing with the run would show here as counts that grow with the run.
 */
/** planned: the items as the kind planned them; spec, turn, result: what the run's events handed out */
type Counts = Record<'planned' | 'spec' | 'turn' | 'result', number>;

interface Retained {
  done: number;
  watched: Counts;
  maxTurns: number;
  atMiddle: Counts;
  afterRun: Counts;
}

const AT_ONCE = 4;

async function retainedRun(conversations: number): Promise<Retained> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/helpers/retained-run.ts', String(conversations), String(AT_ONCE)], { encoding: 'utf8' });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Retained;
}

describe('memory is bounded by concurrency, not by the run', () => {
  // two child runs of the offline campaign (about 1,700 turns through tsx): slow on a loaded machine, not timed
  it('holds at most the conversations in flight, the same at 20 and at 200 conversations', { timeout: 300_000 }, async () => {
    const [small, large] = await Promise.all([retainedRun(20), retainedRun(200)]);
    for (const [run, size] of [[small, 20], [large, 200]] as const) {
      expect(run.done).toBe(size);
      // every object was watched: the counts below are of something
      expect(run.watched.planned).toBe(size);
      expect(run.watched.spec).toBe(size);
      expect(run.watched.result).toBe(size);
      // half-way: the plan let go once stored, the specs and turns of the conversations in flight, no finished result
      expect(run.atMiddle.planned).toBe(0);
      expect(run.atMiddle.spec).toBeLessThanOrEqual(AT_ONCE);
      expect(run.atMiddle.turn).toBeLessThanOrEqual(AT_ONCE * run.maxTurns);
      expect(run.atMiddle.result).toBe(0);
      // after the run nothing of it is kept
      expect(run.afterRun).toEqual({ planned: 0, spec: 0, turn: 0, result: 0 });
    }
    // the bound does not move with the run: ten times the conversations, no more held half-way
    expect(large.atMiddle.spec).toBeLessThanOrEqual(AT_ONCE);
    expect(large.watched.turn).toBeGreaterThan(9 * small.watched.turn);
  });
});
