import { Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { LoadedCampaign } from '../kinds/dialogue/config.ts';
import { ItemAborted } from '../run/kind.ts';
import type { ConversationExecutor, FinishedConversation } from '../kinds/dialogue/run.ts';
import type { ResultStore } from '../store/store.ts';
import {
  ConversationResultMessageSchema,
  JobTakenSchema,
  RUN_KEY_PREFIX,
  WORKER_KEY_PREFIX,
  WorkerStatusSchema,
  campaignRequirements,
  canServe,
  conversationJobId,
  conversationQueueName,
  describeRequirements,
  resultQueueName,
  type RunDescriptor,
  type WorkerStatus,
} from './protocol.ts';
import { connectFleetRedis, fleetRedisOptions, redactedRedisUrl } from './redis.ts';

/** Run fact kind: the workers that could serve the run when this invocation started. */
export const FLEET_FACT = 'fleet.workers';

/** Attempts of a conversation whose worker threw (its rig failed); a stalled job (worker killed) does not use one up. */
const JOB_ATTEMPTS = 3;
/** The run descriptor outlives the coordinator a week: workers finish abandoned jobs, a resume reuses it. */
const DESCRIPTOR_TTL_S = 7 * 24 * 3600;

export interface FleetOptions {
  redisUrl: string;
  log: (line: string) => void;
  /** how often the per-rig progress line is printed (ms); 0 = never */
  progressMs?: number;
}

/** Progress per rig: conversations running now, finished, and how many of its jobs stalled (worker lost). */
export interface RigProgress {
  rig: string;
  workers: number;
  running: number;
  done: number;
}

export interface FleetExecutor extends ConversationExecutor {
  progress(): Promise<{ rigs: RigProgress[]; stalled: number; failed: number; duplicates: number }>;
  /** what this invocation saw (readable after close): jobs that stalled and went back to the queue, jobs that failed, results that came twice */
  counts(): { stalled: number; failed: number; duplicates: number };
}

/** The fleet's live workers: every heartbeat key still present (it expires when a worker stops beating). */
export async function liveWorkers(redis: Redis, log: (line: string) => void = () => undefined): Promise<WorkerStatus[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${WORKER_KEY_PREFIX}*`, 'COUNT', 200);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  if (keys.length === 0) return [];
  const values = await redis.mget(keys);
  const workers: WorkerStatus[] = [];
  values.forEach((raw, i) => {
    if (raw === null) return;
    const parsed = WorkerStatusSchema.safeParse(JSON.parse(raw));
    if (parsed.success) workers.push(parsed.data);
    else log(`fleet: ignoring the heartbeat ${keys[i]}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  });
  return workers.sort((a, b) => a.id.localeCompare(b.id));
}

/** The fleet's workers as the bench app lists them (`icabench serve --fleet`): one connection, opened on first use. */
export function fleetWorkerSource(redisUrl: string): { workers: () => Promise<WorkerStatus[]>; close: () => void } {
  const redis = new Redis({ ...fleetRedisOptions(redisUrl, '--fleet'), lazyConnect: true, maxRetriesPerRequest: 1 });
  return { workers: () => liveWorkers(redis), close: () => redis.disconnect() };
}

/**
 * The coordinator side of a fleet run (`icabench run CONFIG --fleet redis://…`): runCampaign plans,
 * stores and keeps budget, Ctrl+C and --resume as for a local run; this executor puts each planned
 * conversation on the queue of its requirements (capability routing), and hands back the finished
 * conversation when a worker returns it. It fails at once when no live worker can serve the campaign.
 */
export async function openFleetExecutor(campaign: LoadedCampaign, options: FleetOptions): Promise<FleetExecutor> {
  const { log } = options;
  const connection = fleetRedisOptions(options.redisUrl, '--fleet');
  const redis = await connectFleetRedis(options.redisUrl, '--fleet', log);
  const requirements = campaignRequirements(campaign);
  const workers = await liveWorkers(redis, log);
  const capable = workers.filter((w) => w.state === 'ready' && canServe(w, requirements));
  if (capable.length === 0) {
    redis.disconnect();
    const seen = workers.length
      ? workers.map((w) => `${w.rig} (${w.capabilities.join('+')} over ${w.transports.join('/')}${w.state === 'ready' ? '' : `, ${w.state}: ${w.reason ?? ''}`})`).join('; ')
      : 'none';
    throw new Error(
      `--fleet: no worker on ${redactedRedisUrl(options.redisUrl)} can serve campaign "${campaign.config.name}": it needs ${describeRequirements(requirements)}. ` +
        `Live workers: ${seen}. Start one on a rig with: icabench worker --redis URL --rig NAME --capabilities ${requirements.capabilities.join(',')} --transport ${requirements.transport}`,
    );
  }
  const queueName = conversationQueueName(requirements);
  const queue = new Queue(queueName, { connection });
  const events = new QueueEvents(queueName, { connection });
  queue.on('error', (error) => log(`fleet queue: ${error.message}`));
  events.on('error', (error) => log(`fleet events: ${error.message}`));
  await events.waitUntilReady();

  /** each conversation in flight; `rig`: the rig last said to run it (its progress event and its result travel apart: the result's rig wins) */
  const pending = new Map<string, { resolve: (f: FinishedConversation) => void; reject: (e: Error) => void; onRig: (rig: string) => void; rig: string | null }>();
  /** results that came back before this invocation asked for them (a resumed run's abandoned conversations) */
  const early = new Map<string, { finished: FinishedConversation; rig: string }>();
  const doneByRig = new Map<string, number>();
  let stalled = 0;
  let failed = 0;
  let duplicates = 0;
  let runId: string | null = null;
  let descriptorWritten: Promise<unknown> | null = null;
  let results: Worker | null = null;
  let store: ResultStore | null = null;
  /** the workers whose invocation facts this invocation recorded */
  const invocationRecorded = new Set<string>();
  let closing: Promise<void> | null = null;

  events.on('stalled', ({ jobId }) => {
    if (runId && jobId.startsWith(`${runId}__`)) {
      stalled++;
      log(`fleet: ${jobId.slice(runId.length + 2)} stalled (its worker stopped); it goes back to the queue`);
    }
  });
  events.on('progress', ({ jobId, data }) => {
    if (!runId || !jobId.startsWith(`${runId}__`)) return;
    const taken = JobTakenSchema.safeParse(data);
    if (taken.success) tellRig(jobId.slice(runId.length + 2), taken.data.rig);
    else log(`fleet: ignoring the progress of ${jobId}: ${taken.error.issues[0]?.message ?? 'invalid'}`);
  });
  events.on('failed', ({ jobId, failedReason }) => {
    if (!runId || !jobId.startsWith(`${runId}__`)) return;
    const key = jobId.slice(runId.length + 2);
    failed++;
    pending.get(key)?.reject(new Error(`conversation ${key} failed on the fleet: ${failedReason}`));
    pending.delete(key);
  });

  const progress = async () => {
    const live = await liveWorkers(redis);
    const rigs = new Map<string, RigProgress>();
    const entry = (rig: string) => rigs.get(rig) ?? rigs.set(rig, { rig, workers: 0, running: 0, done: 0 }).get(rig)!;
    for (const worker of live) {
      const e = entry(worker.rig);
      e.workers++;
      e.running += worker.current.filter((c) => runId !== null && c.startsWith(`${runId}/`)).length;
    }
    for (const [rig, n] of doneByRig) entry(rig).done = n;
    return { rigs: [...rigs.values()].sort((a, b) => a.rig.localeCompare(b.rig)), stalled, failed, duplicates };
  };
  const progressTimer =
    (options.progressMs ?? 5_000) > 0
      ? setInterval(() => {
          void progress()
            .then((p) => log(`fleet: ${p.rigs.map((r) => `${r.rig} ${r.running} running, ${r.done} done`).join(' | ')}; stalled ${p.stalled}, failed ${p.failed}`))
            .catch(() => undefined);
        }, options.progressMs ?? 5_000)
      : null;
  progressTimer?.unref();

  log(`fleet: ${capable.length} worker(s) can serve ${describeRequirements(requirements)}: ${capable.map((w) => w.rig).join(', ')}`);
  const capacity = capable.reduce((sum, w) => sum + w.concurrency, 0);

  return {
    // keeps every capable worker busy with one more job waiting each; workers that join later take from the same queue
    concurrency: Math.max(8, 2 * capacity),
    meta: { simulator: campaign.config.simulator, judges: [...campaign.config.judges] },
    progress,
    counts: () => ({ stalled, failed, duplicates }),
    record(runStore, id) {
      runId = id;
      store = runStore;
      runStore.addRunFact(id, FLEET_FACT, { requirements, queue: queueName, workers: capable.map((w) => ({ id: w.id, rig: w.rig, capabilities: w.capabilities, transports: w.transports })) });
      const descriptor: RunDescriptor = { runId: id, path: campaign.path, config: campaign.config, seeds: campaign.seeds, strategies: campaign.strategies };
      descriptorWritten = redis.set(RUN_KEY_PREFIX + id, JSON.stringify(descriptor), 'EX', DESCRIPTOR_TTL_S);
      results = new Worker(
        resultQueueName(id),
        async (job) => {
          const parsed = ConversationResultMessageSchema.safeParse(job.data);
          if (!parsed.success) throw new UnrecoverableError(`result ${job.id} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
          const message = parsed.data;
          if (message.runId !== id) throw new UnrecoverableError(`result ${job.id} belongs to run ${message.runId}, not ${id}`);
          if (!invocationRecorded.has(message.workerId)) {
            // each worker's run.invocation, tiers.resolved and vehicle.feed, once per worker and invocation, as a local run records its rig's
            for (const fact of message.invocationFacts) store?.addRunFact(id, fact.kind, fact.data);
            invocationRecorded.add(message.workerId);
          }
          const finished: FinishedConversation = {
            result: message.result,
            facts: message.facts,
            artifacts: message.artifacts.map((a) => ({ name: a.name, mime: a.mime, ...(a.base64 !== undefined ? { bytes: Buffer.from(a.base64, 'base64') } : {}), ...(a.path ? { path: a.path } : {}) })),
          };
          const key = message.result.spec.key;
          const waiting = pending.get(key);
          if (waiting) {
            tellRig(key, message.rig);
            pending.delete(key);
            doneByRig.set(message.rig, (doneByRig.get(message.rig) ?? 0) + 1);
            waiting.resolve(finished);
          } else if (store?.getConversation(id, key)) {
            duplicates++;
          } else {
            early.set(key, { finished, rig: message.rig });
          }
        },
        { connection, concurrency: 1 },
      );
      results.on('failed', (job, error) => log(`fleet: ${error.message}`));
      return { conversationEnded: () => undefined, invocationEnded: () => undefined };
    },
    ready: async () => null,
    async run(id, { item: spec }, signal, emit) {
      const onRig = (rig: string) => emit({ type: 'conversation_rig', runId: id, key: spec.key, rig });
      await descriptorWritten;
      const already = early.get(spec.key);
      if (already) {
        early.delete(spec.key);
        onRig(already.rig);
        return already.finished;
      }
      const jobId = conversationJobId(id, spec.key);
      const finished = new Promise<FinishedConversation>((resolve, reject) => pending.set(spec.key, { resolve, reject, onRig, rig: null }));
      await queue.add('conversation', { runId: id, spec }, { jobId, attempts: JOB_ATTEMPTS, backoff: { type: 'fixed', delay: 1_000 }, removeOnComplete: true, removeOnFail: true });
      if (signal.aborted) return abandon(spec.key, jobId);
      const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new ItemAborted(spec.key)), { once: true }));
      try {
        return await Promise.race([finished, aborted]);
      } catch (error) {
        if (error instanceof ItemAborted) return abandon(spec.key, jobId);
        throw error;
      }
    },
    close: () =>
      (closing ??= (async () => {
        if (progressTimer) clearInterval(progressTimer);
        await results?.close();
        await events.close();
        await queue.close();
        redis.disconnect();
      })()),
  };

  /** Passes on which rig runs a conversation in flight, once per change of rig. */
  function tellRig(key: string, rig: string): void {
    const entry = pending.get(key);
    if (!entry || entry.rig === rig) return;
    entry.rig = rig;
    entry.onRig(rig);
  }

  /** Ctrl+C or the budget: a waiting job is taken off the queue; a running one finishes on its rig, and its result is kept for --resume only if it arrives in time. */
  async function abandon(key: string, jobId: string): Promise<never> {
    pending.delete(key);
    const job = await queue.getJob(jobId);
    if (job && ((await job.isWaiting()) || (await job.isDelayed()))) await job.remove().catch(() => undefined);
    throw new ItemAborted(key);
  }
}
