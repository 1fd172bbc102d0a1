import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { buildTiers } from '../../src/kinds/dialogue/tiers.ts';
import { openFleetRunner } from '../../src/fleet/coordinator.ts';
import { dialogueKind } from '../../src/kinds/dialogue/kind.ts';
import { itemQueueName } from '../../src/fleet/protocol.ts';
import { fleetRedisOptions } from '../../src/fleet/redis.ts';
import { startFleetWorker } from '../../src/fleet/worker.ts';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import { ResultStore } from '../../src/store/store.ts';
import { summarizeRun } from '../../src/report/summary.ts';
import type { CampaignEvent } from '../../src/run/events.ts';
import { applyCampaignEvent, emptySnapshot } from '../../src/server/live-snapshot.ts';
import { LlmUsageSummarySchema } from '../../src/llm/usage.ts';
import { benchModelResponder, startFakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { spawnCliWorker, spawnFixtureWorker, stopWorker, waitForWorkers, type WorkerProcess } from './helpers.ts';
import { startRedis, type TestRedis } from './redis-server.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { startHarness } from '../server/helpers.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

/** A stored conversation without what depends on the clock (start time, durations, reply latencies) or names its run (session ids). */
function comparable(result: ConversationResult, runId: string): unknown {
  return JSON.parse(JSON.stringify(result, (key, value) => (key === 'startedAt' || key === 'durationMs' || key === 'latencyMs' ? undefined : value)).replaceAll(`${runId}/`, 'RUN/'));
}

function tempStore(): ResultStore {
  return ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-fleet-')), 'icabench.db'));
}

describe('fleet campaigns on a real redis-server', () => {
  let redis: TestRedis;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(workers.map(stopWorker));
    await redis?.stop();
  });

  it('a campaign no live worker can serve fails at once, naming what it needs and the workers there are', async () => {
    const voice = loadCampaignConfig('bench-configs/voice-quickstart.yaml');
    await expect(openFleetRunner(dialogueKind, voice, { redisUrl: redis.url, log: () => undefined, progressMs: 0 })).rejects.toThrow(/no worker on .* can serve dialogue campaign "[^"]+": it needs audio\+text over reference\. Live workers: none/);
  });

  it('3 worker processes store the same conversations as one process, conversation by conversation', { timeout: 240_000 }, async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 18;
    const store = tempStore();
    try {
      const local = await runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) });
      for (const rig of ['rig-a', 'rig-b', 'rig-c']) workers.push(spawnCliWorker(redis.url, rig, ['--concurrency', '2']));
      await waitForWorkers(redis.url, 3);
      // voice jobs go only to audio workers: these text workers are named in the refusal
      const voice = loadCampaignConfig('bench-configs/voice-quickstart.yaml');
      await expect(openFleetRunner(dialogueKind, voice, { redisUrl: redis.url, log: () => undefined, progressMs: 0 })).rejects.toThrow(/needs audio\+text over reference\. Live workers: rig-a \(text\+vehicle over reference\)/);

      const executor = await openFleetRunner(dialogueKind, campaign, { redisUrl: redis.url, log: () => undefined, progressMs: 0 });
      const events: CampaignEvent[] = [];
      const fleet = await runCampaign(campaign, { store, executor, onEvent: (e) => events.push(e) });
      expect(fleet.status).toBe('completed');
      // the live view: every conversation was taken by one of the rigs, and the folded snapshot counts each once
      const taken = events.filter((e) => e.type === 'conversation_rig');
      expect(new Set(taken.map((e) => e.key)).size).toBe(18);
      expect(taken.every((e) => ['rig-a', 'rig-b', 'rig-c'].includes(e.rig))).toBe(true);
      const live = emptySnapshot();
      for (const e of events) applyCampaignEvent(live, e);
      expect(live.rigs.reduce((sum, r) => sum + r.done, 0)).toBe(18);
      expect(live.rigs.every((r) => r.running === 0)).toBe(true);
      const byKey = (runId: string) => new Map([...store.conversations(runId)].map((c) => [c.spec.key, comparable(c, runId)]));
      const localResults = byKey(local.runId);
      const fleetResults = byKey(fleet.runId);
      expect(localResults.size).toBe(18);
      expect([...fleetResults.keys()].sort()).toEqual([...localResults.keys()].sort());
      for (const [key, result] of localResults) expect(fleetResults.get(key), key).toEqual(result);
      // the comparison is not between fault-free runs
      expect(JSON.stringify([...fleetResults.values()])).toContain('"profile":');
      const facts = store.runFacts(fleet.runId).filter((f) => f.kind === 'fleet.workers');
      expect(facts).toHaveLength(1);
    } finally {
      store.close();
      await Promise.all(workers.splice(0).map(stopWorker));
    }
  });

  it('one record: a fleet run stores the llm.calls, vehicle.frames and run.invocation facts a local run stores (same llm and vehicle summary sections)', { timeout: 240_000 }, async () => {
    const model = await startFakeLlmServer({ respond: benchModelResponder(), models: ['judge'] });
    const campaign = loadCampaignConfig('bench-configs/parked-safety.yaml');
    campaign.config.conversations = 8;
    campaign.config.judges = [`openai-compat:${model.url}/v1#judge`];
    const store = tempStore();
    try {
      const local = await runCampaign(campaign, { store });
      for (const rig of ['facts-a', 'facts-b']) workers.push(spawnFixtureWorker(redis.url, rig, { concurrency: 2 }));
      await waitForWorkers(redis.url, 2, 60_000, (w) => w.rig.startsWith('facts-'));
      const executor = await openFleetRunner(dialogueKind, campaign, { redisUrl: redis.url, log: () => undefined, progressMs: 0 });
      const fleet = await runCampaign(campaign, { store, executor });
      expect(fleet.status).toBe('completed');
      const [localSummary, fleetSummary] = [await summarizeRun(store, local.runId), await summarizeRun(store, fleet.runId)];
      expect(localSummary.vehicle?.framesSent).toBeGreaterThan(0);
      expect(fleetSummary.vehicle).toEqual(localSummary.vehicle);
      // what depends on the clock left out: latencies and the model time derived from them
      const counted = (section: unknown) => {
        const llm = LlmUsageSummarySchema.parse(section);
        return { calls: llm.calls, callsPerTurn: llm.callsPerTurn, tokensIn: llm.tokensIn, tokensOut: llm.tokensOut, errors: llm.errors, byKind: llm.byKind, conversations: llm.perConversation.conversations };
      };
      expect(localSummary.llm?.calls).toBeGreaterThan(0);
      expect(counted(fleetSummary.llm)).toEqual(counted(localSummary.llm));
      // every conversation's facts were stored with it: one vehicle.frames per conversation, each llm.calls names its conversation
      const frames = store.runFacts(fleet.runId, 'vehicle.frames').map((f) => (f.data as { conversation: string }).conversation).sort();
      expect(frames).toEqual([...store.conversations(fleet.runId)].map((c) => c.spec.key).sort());
      expect(store.runFacts(fleet.runId, 'llm.calls').every((f) => typeof (f.data as { conversation: unknown }).conversation === 'string')).toBe(true);
      // the run.invocation, tiers.resolved and vehicle.feed of each worker that ran a conversation, once each
      expect(fleetSummary.invocations?.length).toBeGreaterThanOrEqual(1);
      expect(fleetSummary.invocations!.length).toBeLessThanOrEqual(2);
      expect(store.runFacts(fleet.runId, 'tiers.resolved')).toHaveLength(fleetSummary.invocations!.length);
      expect(store.runFacts(fleet.runId, 'vehicle.feed')).toHaveLength(fleetSummary.invocations!.length);
    } finally {
      store.close();
      await model.close();
      await Promise.all(workers.splice(0).map(stopWorker));
    }
  });

  it('Ctrl+C stops enqueueing; --resume on the fleet stores the rest, each conversation once', { timeout: 240_000 }, async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 40;
    for (let i = 0; i < 2; i++) workers.push(spawnFixtureWorker(redis.url, `resume-${i}`, { concurrency: 2, latencyMs: 10 }));
    await waitForWorkers(redis.url, 2, 60_000, (w) => w.rig.startsWith('resume-'));
    const store = tempStore();
    try {
      const controller = new AbortController();
      const first = await runCampaign(campaign, {
        store,
        executor: await openFleetRunner(dialogueKind, campaign, { redisUrl: redis.url, log: () => undefined, progressMs: 0 }),
        signal: controller.signal,
        onEvent: (event) => event.type === 'progress' && event.done >= 10 && controller.abort(),
      });
      expect(first.status).toBe('interrupted');
      expect(first.done).toBeLessThan(40);
      const resumed = await runCampaign(campaign, {
        store,
        resumeRunId: first.runId,
        executor: await openFleetRunner(dialogueKind, campaign, { redisUrl: redis.url, log: () => undefined, progressMs: 0 }),
      });
      expect(resumed.status).toBe('completed');
      const keys = [...store.conversations(first.runId)].map((c) => c.spec.key);
      expect(keys).toHaveLength(40);
      expect(new Set(keys).size).toBe(40);
    } finally {
      store.close();
      await Promise.all(workers.splice(0).map(stopWorker));
    }
  });

  it('icabench run --fleet writes the outputs a local run writes (summary.json, report.html, junit.xml, conversations.csv); a remote Redis without TLS is refused', { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-fleet-cli-'));
    const config = join(dir, 'fleet.yaml');
    writeFileSync(config, readFileSync(join(REPO_ROOT, 'bench-configs/quickstart.yaml'), 'utf8').replace('conversations: 60', 'conversations: 6').replace('seeds: seeds/in-car.yaml', `seeds: ${join(REPO_ROOT, 'bench-configs/seeds/in-car.yaml')}`));
    workers.push(spawnCliWorker(redis.url, 'cli-rig'));
    await waitForWorkers(redis.url, 1, 60_000, (w) => w.rig === 'cli-rig');
    try {
      const run = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/icabench.js'), 'run', config, '--fleet', redis.url, '--workspace', join(dir, 'ws'), '--out', join(dir, 'out'), '--no-progress'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 180_000 });
      // workers of earlier tests may still be listed until their heartbeats expire (6 s): only cli-rig is asked for
      expect(run.stderr).toMatch(/fleet: \d+ worker\(s\) can serve text over reference: [^\n]*\bcli-rig\b/);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/completed: 6 conversations/);
      // the progress names the rigs that ran the conversations
      expect(run.stderr).toMatch(/6\/6 conversations \([\d.]+ s\) \| cli-rig 0 running, 6 done/);
      for (const file of ['summary.json', 'report.html', 'junit.xml', 'conversations.csv']) expect(existsSync(join(dir, 'out', file)), file).toBe(true);
      expect(JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8')).conversations).toBe(6);
      // a remote Redis without TLS and password is refused before anything runs
      const refused = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/icabench.js'), 'run', config, '--fleet', 'redis://10.1.2.3:6379', '--workspace', join(dir, 'ws2')], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(/--fleet: the Redis at 10\.1\.2\.3 is not on this machine, and the URL has neither a password nor TLS/);
      expect(existsSync(join(dir, 'ws2', 'icabench.db'))).toBe(false);
    } finally {
      await Promise.all(workers.splice(0).map(stopWorker));
    }
  });

  it('the bench app started with a fleet runs a campaign on its workers, and the live view names the rig of each conversation', { timeout: 240_000 }, async () => {
    workers.push(spawnFixtureWorker(redis.url, 'app-rig', { concurrency: 2 }));
    await waitForWorkers(redis.url, 1, 60_000, (w) => w.rig === 'app-rig');
    const h = await startHarness({ fleet: redis.url });
    try {
      const text = readFileSync(join(REPO_ROOT, 'bench-configs/quickstart.yaml'), 'utf8').replace('conversations: 60', 'conversations: 4');
      const started = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text } });
      expect(started.status, JSON.stringify(started.json)).toBe(202);
      await h.server.control.settled();
      const runId: string = started.json.runId;
      expect(h.store.getRun(runId)?.status).toBe('completed');
      expect([...h.store.conversations(runId)]).toHaveLength(4);
      const snapshot = (await h.api('/api/campaign')).json;
      expect(snapshot.rigs).toEqual([expect.objectContaining({ rig: 'app-rig', running: 0, done: 4 })]);
      expect(h.store.runFacts(runId, 'fleet.workers').length).toBeGreaterThan(0);
    } finally {
      await h.close();
      // a live worker would take the next tests' jobs from the same queues
      await Promise.all(workers.splice(0).map(stopWorker));
    }
  });

  it('a job that does not parse is failed with the reason and never run', { timeout: 60_000 }, async () => {
    let opened = 0;
    const worker = await startFleetWorker({
      redisUrl: redis.url,
      rig: 'strict',
      capabilities: ['text'],
      transports: ['reference'],
      concurrency: 1,
      lockMs: 5_000,
      log: () => undefined,
      openRunner: async () => {
        opened++;
        throw new Error('must not open a runner for a bad job');
      },
    });
    const connection = fleetRedisOptions(redis.url);
    const name = itemQueueName({ transport: 'reference', capabilities: ['text'] });
    const queue = new Queue(name, { connection });
    const events = new QueueEvents(name, { connection });
    try {
      await events.waitUntilReady();
      const failed = new Promise<string>((resolve) => events.on('failed', ({ jobId, failedReason }) => jobId === 'bad-1' && resolve(failedReason)));
      await queue.add('conversation', { runId: 'r1', key: 42, item: {} }, { jobId: 'bad-1', attempts: 3 });
      const reason = await failed;
      expect(reason).toMatch(/^bad job bad-1: key: .*string/);
      const job = await queue.getJob('bad-1');
      expect(job?.attemptsMade).toBe(1);
      expect(opened).toBe(0);
    } finally {
      await events.close();
      await queue.close();
      await worker.close();
    }
  });

  it('SIGKILL of a worker 5 times during a 200-conversation run: none lost, none stored twice, the killed ones rerun elsewhere', { timeout: 300_000 }, async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 200;
    const spawnOne = (i: number) => spawnFixtureWorker(redis.url, `rig-${i}`, { concurrency: 2, lockMs: 1_500, latencyMs: 15 });
    for (let i = 0; i < 4; i++) workers.push(spawnOne(i));
    await waitForWorkers(redis.url, 4);
    const store = tempStore();
    try {
      const executor = await openFleetRunner(dialogueKind, campaign, { redisUrl: redis.url, log: () => undefined, progressMs: 0 });
      let kills = 0;
      let killing = false;
      let spawned = 4;
      const killOne = async () => {
        killing = true;
        // a worker in the middle of a conversation (its heartbeat names it)
        const busy = await waitForWorkers(redis.url, 1, 30_000, (w) => w.current.length > 0 && w.state === 'ready');
        const victim = workers.find((w) => busy.some((b) => b.pid === w.child.pid));
        if (victim) {
          await stopWorker(victim);
          kills++;
          workers.push(spawnOne(spawned++));
        }
        killing = false;
      };
      const result = await runCampaign(campaign, {
        store,
        executor,
        onEvent: (event) => {
          if (event.type === 'progress' && !killing && kills < 5 && event.done >= 20 + kills * 30) void killOne();
        },
      });
      const { stalled } = executor.counts();
      expect(kills).toBe(5);
      expect(result.status).toBe('completed');
      const keys = [...store.conversations(result.runId)].map((c) => c.spec.key);
      expect(keys).toHaveLength(200);
      expect(new Set(keys).size).toBe(200);
      expect([...store.remainingSpecs(result.runId)]).toHaveLength(0);
      // the conversations the killed workers held went back to the queue and ran on another worker
      expect(stalled).toBeGreaterThanOrEqual(5);
    } finally {
      store.close();
      await Promise.all(workers.splice(0).map(stopWorker));
    }
  });
});

describe('a worker whose rig cannot reach its head unit', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('stops taking jobs, says why in its heartbeat, and the conversation goes back to the queue', { timeout: 60_000 }, async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 2;
    const lines: string[] = [];
    const worker = await startFleetWorker({
      redisUrl: redis.url,
      rig: 'unplugged',
      capabilities: ['text'],
      transports: ['reference'],
      concurrency: 1,
      lockMs: 5_000,
      heartbeatMs: 200,
      log: (line) => lines.push(line),
      openRunner: async () => {
        throw new Error('no head unit dialled in within 60 s');
      },
    });
    const store = tempStore();
    const controller = new AbortController();
    try {
      const executor = await openFleetRunner(dialogueKind, campaign, { redisUrl: redis.url, log: () => undefined, progressMs: 0 });
      const running = runCampaign(campaign, { store, executor, signal: controller.signal });
      const [status] = await waitForWorkers(redis.url, 1, 30_000, (w) => w.state === 'headunit_unreachable');
      expect(status.rig).toBe('unplugged');
      expect(status.reason).toMatch(/rig unplugged cannot reach its head unit: no head unit dialled in within 60 s/);
      expect(lines.join('\n')).toMatch(/not taking jobs any more/);
      // the conversation it took is back on the queue (a failed attempt, to be retried by another rig), not lost and not stored
      const runId = store.listRuns()[0].id;
      const queue = new Queue(itemQueueName({ transport: 'reference', capabilities: ['text'] }), { connection: fleetRedisOptions(redis.url) });
      try {
        let back = false;
        for (let i = 0; i < 100 && !back; i++) {
          back = (await queue.getJobs(['waiting', 'delayed'])).some((job) => job.id?.startsWith(`${runId}__`) && job.attemptsMade === 1);
          if (!back) await new Promise((r) => setTimeout(r, 100));
        }
        expect(back).toBe(true);
      } finally {
        await queue.close();
      }
      // nothing was stored; the run stops on Ctrl+C with its conversations still to run (resumable)
      controller.abort();
      const result = await running;
      expect(result.status).toBe('interrupted');
      expect([...store.remainingSpecs(result.runId)]).toHaveLength(2);
    } finally {
      store.close();
      await worker.close();
    }
  });
});
