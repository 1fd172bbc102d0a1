import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { ResultStore } from '../../src/store/store.ts';
import { DRIVE_CACHE_SIZE, World } from '../../src/world/world.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

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
  const counts = { statements: 0, rowsRead: 0, events: 0, eventBytes: 0, turns: 0, driveTimes: 0 };
  const original = { ...statementProto };
  // drive times the world works out (searches share them per position: World.placesFrom)
  const withDrive = World.prototype.withDrive;
  vi.spyOn(World.prototype, 'withDrive').mockImplementation(function (this: World, ...args) {
    counts.driveTimes++;
    return withDrive.apply(this, args);
  });
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
    const perTurn = (c: typeof small) => ({ statements: c.statements / c.turns, rowsRead: c.rowsRead / c.turns, events: c.events / c.turns, eventBytes: c.eventBytes / c.turns, driveTimes: c.driveTimes / c.turns });
    const [a, b] = [perTurn(small), perTurn(large)];
    expect(small.turns).toBeGreaterThan(20);
    // the runs' conversations differ (turn counts, faults), so the ratios wobble; work proportional to the run
    // size would multiply them by about four
    for (const key of ['statements', 'rowsRead', 'events', 'eventBytes', 'driveTimes'] as const) expect(b[key], key).toBeLessThan(a[key] * 1.5);
    expect(small.driveTimes).toBeGreaterThan(0);
  }, 120_000);

  it("the world's shared drive times are kept for a bounded number of searches, the oldest dropped first", () => {
    const world = new World(1);
    const at = (i: number) => ({ lat: 48.1 + i / 10_000, lon: 11.5 });
    const first = world.placesFrom('Munich', 'restaurant', at(0));
    // the same search again shares the answer; it is each place's withDrive, in the world's order
    expect(world.placesFrom('Munich', 'restaurant', at(0))).toBe(first);
    expect(first).toEqual(world.poisOf('Munich', 'restaurant').map((p) => world.withDrive(p, at(0))));
    expect(Object.isFrozen(first[0])).toBe(true);
    // DRIVE_CACHE_SIZE searches from other positions push it out: it is worked out again (equal, not the same)
    for (let i = 1; i <= DRIVE_CACHE_SIZE; i++) world.placesFrom('Munich', 'restaurant', at(i));
    const again = world.placesFrom('Munich', 'restaurant', at(0));
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
