import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { runCampaign } from '../../src/kinds/dialogue/run.ts';
import { ResultStore } from '../../src/store/store.ts';

/**
 * Issue #26: the work a run does per turn must not grow with the run's size (a per-turn query over every
 * conversation so far, a progress event listing every finished conversation...). Counted, not timed: the
 * store statements executed, the rows they hand back, and the events emitted, per turn, in a small and a
 * four-times larger run of the same campaign.
 */
const statementProto = (() => {
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1'));
  probe.close();
  return proto as Record<'run' | 'get' | 'all' | 'iterate', (...args: unknown[]) => unknown>;
})();

afterEach(() => vi.restoreAllMocks());

async function countedRun(conversations: number) {
  const counts = { statements: 0, rowsRead: 0, events: 0, eventBytes: 0, turns: 0 };
  const original = { ...statementProto };
  vi.spyOn(statementProto, 'run').mockImplementation(function (this: unknown, ...args) {
    counts.statements++;
    return original.run.apply(this, args);
  });
  vi.spyOn(statementProto, 'get').mockImplementation(function (this: unknown, ...args) {
    counts.statements++;
    const row = original.get.apply(this, args);
    if (row !== undefined) counts.rowsRead++;
    return row;
  });
  vi.spyOn(statementProto, 'all').mockImplementation(function (this: unknown, ...args) {
    counts.statements++;
    const rows = original.all.apply(this, args) as unknown[];
    counts.rowsRead += rows.length;
    return rows;
  });
  vi.spyOn(statementProto, 'iterate').mockImplementation(function* (this: unknown, ...args) {
    counts.statements++;
    for (const row of original.iterate.apply(this, args) as Iterable<unknown>) {
      counts.rowsRead++;
      yield row;
    }
  });
  const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
  campaign.config.conversations = conversations;
  campaign.config.concurrency = 2;
  const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-per-turn-')), 'icabench.db'));
  try {
    const result = await runCampaign(campaign, {
      store,
      onEvent: (event) => {
        counts.events++;
        counts.eventBytes += JSON.stringify(event).length;
        if (event.type === 'turn') counts.turns++;
      },
    });
    expect(result.done).toBe(conversations);
  } finally {
    store.close();
    vi.restoreAllMocks();
  }
  return counts;
}

describe('per-turn work does not grow with the run', () => {
  it('store statements, rows read and events per turn stay flat when the run is four times larger', async () => {
    const small = await countedRun(6);
    const large = await countedRun(24);
    const perTurn = (c: typeof small) => ({ statements: c.statements / c.turns, rowsRead: c.rowsRead / c.turns, events: c.events / c.turns, eventBytes: c.eventBytes / c.turns });
    const [a, b] = [perTurn(small), perTurn(large)];
    expect(small.turns).toBeGreaterThan(20);
    // the runs' conversations differ (turn counts, faults), so the ratios wobble; work proportional to the run
    // size would multiply them by about four
    for (const key of ['statements', 'rowsRead', 'events', 'eventBytes'] as const) expect(b[key], key).toBeLessThan(a[key] * 1.5);
  }, 120_000);
});
