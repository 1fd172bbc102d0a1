import { Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { LoadedCampaign } from '../kinds/dialogue/config.ts';
import { ConversationAborted } from '../kinds/dialogue/conversation.ts';
import type { ConversationExecutor, FinishedConversation } from '../kinds/dialogue/run.ts';
import type { ResultStore } from '../store/store.ts';
import type { ConversationSpec } from '../domain/conversation.ts';
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
/** How long a fleet run waits for its Redis to come back before it stops as interrupted (`--fleet-grace`). */
export const DEFAULT_REDIS_GRACE_MS = 120_000;

export interface FleetOptions {
  redisUrl: string;
  log: (line: string) => void;
  /** how often the per-rig progress line is printed when it changed (ms); 0 = never */
  progressMs?: number;
  /** how long the run waits for an unreachable Redis before it stops as interrupted (ms; default DEFAULT_REDIS_GRACE_MS) */
  redisGraceMs?: number;
  /** how often the conversations in flight are checked against the queue, to enqueue again those that vanished (ms) */
  reconcileMs?: number;
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
  /** what this invocation saw (readable after close): jobs that stalled and went back to the queue, jobs that failed, results that came twice, jobs that vanished and were enqueued again */
  counts(): { stalled: number; failed: number; duplicates: number; requeued: number };
}

/**
 * A conversation in flight: `rig` is the rig last said to run it (its progress event and its result travel apart: the
 * result's rig wins); `enqueued`: its job was added (only then can it vanish from the queue).
 */
interface PendingConversation {
  spec: ConversationSpec;
  resolve: (finished: FinishedConversation) => void;
  reject: (error: Error) => void;
  onRig: (rig: string) => void;
  rig: string | null;
  enqueued: boolean;
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
  const { redis, health } = await connectFleetRedis(options.redisUrl, '--fleet', log);
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
  queue.on('error', health.errorListener('fleet queue'));
  events.on('error', health.errorListener('fleet events'));
  await events.waitUntilReady();

  /** each conversation in flight, by key */
  const pending = new Map<string, PendingConversation>();
  /** results that came back before this invocation asked for them (a resumed run's abandoned conversations) */
  const early = new Map<string, { finished: FinishedConversation; rig: string }>();
  const doneByRig = new Map<string, number>();
  let stalled = 0;
  let failed = 0;
  let duplicates = 0;
  let requeued = 0;
  let runId: string | null = null;
  let descriptor: RunDescriptor | null = null;
  let descriptorWritten: Promise<unknown> | null = null;
  let results: Worker | null = null;
  /** the result queue, read when looking for vanished jobs (a result waiting there has not vanished) */
  let resultQueue: Queue | null = null;
  /** why the run must stop: its Redis stayed away longer than the grace */
  let redisLost: string | null = null;
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
  let lastProgress = '';
  const progressTimer =
    (options.progressMs ?? 5_000) > 0
      ? setInterval(() => {
          // commands wait for the reconnect while Redis is away: the outage lines say what goes on meanwhile
          if (health.down) return;
          void progress()
            .then((p) => {
              const line = `fleet: ${p.rigs.map((r) => `${r.rig} ${r.running} running, ${r.done} done`).join(' | ')}; stalled ${p.stalled}, failed ${p.failed}`;
              if (line !== lastProgress) log(line);
              lastProgress = line;
            })
            .catch(() => undefined);
        }, options.progressMs ?? 5_000)
      : null;
  progressTimer?.unref();

  // a lost or flushed queue: the conversations in flight are checked against it now and then, and at once when Redis is back
  let reconciling: Promise<void> | null = null;
  const reconcileSoon = () => {
    if (health.down || redisLost || reconciling) return;
    reconciling = reconcile()
      .catch((error: Error) => log(`fleet: checking the queue failed: ${error.message}`))
      .finally(() => (reconciling = null));
  };
  const reconcileTimer = setInterval(reconcileSoon, options.reconcileMs ?? 5_000);
  reconcileTimer.unref();
  const graceMs = options.redisGraceMs ?? DEFAULT_REDIS_GRACE_MS;
  let graceTimer: NodeJS.Timeout | null = null;
  health.onChange((change) => {
    if (change.state === 'back') {
      if (graceTimer) clearTimeout(graceTimer);
      graceTimer = null;
      return reconcileSoon();
    }
    graceTimer ??= setTimeout(() => {
      redisLost = `the fleet's Redis at ${redactedRedisUrl(options.redisUrl)} stayed unreachable for ${Math.round(graceMs / 1000)} s (${change.cause})`;
      log(`fleet: ${redisLost}; the run stops`);
      // the conversations in flight are abandoned: their results cannot come back; --resume runs them again
      for (const [key, entry] of pending) {
        pending.delete(key);
        entry.reject(new ConversationAborted());
      }
    }, graceMs);
  });

  log(`fleet: ${capable.length} worker(s) can serve ${describeRequirements(requirements)}: ${capable.map((w) => w.rig).join(', ')}`);
  const capacity = capable.reduce((sum, w) => sum + w.concurrency, 0);

  return {
    // keeps every capable worker busy with one more job waiting each; workers that join later take from the same queue
    concurrency: Math.max(8, 2 * capacity),
    meta: { simulator: campaign.config.simulator, judges: [...campaign.config.judges] },
    progress,
    counts: () => ({ stalled, failed, duplicates, requeued }),
    record(runStore, id) {
      runId = id;
      store = runStore;
      runStore.addRunFact(id, FLEET_FACT, { requirements, queue: queueName, workers: capable.map((w) => ({ id: w.id, rig: w.rig, capabilities: w.capabilities, transports: w.transports })) });
      descriptor = { runId: id, path: campaign.path, config: campaign.config, seeds: campaign.seeds, strategies: campaign.strategies };
      descriptorWritten = writeDescriptor();
      resultQueue = new Queue(resultQueueName(id), { connection });
      resultQueue.on('error', health.errorListener('fleet result queue'));
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
      results.on('error', health.errorListener('fleet results'));
      return { conversationEnded: () => undefined, invocationEnded: () => undefined };
    },
    ready: async () => redisLost,
    async run(id, { item: spec }, signal, emit) {
      const onRig = (rig: string) => emit({ type: 'conversation_rig', runId: id, key: spec.key, rig });
      if (redisLost) throw new ConversationAborted();
      const already = early.get(spec.key);
      if (already) {
        early.delete(spec.key);
        onRig(already.rig);
        return already.finished;
      }
      const jobId = conversationJobId(id, spec.key);
      let entry!: PendingConversation;
      const finished = new Promise<FinishedConversation>((resolve, reject) => {
        entry = { spec, resolve, reject, onRig, rig: null, enqueued: false };
        pending.set(spec.key, entry);
      });
      const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new ConversationAborted()), { once: true }));
      // either may settle while the other is awaited
      finished.catch(() => undefined);
      aborted.catch(() => undefined);
      try {
        // while Redis is away the add waits for the reconnect; a grace running out rejects `finished`
        await Promise.race([descriptorWritten!.then(() => enqueue(id, spec)), finished, aborted]);
        entry.enqueued = true;
        return await Promise.race([finished, aborted]);
      } catch (error) {
        if (!(error instanceof ConversationAborted)) throw error;
        // a lost Redis cannot take the job back: it reruns on --resume
        if (redisLost) throw error;
        return abandon(spec.key, jobId);
      }
    },
    close: () =>
      (closing ??= (async () => {
        if (progressTimer) clearInterval(progressTimer);
        clearInterval(reconcileTimer);
        if (graceTimer) clearTimeout(graceTimer);
        if (redisLost) {
          // nothing can be said to a Redis that is gone: the result worker stops without finishing its job, and the event
          // stream's close (which waits for its connection to end, never while it is reconnecting) is not waited for
          await results?.close(true);
          await resultQueue?.close();
          await queue.close();
          void events.close().catch(() => undefined);
        } else {
          await results?.close();
          await resultQueue?.close();
          await events.close();
          await queue.close();
        }
        redis.disconnect();
      })()),
  };

  /** The run's campaign for the workers; written again when Redis comes back without it (restarted without persistence). */
  function writeDescriptor(): Promise<unknown> {
    return descriptor ? redis.set(RUN_KEY_PREFIX + descriptor.runId, JSON.stringify(descriptor), 'EX', DESCRIPTOR_TTL_S) : Promise.resolve();
  }

  /** One planned conversation on the queue of its requirements; its job id makes a second add of the same conversation a no-op. */
  async function enqueue(id: string, spec: ConversationSpec): Promise<void> {
    await queue.add('conversation', { runId: id, spec }, { jobId: conversationJobId(id, spec.key), attempts: JOB_ATTEMPTS, backoff: { type: 'fixed', delay: 1_000 }, removeOnComplete: true, removeOnFail: true });
  }

  /**
   * Finds the conversations in flight whose job is on neither queue (Redis restarted without persistence, or was
   * flushed) and enqueues them again. The order of the checks matters: a job leaves the conversation queue only
   * after its result is on the result queue, and a result leaves that queue only after it was taken from `pending`.
   */
  async function reconcile(): Promise<void> {
    if (!runId || !resultQueue) return;
    const vanished: ConversationSpec[] = [];
    for (const [key, entry] of [...pending]) {
      if (!entry.enqueued) continue;
      if (await queue.getJob(conversationJobId(runId, key))) continue;
      if (await resultQueue.getJob(key)) continue;
      if (pending.get(key) === entry) vanished.push(entry.spec);
    }
    if (vanished.length === 0) return;
    await writeDescriptor();
    for (const spec of vanished) await enqueue(runId, spec);
    requeued += vanished.length;
    const keys = vanished.map((s) => s.key);
    log(`fleet: ${vanished.length} conversation(s) vanished from the queue (Redis restarted without persistence or was flushed); enqueued again: ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? `, … ${keys.length - 5} more` : ''}`);
  }

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
    throw new ConversationAborted();
  }
}
