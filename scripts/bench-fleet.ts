/**
 * Benchmark of fleet campaigns: the same campaign (quickstart, reference head unit whose replies
 * take LATENCY ms) on 1, 2 and 4 worker processes through a throwaway redis-server, against one
 * in-process run with the same per-rig concurrency. Prints throughput, the scaling over one worker,
 * and the coordinator's cost per conversation (its CPU time, and its wall-clock overhead: the
 * 1-worker fleet run against the in-process run).
 * Usage: npm run bench:fleet -- [conversations=24] [latencyMs=200] [perWorker=2]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCampaignConfig } from '../src/kinds/dialogue/config.ts';
import { openRig } from '../src/kinds/dialogue/rig.ts';
import { openFleetRunner } from '../src/fleet/coordinator.ts';
import { dialogueKind } from '../src/kinds/dialogue/kind.ts';
import { ResultStore } from '../src/store/store.ts';
import { withLatency } from '../test/fleet/fixtures/latency.ts';
import { spawnFixtureWorker, stopWorker, waitForWorkers, type WorkerProcess } from '../test/fleet/helpers.ts';
import { startRedis } from '../test/fleet/redis-server.ts';
import { runCampaign, type ConversationExecutor } from '../test/helpers/run-kinds.ts';

const conversations = Number(process.argv[2] ?? 24);
const latencyMs = Number(process.argv[3] ?? 200);
const perWorker = Number(process.argv[4] ?? 2);

const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
campaign.config.conversations = conversations;
campaign.config.concurrency = perWorker;
const dir = mkdtempSync(join(tmpdir(), 'icabench-bench-fleet-'));
const store = ResultStore.open(join(dir, 'icabench.db'));
const redis = await startRedis();

interface Measured {
  label: string;
  seconds: number;
  turns: number;
  cpuMs: number;
}

async function measure(label: string, executor: ConversationExecutor | null): Promise<Measured> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = executor
    ? await runCampaign(campaign, { store, executor })
    : await runCampaign(campaign, { store, rig: withLatency(await openRig(campaign), latencyMs) });
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  if (result.status !== 'completed' || result.done !== conversations) throw new Error(`${label}: run ${result.status}, ${result.done}/${conversations}`);
  const turns = [...store.conversations(result.runId)].reduce((sum, c) => sum + c.turns.length, 0);
  return { label, seconds, turns, cpuMs: (used.user + used.system) / 1000 };
}

const results: Measured[] = [];
try {
  results.push(await measure('in-process', null));
  for (const n of [1, 2, 4]) {
    const workers: WorkerProcess[] = [];
    for (let i = 0; i < n; i++) workers.push(spawnFixtureWorker(redis.url, `bench-${n}-${i}`, { concurrency: perWorker, latencyMs, lockMs: 30_000 }));
    try {
      await waitForWorkers(redis.url, n, 60_000, (w) => w.rig.startsWith(`bench-${n}-`));
      const executor = await openFleetRunner(dialogueKind, campaign, { redisUrl: redis.url, log: () => undefined, progressMs: 0 });
      results.push(await measure(`fleet, ${n} worker${n > 1 ? 's' : ''}`, executor));
    } finally {
      await Promise.all(workers.map(stopWorker));
    }
  }
} finally {
  store.close();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}

const one = results.find((r) => r.label === 'fleet, 1 worker')!;
const local = results.find((r) => r.label === 'in-process')!;
console.log(`${conversations} conversations (quickstart, reference head unit, ${latencyMs} ms reply latency), ${perWorker} at once per worker`);
console.log('| run | wall s | conversations/s | turns | scaling vs 1 worker | coordinator CPU ms/conversation |');
console.log('|---|---|---|---|---|---|');
for (const r of results) {
  const rate = conversations / r.seconds;
  const scaling = r.label.startsWith('fleet') ? `${(one.seconds / r.seconds).toFixed(2)}×` : '–';
  console.log(`| ${r.label} | ${r.seconds.toFixed(1)} | ${rate.toFixed(2)} | ${r.turns} | ${scaling} | ${(r.cpuMs / conversations).toFixed(1)}${r.label === 'in-process' ? ' (runs the conversations too)' : ''} |`);
}
console.log(`coordinator wall-clock overhead: ${(((one.seconds - local.seconds) / conversations) * 1000).toFixed(0)} ms per conversation (1-worker fleet vs in-process, same concurrency)`);
