import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResultStore } from '../../src/store/store.ts';
import { exportJsonl } from '../../src/store/export.ts';
import { CLI, runCli } from '../helpers/cli.ts';
import { dataPath } from '../helpers/repoData.ts';
import { startHarness, type Harness } from '../server/helpers.ts';
import { Writable } from 'node:stream';
import { startRedis, type TestRedis } from '../fleet/redis-server.ts';
import { MANUAL_QA_FACTS } from '../../src/kinds/manual-qa/item.ts';
import { spawnCliWorker, stopWorker, waitForWorkers, type WorkerProcess } from '../fleet/helpers.ts';

/**
 * The acceptance test of the one run skeleton (src/run/runner.ts), the same for every campaign kind: a run through
 * the CLI and a run through the bench app's API store the same items and give the same summary.json (timestamps
 * and run ids aside); Ctrl+C and SIGKILL followed by --resume lose and repeat nothing; a run resumed with another
 * kind's config, or another config, is refused with the reason; a run on a fleet of 2 workers, started from the CLI or
 * from the bench app, stores the same items and gives the same summary.json as a run in one process. Kinds: dialogue,
 * manual-qa, tool-agents and suite through every leg; live (a technician's session) through its own ways in, `icabench
 * session` and the app's session API, with Ctrl+C, and the fleet's refusal.
 */

const SEEDS = resolve('bench-configs/seeds/in-car.yaml');
const MANUAL = resolve('data/bmw-manual/xml');
const SUITE = resolve('bench-configs/suites/in-car-basics.yaml');

/**
 * One small config per kind, each long enough that a Ctrl+C and then a SIGKILL land mid-run: items take
 * milliseconds, so a plan of a few dozen could finish between two polls (it did once in a fresh-clone CI run).
 */
const KINDS = {
  dialogue: (dir: string) =>
    // the data a config names sits beside it: the bench app starts configs that read from its configs folder only
    (cpSync(SEEDS, join(dir, 'seeds.yaml')),
    write(dir, 'dialogue.yaml', [`name: every-kind-dialogue`, 'mode: guided', 'seeds: seeds.yaml', 'conversations: 60', 'personas: [polite]', 'strategies: all', 'maxTurns: [3]', 'concurrency: 2', 'seed: 42', 'headUnit: { type: reference, worldSeed: 1, faults: { profiles: all, rate: 0.5, seed: 7 } }', 'simulator: template', 'judges: [oracle]'])),
  'manual-qa': (dir: string) => (cpSync(MANUAL, join(dir, 'manual'), { recursive: true }), write(dir, 'manual.yaml', ['kind: manual-qa', 'name: every-kind-manual', 'manual: [manual]', 'limit: 120', 'concurrency: 2'])),
  'tool-agents': (dir: string) => {
    // every base task, one at a time: a replay trial takes milliseconds, and a Ctrl+C must land mid-run
    cpSync(dataPath('carbench/tasks_base.json'), join(dir, 'tasks.json'));
    return write(dir, 'tools.yaml', ['kind: tool-agents', 'name: every-kind-tools', 'tasks: [tasks.json]', 'repeats: 5', 'concurrency: 1']);
  },
  // the shipped basics suite (3 conversations) 20 times over, on a unit with faults: its own kind, stored as `suite`
  suite: (dir: string) =>
    (cpSync(SUITE, join(dir, 'basics.yaml')),
    write(dir, 'suite.yaml', ['kind: suite', 'name: every-kind-suite', 'suites: [basics.yaml]', 'repeats: 20', 'concurrency: 2', 'headUnit: { type: reference, worldSeed: 1, faults: { profiles: all, rate: 0.5, seed: 7 } }', 'judges: [oracle]'])),
} as const;
type Kind = keyof typeof KINDS;

/**
 * The fleet legs' smaller plans (each item is a job through Redis): fields and their values, per kind. Manual-QA's adds the
 * warning-omission search (a fleet job of its own after the questions) on a unit with manual faults, so that it finds omissions.
 */
const FLEET_PLAN: Record<Kind, [string, string][]> = {
  dialogue: [['conversations', '12']],
  'manual-qa': [['limit', '16'], ['manualFaults', '{ profiles: all, rate: 0.4 }'], ['omissionSearch', '{ budget: 20, seed: 2 }']],
  'tool-agents': [['repeats', '1']],
  suite: [['repeats', '4']],
};
/** The fleet SIGKILL leg's plans: long enough that a SIGKILL after 2 stored items lands mid-run (every base task once for tool-agents). */
const FLEET_KILL_PLAN: Record<Kind, [string, string][]> = { dialogue: [['conversations', '30']], 'manual-qa': [['limit', '40']], 'tool-agents': [], suite: [['repeats', '10']] };

/** The kind's config with the fleet plan's fields (and `more`), written as `name`. */
function fleetConfig(dir: string, kind: Kind, name: string, more: [string, string][] = []): string {
  return [...FLEET_PLAN[kind], ...more].reduce((config, [field, value]) => withField(config, name, field, value), KINDS[kind](dir));
}

/** One field per kind that changes what a run runs (the sampling seed, the questions asked, the trials per task). */
const CHANGED: Record<Kind, [string, string]> = { dialogue: ['seed', '7'], 'manual-qa': ['limit', '23'], 'tool-agents': ['repeats', '4'], suite: ['repeats', '19'] };

/** The config with `field` set to `value` (the line replaced or added), written beside it as `name`. */
function withField(config: string, name: string, field: string, value: string): string {
  return write(resolve(config, '..'), name, [...readFileSync(config, 'utf8').trim().split('\n').filter((l) => !l.startsWith(`${field}:`)), `${field}: ${value}`]);
}

function write(dir: string, name: string, lines: string[]): string {
  writeFileSync(join(dir, name), `${lines.join('\n')}\n`);
  return join(dir, name);
}

/** What legitimately differs between two runs of one config: run ids (also in session ids and keys), clocks, timings, where the app copied its config. */
const VOLATILE = new Set(['at', 'address', 'startedAt', 'durationMs', 'latencyMs', 'firstReplyLatencyMs', 'createdAt', 'finishedAt', 'meanLatencyMs', 'modelSeconds', 'gpuSeconds', 'benchMs', 'elapsedMs']);
function comparable(text: string, runId: string): unknown {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([k]) => !VOLATILE.has(k)).map(([k, v]) => [k, strip(v)]));
    return value;
  };
  return strip(JSON.parse(text.replaceAll(runId, 'RUN')));
}

/** Every stored item (conversation, question, task trial) of a run, one JSON line each, in plan order. */
async function storedItems(dbPath: string, runId: string): Promise<unknown[]> {
  const store = ResultStore.open(dbPath);
  try {
    const chunks: string[] = [];
    await exportJsonl(store, runId, new Writable({ write: (chunk, _enc, done) => (chunks.push(String(chunk)), done()) }));
    return chunks.join('').trim().split('\n').map((line) => comparable(line, runId));
  } finally {
    store.close();
  }
}

type Summary = { invocations: unknown[]; tiers: unknown[]; protocol?: { events: { kind: string }[] } };
/** A summary.json without what each invocation of a run records: its set-up and tiers, and the unit's first connection (dialogue's link events). */
function withoutInvocations({ invocations, tiers, ...rest }: Summary): unknown {
  return rest.protocol ? { ...rest, protocol: { ...rest.protocol, events: rest.protocol.events.filter((e) => e.kind !== 'connected') } } : rest;
}

/** The warning-omission search's stored results of a run (one fact, once the questions are done). */
function omissionFacts(dbPath: string, runId: string): unknown[] {
  const store = ResultStore.open(dbPath);
  try {
    return store.runFacts(runId, MANUAL_QA_FACTS.omission).map((f) => comparable(JSON.stringify(f.data), runId));
  } finally {
    store.close();
  }
}

function runOf(dbPath: string): { id: string; status: string; planned: number; stored: number } {
  const store = ResultStore.open(dbPath);
  try {
    return store.listRuns()[0];
  } finally {
    store.close();
  }
}

/** Starts a config from the bench app's API and waits for the run to finish; returns its id and the last live snapshot. */
async function runInApp(h: Harness, configName: string): Promise<{ runId: string; live: { rigs: { rig: string; running: number; done: number }[] } }> {
  const start = await h.api('/api/campaign/start', { body: { configName } });
  expect(start.status, JSON.stringify(start.json)).toBe(202);
  for (;;) {
    const live = await h.api('/api/campaign');
    expect(live.json.state, live.json.error).not.toBe('failed');
    if (live.json.state === 'finished') return { runId: start.json.runId, live: live.json };
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts `icabench run` and sends it `signal` once `stored` items are in the store. */
async function interrupted(args: string[], db: string, signal: NodeJS.Signals, stored: number): Promise<number | null> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  for (;;) {
    const code = await Promise.race([exited, new Promise<'poll'>((r) => setTimeout(() => r('poll'), 25))]);
    if (code !== 'poll') throw new Error(`the run ended before it could be interrupted (exit ${code}): ${stderr}`);
    try {
      if (runOf(db)?.stored >= stored) break;
    } catch {
      // the store is not created yet
    }
  }
  child.kill(signal);
  return exited;
}

describe.each(Object.keys(KINDS) as Kind[])('the one run skeleton, kind %s', (kind) => {
  it('the CLI and the bench app store the same items and write the same summary.json', { timeout: 600_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), `icabench-every-kind-${kind}-`));
    const config = KINDS[kind](dir);
    const ran = await runCli(['run', config, '--workspace', join(dir, 'ws'), '--out', join(dir, 'out'), '--no-progress']);
    expect(ran.code, ran.stderr).toBe(0);
    const cliRun = runOf(join(dir, 'ws', 'icabench.db'));
    expect(cliRun).toMatchObject({ status: 'completed', stored: cliRun.planned });
    const cliSummary = readFileSync(join(dir, 'out', 'summary.json'), 'utf8');
    // every kind's summary.json starts with the one header (src/report/summary-header.ts)
    const header = JSON.parse(cliSummary);
    expect(Object.keys(header).slice(0, 6)).toEqual(['schemaVersion', 'kind', 'run', 'preset', 'tiers', 'invocations']);
    expect(header).toMatchObject({ schemaVersion: 1, kind, run: { id: cliRun.id, status: 'completed', mode: expect.any(String) }, preset: { method: 'lab' } });
    expect(header.invocations).toHaveLength(1);
    // every kind records what it ran with (tiers.resolved) through the one tier builder
    expect(header.tiers).toHaveLength(1);
    expect(header.tiers[0].judges.length).toBeGreaterThan(0);

    const h = await startHarness({ configsDir: dir });
    try {
      const runId = (await runInApp(h, config.slice(dir.length + 1))).runId;
      expect(h.store.getRun(runId)).toMatchObject({ kind, status: 'completed', stored: cliRun.planned });
      const served = await h.api(`/api/runs/${runId}/summary.json`);
      expect(comparable(JSON.stringify(served.json), runId)).toEqual(comparable(cliSummary, cliRun.id));
      expect(await storedItems(join(h.workspace, 'results.db'), runId)).toEqual(await storedItems(join(dir, 'ws', 'icabench.db'), cliRun.id));
    } finally {
      await h.close();
    }
  });

  it('Ctrl+C, then SIGKILL, each followed by --resume, lose and repeat nothing; another config is refused', { timeout: 600_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), `icabench-every-kind-resume-${kind}-`));
    const config = KINDS[kind](dir);
    const ws = join(dir, 'ws');
    const db = join(ws, 'icabench.db');
    const args = ['run', config, '--workspace', ws, '--out', join(dir, 'out'), '--no-progress'];
    expect(await interrupted(args, db, 'SIGINT', 2)).toBe(130);
    expect(runOf(db).status).toBe('interrupted');

    // another kind's config, and another config of this kind, may not continue it
    const run = runOf(db);
    const other = (Object.keys(KINDS) as Kind[]).find((k) => k !== kind)!;
    const refusedKind = await runCli(['run', KINDS[other](dir), '--workspace', ws, '--resume', run.id, '--no-progress']);
    expect(refusedKind.code).not.toBe(0);
    expect(refusedKind.stderr).toContain(`run ${run.id} is a ${kind} run, not a ${other} run`);
    const [field, value] = CHANGED[kind];
    const changed = withField(config, 'changed.yaml', field, value);
    const refusedConfig = await runCli(['run', changed, '--workspace', ws, '--resume', run.id, '--no-progress']);
    expect(refusedConfig.code).not.toBe(0);
    expect(refusedConfig.stderr).toMatch(new RegExp(`run ${run.id} \\("[^"]+"\\) was started with another config \\(${field} differs\\)`));
    expect(runOf(db)).toMatchObject({ status: 'interrupted', stored: run.stored });

    const storedBefore = runOf(db).stored;
    await interrupted([...args, '--resume'], db, 'SIGKILL', storedBefore + 2);
    const resumed = await runCli([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = runOf(db);
    expect(done).toMatchObject({ id: run.id, status: 'completed', stored: done.planned });
    // each planned item stored exactly once: the export has one line per key, every key planned
    const items = (await storedItems(db, run.id)) as { key?: string; spec?: { key: string } }[];
    expect(new Set(items.map((i) => i.key ?? i.spec?.key)).size).toBe(done.planned);
    expect(items).toHaveLength(done.planned);
  });
});

/** The technician's turns of the live legs, typed in the terminal and through the app alike. */
const LIVE_TURNS = ['Find me a cheap italian restaurant in Maxvorstadt.', 'Take me there.'];

/** `icabench session` fed `lines` on stdin (and `kill` once both turns are answered, if given); its exit code and screen. */
async function cliSession(ws: string, out: string, lines: string[], kill?: NodeJS.Signals): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, [CLI, 'session', '--workspace', ws, '--out', out, '--name', 'every-kind-live'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let killed = false;
  child.stdout.on('data', (d) => {
    stdout += d;
    // once: a second Ctrl+C quits at once
    if (kill && !killed && /^turn 2\n {2}unit: .*\n {2}judge: .*$/m.test(stdout)) killed = child.kill(kill);
  });
  const exited = new Promise<number | null>((done) => child.on('exit', done));
  if (kill) child.stdin.write(lines.map((l) => `${l}\n`).join(''));
  else child.stdin.end([...lines, ''].join('\n'));
  return { code: await exited, stdout };
}

/**
 * The live kind through the same three ways in: the CLI (`icabench session`, a technician's terminal), the bench app (the
 * session API) and the fleet. A session's turns are typed at this bench, so the fleet refuses it, saying why (docs/suites.md).
 */
describe('the one run skeleton, kind live', () => {
  it('the CLI and the bench app store the same session and write the same summary.json', { timeout: 600_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-every-kind-live-'));
    const ran = await cliSession(join(dir, 'ws'), join(dir, 'out'), [...LIVE_TURNS, ':end']);
    expect(ran.code, ran.stdout).toBe(0);
    const cliRun = runOf(join(dir, 'ws', 'icabench.db'));
    expect(cliRun).toMatchObject({ status: 'completed', planned: 1, stored: 1 });
    const cliSummary = readFileSync(join(dir, 'out', 'summary.json'), 'utf8');
    expect(JSON.parse(cliSummary)).toMatchObject({ schemaVersion: 1, kind: 'live', run: { id: cliRun.id, status: 'completed', mode: 'live' }, conversations: 1 });

    const h = await startHarness({ configsDir: dir });
    try {
      const start = await h.api('/api/session/start', { body: { config: { name: 'every-kind-live' } } });
      expect(start.status, JSON.stringify(start.json)).toBe(202);
      for (const text of LIVE_TURNS) expect((await h.api('/api/session/turn', { body: { text } })).status).toBe(200);
      expect((await h.api('/api/session/end', { body: {} })).status).toBe(200);
      const runId = start.json.runId as string;
      expect(h.store.getRun(runId)).toMatchObject({ kind: 'live', mode: 'live', status: 'completed', stored: 1 });
      // the runs list shows it as its own kind
      expect((await h.api('/api/runs')).json.runs.find((r: { id: string }) => r.id === runId)).toMatchObject({ kind: 'live', mode: 'live' });
      const served = await h.api(`/api/runs/${runId}/summary.json`);
      expect(comparable(JSON.stringify(served.json), runId)).toEqual(comparable(cliSummary, cliRun.id));
      expect(await storedItems(join(h.workspace, 'results.db'), runId)).toEqual(await storedItems(join(dir, 'ws', 'icabench.db'), cliRun.id));
    } finally {
      await h.close();
    }
  });

  it('Ctrl+C stores the turns answered so far and ends the run interrupted; the run is not resumed from a config', { timeout: 600_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-every-kind-live-stop-'));
    const ws = join(dir, 'ws');
    const stopped = await cliSession(ws, join(dir, 'out'), LIVE_TURNS, 'SIGINT');
    expect(stopped.code, stopped.stdout).toBe(130);
    const run = runOf(join(ws, 'icabench.db'));
    expect(run).toMatchObject({ status: 'interrupted', planned: 1, stored: 1 });
    const [session] = (await storedItems(join(ws, 'icabench.db'), run.id)) as { turns: { utterance: { text: string } }[] }[];
    expect(session.turns.map((t) => t.utterance.text)).toEqual(LIVE_TURNS);
    // a live config given to `icabench run` (a new run or --resume) is refused: its technician is at a terminal or the app
    const config = write(dir, 'live.yaml', ['kind: live', 'name: every-kind-live']);
    const refused = await runCli(['run', config, '--workspace', ws, '--resume', run.id, '--no-progress']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("kind live: a live session's turns are typed by a technician at this bench; start one with `icabench session`");
    expect(runOf(join(ws, 'icabench.db'))).toMatchObject({ status: 'interrupted', stored: 1 });
  });
});

describe('the one run skeleton on a fleet of 2 workers (icabench worker processes on a redis-server), from the CLI and the bench app', () => {
  let redis: TestRedis;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    // rigs that serve every kind: the reference unit (dialogue, manual-QA) and the replay agent (tool-agents)
    for (const rig of ['every-kind-a', 'every-kind-b']) workers.push(spawnCliWorker(redis.url, rig, ['--capabilities', 'text,vehicle,tools', '--concurrency', '2']));
    await waitForWorkers(redis.url, 2);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(workers.map(stopWorker));
    await redis?.stop();
  });

  it.each(Object.keys(KINDS) as Kind[])('kind %s: the same stored items and summary.json as a run in one process, and the live view counts each item on its rig', { timeout: 600_000 }, async (kind) => {
    const dir = mkdtempSync(join(tmpdir(), `icabench-every-kind-fleet-${kind}-`));
    const config = fleetConfig(dir, kind, 'fleet.yaml');
    const local = await runCli(['run', config, '--workspace', join(dir, 'local'), '--out', join(dir, 'local-out'), '--no-progress']);
    expect(local.code, local.stderr).toBe(0);
    const fleet = await runCli(['run', config, '--fleet', redis.url, '--workspace', join(dir, 'fleet'), '--out', join(dir, 'fleet-out'), '--no-progress']);
    expect(fleet.code, fleet.stderr).toBe(0);
    expect(fleet.stderr).toMatch(/fleet: 2 worker\(s\) can serve [^\n]*every-kind-a/);

    const localRun = runOf(join(dir, 'local', 'icabench.db'));
    const fleetRun = runOf(join(dir, 'fleet', 'icabench.db'));
    expect(fleetRun).toMatchObject({ status: 'completed', planned: localRun.planned, stored: localRun.planned });
    const localSummary = comparable(readFileSync(join(dir, 'local-out', 'summary.json'), 'utf8'), localRun.id);
    const localItems = await storedItems(join(dir, 'local', 'icabench.db'), localRun.id);
    expect(comparable(readFileSync(join(dir, 'fleet-out', 'summary.json'), 'utf8'), fleetRun.id)).toEqual(localSummary);
    expect(await storedItems(join(dir, 'fleet', 'icabench.db'), fleetRun.id)).toEqual(localItems);
    if (kind === 'manual-qa') {
      // the warning-omission search ran on a worker (a job of its own) and found what the search in one process found
      const search = (localSummary as { omissionSearch: { asked: number; omissions: number } | null }).omissionSearch;
      expect(search).toMatchObject({ asked: expect.any(Number), omissions: expect.any(Number) });
      expect(search!.asked).toBeGreaterThan(0);
      expect(search!.omissions).toBeGreaterThan(0);
      expect(omissionFacts(join(dir, 'fleet', 'icabench.db'), fleetRun.id)).toEqual(omissionFacts(join(dir, 'local', 'icabench.db'), localRun.id));
    }

    // the bench app started with the fleet (`icabench serve --fleet`) runs it on the same workers; its live view counts each item on its rig
    const h = await startHarness({ configsDir: dir, fleet: redis.url });
    try {
      const { runId, live } = await runInApp(h, 'fleet.yaml');
      expect(h.store.getRun(runId)).toMatchObject({ kind, status: 'completed', stored: localRun.planned });
      expect(live.rigs.every((r) => r.rig.startsWith('every-kind-') && r.running === 0)).toBe(true);
      expect(live.rigs.reduce((sum, r) => sum + r.done, 0)).toBe(localRun.planned);
      expect(comparable(JSON.stringify((await h.api(`/api/runs/${runId}/summary.json`)).json), runId)).toEqual(localSummary);
      expect(await storedItems(join(h.workspace, 'results.db'), runId)).toEqual(localItems);
    } finally {
      await h.close();
    }
  });

  it('kind live: the fleet refuses a live session, from the CLI and from the bench app, saying why', { timeout: 600_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-every-kind-fleet-live-'));
    const config = write(dir, 'live.yaml', ['kind: live', 'name: every-kind-live']);
    const refused = await runCli(['run', config, '--fleet', redis.url, '--workspace', join(dir, 'fleet'), '--no-progress']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('kind live: a live session\'s turns are typed by a technician at this bench');
    expect(refused.stderr).toContain('a fleet worker has no technician');
    const h = await startHarness({ configsDir: dir, fleet: redis.url });
    try {
      const start = await h.api('/api/session/start', { body: { config: { name: 'every-kind-live' } } });
      expect(start.status).toBe(400);
      expect(start.json.error).toMatchObject({ code: 'fleet', message: expect.stringContaining('a live session talks to a unit on this bench') });
      expect(h.store.listRuns()).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it.each(Object.keys(KINDS) as Kind[])('kind %s: SIGKILL of the `run --fleet` coordinator mid-run, then --resume --fleet, loses and repeats nothing', { timeout: 600_000 }, async (kind) => {
    const dir = mkdtempSync(join(tmpdir(), `icabench-every-kind-fleet-kill-${kind}-`));
    const config = fleetConfig(dir, kind, 'kill.yaml', FLEET_KILL_PLAN[kind]);
    const local = await runCli(['run', config, '--workspace', join(dir, 'local'), '--out', join(dir, 'local-out'), '--no-progress']);
    expect(local.code, local.stderr).toBe(0);
    const localRun = runOf(join(dir, 'local', 'icabench.db'));

    const db = join(dir, 'fleet', 'icabench.db');
    const args = ['run', config, '--fleet', redis.url, '--workspace', join(dir, 'fleet'), '--out', join(dir, 'fleet-out'), '--no-progress'];
    await interrupted(args, db, 'SIGKILL', 2);
    const killed = runOf(db);
    expect(killed).toMatchObject({ status: 'running', planned: localRun.planned });
    expect(killed.stored).toBeLessThan(killed.planned);
    // the killed coordinator's jobs still run on the workers; their results wait on the run's result queue for the resumed one
    const resumed = await runCli([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = runOf(db);
    expect(done).toMatchObject({ id: killed.id, status: 'completed', planned: localRun.planned, stored: localRun.planned });
    // each planned item stored exactly once, and the same as in one process
    const items = await storedItems(db, done.id);
    expect(items).toEqual(await storedItems(join(dir, 'local', 'icabench.db'), localRun.id));
    // the same summary.json, but for what each invocation records (as a resume in one process does): the tiers and set-up its
    // workers ran with, and their unit's first connection; the killed and the resumed coordinator each recorded theirs
    const fleetSummary = comparable(readFileSync(join(dir, 'fleet-out', 'summary.json'), 'utf8'), done.id) as Summary;
    const localSummary = comparable(readFileSync(join(dir, 'local-out', 'summary.json'), 'utf8'), localRun.id) as Summary;
    expect(withoutInvocations(fleetSummary)).toEqual(withoutInvocations(localSummary));
    expect(localSummary.invocations).toHaveLength(1);
    expect(fleetSummary.invocations.length).toBeGreaterThanOrEqual(1);
    expect(new Set(fleetSummary.tiers.map((t) => JSON.stringify(t)))).toEqual(new Set(localSummary.tiers.map((t) => JSON.stringify(t))));
    if (kind === 'manual-qa') expect(omissionFacts(db, done.id)).toEqual(omissionFacts(join(dir, 'local', 'icabench.db'), localRun.id));
  });
});
