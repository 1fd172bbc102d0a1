import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { liveWorkers } from '../../src/fleet/coordinator.ts';
import type { WorkerStatus } from '../../src/fleet/protocol.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
}

/** `icabench worker` itself, as a rig machine runs it. */
export function spawnCliWorker(url: string, rig: string, extra: string[] = []): WorkerProcess {
  return track(spawn(process.execPath, [resolve(REPO_ROOT, 'bin/icabench.js'), 'worker', '--redis', url, '--rig', rig, ...extra], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** The test worker (test/fleet/fixtures/worker.ts): the same worker, its head unit's replies delayed. */
export function spawnFixtureWorker(url: string, rig: string, options: { concurrency?: number; lockMs?: number; latencyMs?: number } = {}): WorkerProcess {
  return track(
    spawn(process.execPath, ['--import', 'tsx', resolve(REPO_ROOT, 'test/fleet/fixtures/worker.ts'), url, rig, String(options.concurrency ?? 2), String(options.lockMs ?? 2000)], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, REPLY_LATENCY_MS: String(options.latencyMs ?? 0) },
    }),
  );
}

function track(child: ChildProcess): WorkerProcess {
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  return { child, output: () => output };
}

/** Waits until `count` workers (or the ones `match` accepts) beat on this Redis. */
export async function waitForWorkers(url: string, count: number, timeoutMs = 60_000, match: (w: WorkerStatus) => boolean = () => true): Promise<WorkerStatus[]> {
  const redis = new Redis(url);
  try {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const workers = (await liveWorkers(redis)).filter(match);
      if (workers.length >= count) return workers;
      if (Date.now() > until) throw new Error(`only ${workers.length} of ${count} workers registered within ${timeoutMs} ms`);
      await sleep(100);
    }
  } finally {
    redis.disconnect();
  }
}

export async function stopWorker(worker: WorkerProcess): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  await new Promise<void>((done) => {
    worker.child.once('exit', () => done());
    worker.child.kill('SIGKILL');
  });
}
