import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { openFleetRunner } from '../../src/fleet/coordinator.ts';
import { dialogueKind } from '../../src/kinds/dialogue/kind.ts';
import { ResultStore } from '../../src/store/store.ts';
import { CLI } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { spawnFixtureWorker, stopWorker, waitForWorkers, type WorkerProcess } from './helpers.ts';
import { startRedis, type TestRedis } from './redis-server.ts';
import { expectInterruptedWithWorkLeft } from '../helpers/runs.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

/** Resolves when `check` holds, checking on every new log line (no clock involved: the test's timeout bounds it). */
function waitForLine(lines: string[], pattern: RegExp): Promise<void> {
  return vi.waitFor(() => expect(lines.some((l) => pattern.test(l))).toBe(true), { timeout: 120_000, interval: 50 });
}

/** A raw stack trace as ioredis or BullMQ print one when nobody listens to a connection's errors. */
const STACK_LINE = /^\s+at .+\(.+:\d+:\d+\)$/m;

describe('the fleet when its Redis is killed (SIGKILL, no persistence)', () => {
  let redis: TestRedis;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map(stopWorker));
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('restarted mid-run: one line when it goes, one when it is back, the vanished jobs enqueued again, every planned conversation stored exactly once', { timeout: 240_000 }, async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 40;
    for (let i = 0; i < 2; i++) workers.push(spawnFixtureWorker(redis.url, `outage-${i}`, { concurrency: 2, latencyMs: 20 }));
    await waitForWorkers(redis.url, 2, 60_000, (w) => w.rig.startsWith('outage-'));
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-outage-')), 'icabench.db'));
    const lines: string[] = [];
    const rawErrors = vi.spyOn(console, 'error');
    try {
      const executor = await openFleetRunner(dialogueKind, campaign, { redisUrl: redis.url, log: (line) => lines.push(line), progressMs: 0, reconcileMs: 200 });
      let killed: Promise<void> | null = null;
      const result = await runCampaign(campaign, {
        store,
        executor,
        onEvent: (event) => {
          if (event.type !== 'progress' || event.done < 10 || killed) return;
          killed = (async () => {
            await redis.kill();
            // the coordinator noticed before the new, empty Redis is there
            await waitForLine(lines, /is unreachable/);
            await redis.restart();
          })();
        },
      });
      await killed;
      expect(result.status).toBe('completed');
      const keys = [...store.conversations(result.runId)].map((c) => c.spec.key);
      expect(keys).toHaveLength(40);
      expect(new Set(keys).size).toBe(40);
      expect([...store.remainingSpecs(result.runId)]).toHaveLength(0);
      // the jobs waiting in the killed Redis were found missing and enqueued again, said in one line
      expect(executor.counts().requeued).toBeGreaterThan(0);
      expect(lines.filter((l) => /vanished from the queue .*; enqueued again: /.test(l))).not.toHaveLength(0);
      // the outage: one line when it started, one with its length when it ended; no stack traces
      expect(lines.filter((l) => /^fleet Redis redis:\/\/127\.0\.0\.1:\d+ is unreachable \(E[A-Z]+\); waiting for it to come back$/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => /^fleet Redis redis:\/\/127\.0\.0\.1:\d+ is back after \d+\.\d s$/.test(l))).toHaveLength(1);
      // and no other line about the connection (ioredis and BullMQ report each reconnect attempt of each connection)
      expect(lines.filter((l) => /\bE(CONNREFUSED|CONNRESET|PIPE)\b|Connection is closed/.test(l))).toHaveLength(1);
      expect(rawErrors.mock.calls.map((c) => String(c[0])).filter((text) => /ECONNREFUSED|ECONNRESET|EPIPE|Missing key/.test(text) || STACK_LINE.test(text))).toEqual([]);
      // the workers too: one line when Redis went, one when it came back, no stack trace
      for (const worker of workers) {
        // its own connection may come back a little after the queue's
        await vi.waitFor(() => expect(worker.output()).toMatch(/is back after/), { timeout: 60_000, interval: 50 });
        expect(worker.output()).not.toMatch(STACK_LINE);
        expect(worker.output().match(/is unreachable \(E[A-Z]+\); waiting for it to come back/g), worker.output()).toHaveLength(1);
        expect(worker.output().match(/is back after \d+\.\d s/g), worker.output()).toHaveLength(1);
      }
    } finally {
      rawErrors.mockRestore();
      store.close();
    }
  });

  it('never restarted: `icabench run --fleet` stops as interrupted after --fleet-grace with the --resume command, which completes the run once Redis is back', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-outage-cli-'));
    const config = join(dir, 'fleet.yaml');
    writeFileSync(config, readFileSync(join(REPO_ROOT, 'bench-configs/quickstart.yaml'), 'utf8').replace('conversations: 60', 'conversations: 40').replace('seeds: seeds/in-car.yaml', `seeds: ${join(REPO_ROOT, 'bench-configs/seeds/in-car.yaml')}`));
    const workspace = join(dir, 'ws');
    workers.push(spawnFixtureWorker(redis.url, 'outage-cli', { concurrency: 2, latencyMs: 40 }));
    await waitForWorkers(redis.url, 1, 60_000, (w) => w.rig === 'outage-cli');

    const child = spawn(process.execPath, [CLI, 'run', config, '--fleet', redis.url, '--fleet-grace', '2', '--workspace', workspace, '--out', join(dir, 'out'), '--no-progress'], { cwd: REPO_ROOT });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // the first progress line (10 % done): Redis dies with conversations waiting and running
    await vi.waitFor(() => expect(stderr).toMatch(/ \d+\/40 conversations/), { timeout: 120_000, interval: 50 });
    await redis.kill();
    const code = await exited;

    expect(code, stderr).toBe(3);
    expect(stderr.match(/is unreachable \(E[A-Z]+\); waiting for it to come back/g)).toHaveLength(1);
    expect(stderr).toMatch(/fleet: the fleet's Redis at redis:\/\/127\.0\.0\.1:\d+\/? stayed unreachable for 2 s \(E[A-Z]+\); the run stops/);
    const hint = stderr.match(/run (\S+) stopped: .*\. Continue it once that is back with: (icabench run .*)$/m);
    expect(hint, stderr).not.toBeNull();
    const runId = hint![1];
    expect(hint![2]).toBe(`icabench run ${config} --workspace ${workspace} --fleet ${redis.url} --resume ${runId}`);
    expect(stderr).not.toMatch(STACK_LINE);
    expectInterruptedWithWorkLeft(join(workspace, 'icabench.db'), runId);

    // the printed command continues it once Redis is back (an empty one: the run descriptor is written again)
    await redis.restart();
    await waitForWorkers(redis.url, 1, 60_000, (w) => w.rig === 'outage-cli');
    const resumed = spawn(process.execPath, [CLI, ...hint![2].split(' ').slice(1), '--no-progress'], { cwd: REPO_ROOT });
    let resumedOut = '';
    resumed.stdout.on('data', (d) => (resumedOut += d));
    resumed.stderr.on('data', (d) => (resumedOut += d));
    expect(await new Promise((resolve) => resumed.on('exit', resolve)), resumedOut).toBe(0);
    const after = ResultStore.open(join(workspace, 'icabench.db'));
    try {
      expect(after.getRun(runId)?.status).toBe('completed');
      const keys = [...after.conversations(runId)].map((c) => c.spec.key);
      expect(keys).toHaveLength(40);
      expect(new Set(keys).size).toBe(40);
    } finally {
      after.close();
    }
  });
});
