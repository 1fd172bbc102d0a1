import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { io } from 'socket.io-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { liveWorkers } from '../../../src/fleet/coordinator.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { spawnCli, type CliChild } from '../../helpers/cli.ts';
import { startRedis, type TestRedis } from '../../fleet/redis-server.ts';
import { expectInterruptedWithWorkLeft } from '../../helpers/runs.ts';

/**
 * Ctrl+C (SIGINT) and SIGTERM in every state of the long-running commands, each sent when a log line says the
 * command reached that state. No clock: a command that waited for its grace instead of stopping would outlast
 * the test's timeout.
 */

const SEEDS = resolve('bench-configs/seeds/in-car.yaml');
const TOKEN_ENV = 'ICABENCH_TEST_SIGNAL_TOKEN';
const TOKEN = 'signals-bridge-token';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function watched(child: CliChild): CliChild {
  cleanups.push(() => void child.child.kill('SIGKILL'));
  return child;
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'icabench-signals-'));
}

describe('icabench run', () => {
  it('Ctrl+C while the run is paused (its bridge unit went away, 600 s grace) ends it at once as interrupted: exit 130, resumable', { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const config = join(dir, 'paused.yaml');
    writeFileSync(config, `name: paused\nseeds: ${SEEDS}\nconversations: 400\nconcurrency: 2\nheadUnit: { type: bridge, port: 0, tokenEnv: ${TOKEN_ENV}, waitSeconds: 60, reconnectGraceSeconds: 600 }\n`);
    const run = watched(spawnCli(['run', config, '--workspace', join(dir, 'ws'), '--out', join(dir, 'out'), '--no-progress'], { [TOKEN_ENV]: TOKEN }));
    const [, url] = await run.waitFor(/bridge listening on (\S+);/);
    const unit = watched(spawnCli(['headunit', '--url', url, '--token', TOKEN]));
    await run.waitFor(/ \d+\/400 conversations/);
    // the unit's process dies: it cannot dial in again
    unit.child.kill('SIGKILL');
    await run.waitFor(/new conversations wait for it to dial in again/);
    run.child.kill('SIGINT');
    expect(await run.exited, run.output()).toBe(130);
    expect(run.output()).toMatch(/Stopping: no new conversations start/);
    expect(run.output()).not.toMatch(/did not come back/);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.run.status).toBe('interrupted');
    expect(summary.protocol.stopped).toBeNull();
    expect(summary.conversations).toBeLessThan(400);
  });

  it('a second Ctrl+C quits at once while the first waits for a turn in flight (an http unit that never answers, 600 s timeout)', { timeout: 120_000 }, async () => {
    let requests = 0;
    const silent: Server = createServer(() => void requests++);
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    cleanups.push(() => {
      silent.closeAllConnections();
      silent.close();
    });
    const port = (silent.address() as { port: number }).port;
    const dir = tempDir();
    const config = join(dir, 'silent.yaml');
    writeFileSync(config, `name: silent\nseeds: ${SEEDS}\nconversations: 4\nconcurrency: 1\nheadUnit: { type: http, baseUrl: "http://127.0.0.1:${port}/v1", model: m, timeoutMs: 600000 }\n`);
    const workspace = join(dir, 'ws');
    const run = watched(spawnCli(['run', config, '--workspace', workspace, '--no-progress']));
    const [, runId] = await run.waitFor(/run (\S+): 4 conversations planned/);
    await new Promise<void>((done) => silent.on('request', () => done()));
    run.child.kill('SIGINT');
    await run.waitFor(/Stopping: no new conversations start/);
    run.child.kill('SIGINT');
    expect(await run.exited, run.output()).toBe(130);
    expect(requests).toBe(1);
    // nothing finished, nothing lost: the run is still resumable
    const store = ResultStore.open(join(workspace, 'icabench.db'));
    try {
      expect(store.getRun(runId)?.status).toBe('running');
      expect([...store.remainingSpecs(runId)]).toHaveLength(4);
    } finally {
      store.close();
    }
  });
});

describe('icabench serve', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} with the live feed connected stops it cleanly: exit 0, the store closed`, { timeout: 120_000 }, async () => {
      const dir = tempDir();
      const workspace = join(dir, 'ws');
      const serve = watched(spawnCli(['serve', '--workspace', workspace, '--port', '0']));
      const [, url, token] = await serve.waitFor(/icabench bench app: (http:\/\/\S+)\/#token=(\S+)/);
      await serve.waitFor(/Press Ctrl\+C to stop/);
      // the bench app's live feed, as an open browser tab holds it
      const socket = io(url, { auth: { token: decodeURIComponent(token) }, transports: ['websocket'], reconnection: false });
      cleanups.push(() => void socket.close());
      await new Promise<void>((done, fail) => {
        socket.once('campaign', () => done());
        socket.once('connect_error', fail);
      });
      const disconnected = new Promise<void>((done) => socket.once('disconnect', () => done()));

      serve.child.kill(signal);
      expect(await serve.exited, serve.output()).toBe(0);
      await disconnected;
      expect(serve.output()).toMatch(/bench app stopped/);
      // a closed SQLite store in WAL mode leaves no write-ahead log behind
      expect(existsSync(join(workspace, 'icabench.db'))).toBe(true);
      expect(existsSync(join(workspace, 'icabench.db-wal'))).toBe(false);
    });
  }

  it('SIGINT while the app runs a campaign: the run ends as interrupted (resumable), then the app exits 0', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const workspace = join(dir, 'ws');
    const serve = watched(spawnCli(['serve', '--workspace', workspace, '--port', '0']));
    const [, url, token] = await serve.waitFor(/icabench bench app: (http:\/\/\S+)\/#token=(\S+)/);
    const text = readFileSync('bench-configs/quickstart.yaml', 'utf8').replace('conversations: 60', 'conversations: 5000');
    const started = await fetch(`${url}/api/campaign/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${decodeURIComponent(token)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ configName: 'quickstart.yaml', text }),
    });
    expect(started.status).toBe(202);
    const { runId } = (await started.json()) as { runId: string };
    serve.child.kill('SIGINT');
    expect(await serve.exited, serve.output()).toBe(0);
    expectInterruptedWithWorkLeft(join(workspace, 'icabench.db'), runId);
  });
});

describe('icabench worker', () => {
  let redis: TestRedis | null = null;
  afterEach(async () => {
    await redis?.stop();
    redis = null;
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} stops it cleanly: exit 0, its heartbeat removed and its Redis connections closed`, { timeout: 120_000 }, async () => {
      redis = await startRedis();
      const worker = watched(spawnCli(['worker', '--redis', redis.url, '--rig', `signal-${signal}`]));
      await worker.waitFor(/worker \S+ on redis:\/\/\S+: /);
      const client = new Redis(redis.url);
      cleanups.push(() => void client.disconnect());
      expect((await liveWorkers(client)).map((w) => w.rig)).toEqual([`signal-${signal}`]);
      worker.child.kill(signal);
      expect(await worker.exited, worker.output()).toBe(0);
      expect(worker.output()).toMatch(/worker \S+: stopped/);
      expect(await liveWorkers(client)).toEqual([]);
      // no connection of the worker is left on the Redis: only this test's client. The worker's sockets are closed by now, but
      // redis-server handles a closed socket on its own turn (not before a command that arrived meanwhile): wait for that
      await vi.waitFor(async () => expect(((await client.client('LIST')) as string).trim().split('\n')).toHaveLength(1), { timeout: 30_000, interval: 50 });
    });
  }
});
