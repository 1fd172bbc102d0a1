import { Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { ItemAborted, type CampaignKindDefinition, type FinishedItem, type ItemRunner, type LoadedKindConfig, type PlannedItem } from '../run/kind.ts';
import { RUN_FACTS, type RunFactSink } from '../run/run-facts.ts';
import {
  AFTER_ITEMS_JOB,
  AfterItemsResultMessageSchema,
  ItemResultMessageSchema,
  JobTakenSchema,
  RUN_KEY_PREFIX,
  WORKER_KEY_PREFIX,
  WorkerStatusSchema,
  afterItemsJobId,
  canServe,
  describeRequirements,
  itemJobId,
  itemQueueName,
  parsedOrUnrecoverable,
  unrecoverable,
  resultQueueName,
  runRequirements,
  type RunDescriptor,
  type WorkerResult,
  type WorkerStatus,
} from './protocol.ts';
import { connectFleetRedis, fleetRedisOptions, redactedRedisUrl } from './redis.ts';

/** Run fact kind: the workers that could serve the run when this invocation started. */
export const FLEET_FACT = 'fleet.workers';

/** Attempts of an item whose worker threw (its rig failed); a stalled job (worker killed) does not use one up. */
const JOB_ATTEMPTS = 3;
/** How long the coordinator holds a result it is taking (renewed while it runs); one held by a killed coordinator is back on the queue after it. */
const RESULT_LOCK_MS = 5_000;
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
  /** how often the items in flight are checked against the queue, to enqueue again those that vanished (ms) */
  reconcileMs?: number;
}

/** Progress per rig: items running now and finished. */
export interface RigProgress {
  rig: string;
  workers: number;
  running: number;
  done: number;
}

export interface FleetRunner<Item, Finished, AfterIn = never, AfterOut = never> extends ItemRunner<Item, Finished, AfterIn, AfterOut> {
  progress(): Promise<{ rigs: RigProgress[]; stalled: number; failed: number; duplicates: number }>;
  /** what this invocation saw (readable after close): jobs that stalled and went back to the queue, jobs that failed, results that came twice, jobs that vanished and were enqueued again */
  counts(): { stalled: number; failed: number; duplicates: number; requeued: number };
}

/**
 * An item in flight: `rig` is the rig last said to run it (its progress event and its result travel apart: the
 * result's rig wins); `enqueued`: its job was added (only then can it vanish from the queue).
 */
interface PendingItem<Item, Finished> {
  planned: PlannedItem<Item>;
  resolve: (finished: Finished) => void;
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
 * The coordinator side of a fleet run (`icabench run CONFIG --fleet redis://…`), for a run of any kind: the run skeleton
 * (src/run/runner.ts) plans, stores and keeps budget, Ctrl+C and --resume as for a local run; this runner puts each planned
 * item on the queue of what its kind's config needs (capability routing) and hands back the kind's Finished value when a
 * worker returns it, decoded and validated with the kind's wire (src/run/kind.ts). The kind's after-items step (manual-QA's
 * warning-omission search) goes to a worker as a job of its own, and its output comes back to the run skeleton, which stores
 * it. It fails at once when no live worker can serve the run.
 */
export async function openFleetRunner<L extends LoadedKindConfig, Item, Finished extends FinishedItem, AfterIn = never, AfterOut = never>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the file's config form does not matter to the fleet
  kind: CampaignKindDefinition<L, Item, Finished, any, AfterIn, AfterOut>,
  loaded: L,
  options: FleetOptions,
): Promise<FleetRunner<Item, Finished, AfterIn, AfterOut>> {
  const { log } = options;
  const { wire } = kind;
  // what the workers open their runner with; a config that cannot travel fails here, before Redis is touched
  const wireLoaded = wire.loaded.encode(loaded);
  const requirements = runRequirements(wire.needs(loaded));
  const connection = fleetRedisOptions(options.redisUrl, '--fleet');
  const { redis, health } = await connectFleetRedis(options.redisUrl, '--fleet', log);
  const workers = await liveWorkers(redis, log);
  const capable = workers.filter((w) => w.state === 'ready' && canServe(w, requirements));
  if (capable.length === 0) {
    redis.disconnect();
    const seen = workers.length
      ? workers.map((w) => `${w.rig} (${w.capabilities.join('+')} over ${w.transports.join('/')}${w.state === 'ready' ? '' : `, ${w.state}: ${w.reason ?? ''}`})`).join('; ')
      : 'none';
    throw new Error(
      `--fleet: no worker on ${redactedRedisUrl(options.redisUrl)} can serve ${kind.name} campaign "${loaded.config.name}": it needs ${describeRequirements(requirements)}. ` +
        `Live workers: ${seen}. Start one on a rig with: icabench worker --redis URL --rig NAME --capabilities ${requirements.capabilities.join(',')} --transport ${requirements.transport}`,
    );
  }
  const queueName = itemQueueName(requirements);
  const queue = new Queue(queueName, { connection });
  const events = new QueueEvents(queueName, { connection });
  queue.on('error', health.errorListener('fleet queue'));
  events.on('error', health.errorListener('fleet events'));
  await events.waitUntilReady();

  /** each item in flight, by key */
  const pending = new Map<string, PendingItem<Item, Finished>>();
  /** results that came back before this invocation asked for them (a resumed run's abandoned items) */
  const early = new Map<string, { finished: Finished; rig: string }>();
  /** the items this invocation handed back (a second result of one is a duplicate) */
  const handedBack = new Set<string>();
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
  let facts: RunFactSink | null = null;
  /** the workers whose invocation facts this invocation recorded */
  const invocationRecorded = new Set<string>();
  /** the workers' set-ups (their run.invocation, as JSON) whose invocation facts this invocation recorded */
  const setUpsRecorded = new Set<string>();
  let closing: Promise<void> | null = null;
  /** the after-items step: the run skeleton waiting for its output, once its job is enqueued */
  let afterWaiting: { resolve: (output: AfterOut) => void; reject: (error: Error) => void; input: AfterIn; enqueued: boolean } | null = null;
  /** its output when it came back before it was asked for (a resumed run whose step ran for the previous invocation) */
  let afterEarly: { output: AfterOut } | null = null;

  events.on('stalled', ({ jobId }) => {
    if (runId && jobId === afterItemsJobId(runId)) log(`fleet: the step after the ${kind.nouns.items} stalled (its worker stopped); it goes back to the queue`);
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
    if (runId && jobId === afterItemsJobId(runId)) {
      afterWaiting?.reject(new Error(`the step after the ${kind.nouns.items} failed on the fleet: ${failedReason}`));
      afterWaiting = null;
      return;
    }
    if (!runId || !jobId.startsWith(`${runId}__`)) return;
    const key = jobId.slice(runId.length + 2);
    failed++;
    pending.get(key)?.reject(new Error(`${kind.nouns.item} ${key} failed on the fleet: ${failedReason}`));
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

  // a lost or flushed queue: the items in flight are checked against it now and then, and at once when Redis is back
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
      // the items in flight are abandoned: their results cannot come back; --resume runs them again
      for (const [key, entry] of pending) {
        pending.delete(key);
        entry.reject(new ItemAborted(key));
      }
      afterWaiting?.reject(new Error(redisLost));
      afterWaiting = null;
    }, graceMs);
  });

  log(`fleet: ${capable.length} worker(s) can serve ${describeRequirements(requirements)}: ${capable.map((w) => w.rig).join(', ')}`);
  const capacity = capable.reduce((sum, w) => sum + w.concurrency, 0);

  return {
    // keeps every capable worker busy with one more job waiting each; workers that join later take from the same queue
    concurrency: Math.max(8, 2 * capacity),
    meta: { fleet: describeRequirements(requirements), rigs: [...new Set(capable.map((w) => w.rig))] },
    progress,
    counts: () => ({ stalled, failed, duplicates, requeued }),
    record(sink, id) {
      runId = id;
      facts = sink;
      sink.addRunFact(id, FLEET_FACT, { requirements, queue: queueName, workers: capable.map((w) => ({ id: w.id, rig: w.rig, capabilities: w.capabilities, transports: w.transports })) });
      descriptor = { runId: id, kind: kind.name, loaded: wireLoaded };
      descriptorWritten = writeDescriptor();
      resultQueue = new Queue(resultQueueName(id), { connection });
      resultQueue.on('error', health.errorListener('fleet result queue'));
      results = new Worker(
        resultQueueName(id),
        async (job) => {
          if (job.name === AFTER_ITEMS_JOB) return afterItemsResult(id, job.id, job.data);
          const message = parsedOrUnrecoverable(ItemResultMessageSchema, job.data, `result ${job.id} is not valid`);
          if (message.runId !== id) throw new UnrecoverableError(`result ${job.id} belongs to run ${message.runId}, not ${id}`);
          const finished: Finished = unrecoverable(() => wire.finished.decode(message.finished, `fleet result ${job.id} (${kind.name} ${kind.nouns.item} ${message.key})`));
          recordFacts(id, message);
          const { key } = message;
          const waiting = pending.get(key);
          if (waiting) {
            tellRig(key, message.rig);
            pending.delete(key);
            handedBack.add(key);
            doneByRig.set(message.rig, (doneByRig.get(message.rig) ?? 0) + 1);
            waiting.resolve(finished);
          } else if (handedBack.has(key)) {
            duplicates++;
          } else {
            early.set(key, { finished, rig: message.rig });
          }
        },
        // a result is handed over in milliseconds: a short lock brings one a killed coordinator was taking back to the queue in seconds for
        // the resumed one (the default 30 s lock held it, and the same item's rerun result, deduplicated by its job id, for up to a minute)
        { connection, concurrency: 1, lockDuration: RESULT_LOCK_MS, stalledInterval: RESULT_LOCK_MS / 2, maxStalledCount: 1_000 },
      );
      results.on('failed', (job, error) => log(`fleet: ${error.message}`));
      results.on('error', health.errorListener('fleet results'));
      return { invocationEnded: () => undefined };
    },
    ready: async () => redisLost,
    async afterItems(id, input, runLog) {
      if (!kind.afterItems) throw new Error(`a ${kind.name} run has no step after its ${kind.nouns.items}`);
      if (redisLost) throw new Error(redisLost);
      if (afterEarly) {
        const { output } = afterEarly;
        afterEarly = null;
        return output;
      }
      const output = new Promise<AfterOut>((resolve, reject) => (afterWaiting = { resolve, reject, input, enqueued: false }));
      await Promise.race([descriptorWritten!.then(() => enqueueAfterItems(id, input)), output]);
      if (afterWaiting) afterWaiting.enqueued = true;
      runLog(`fleet: the step after the ${kind.nouns.items} went to a worker`);
      return output;
    },
    async run(id, planned, signal, emit) {
      const { key } = planned;
      const onRig = (rig: string) => emit({ type: 'conversation_rig', runId: id, key, rig });
      if (redisLost) throw new ItemAborted(key);
      const already = early.get(key);
      if (already) {
        early.delete(key);
        handedBack.add(key);
        onRig(already.rig);
        return already.finished;
      }
      const jobId = itemJobId(id, key);
      let entry!: PendingItem<Item, Finished>;
      const finished = new Promise<Finished>((resolve, reject) => {
        entry = { planned, resolve, reject, onRig, rig: null, enqueued: false };
        pending.set(key, entry);
      });
      const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new ItemAborted(key)), { once: true }));
      // either may settle while the other is awaited
      finished.catch(() => undefined);
      aborted.catch(() => undefined);
      try {
        // while Redis is away the add waits for the reconnect; a grace running out rejects `finished`
        await Promise.race([descriptorWritten!.then(() => enqueue(id, planned)), finished, aborted]);
        entry.enqueued = true;
        return await Promise.race([finished, aborted]);
      } catch (error) {
        if (!(error instanceof ItemAborted)) throw error;
        // a lost Redis cannot take the job back: it reruns on --resume
        if (redisLost) throw error;
        return abandon(key, jobId);
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

  /** The run's kind and loaded config for the workers; written again when Redis comes back without it (restarted without persistence). */
  function writeDescriptor(): Promise<unknown> {
    return descriptor ? redis.set(RUN_KEY_PREFIX + descriptor.runId, JSON.stringify(descriptor), 'EX', DESCRIPTOR_TTL_S) : Promise.resolve();
  }

  /**
   * What the workers run with (run.invocation, tiers.resolved, the unit's first connection, …), as a local run records its
   * runner's once per invocation: once per set-up (workers alike record what one process records; a worker on another
   * machine, build or model host adds its own); then the facts the worker's runner recorded outside any item.
   */
  function recordFacts(id: string, message: WorkerResult): void {
    if (!invocationRecorded.has(message.workerId)) {
      const setUp = JSON.stringify(message.invocationFacts.find((f) => f.kind === RUN_FACTS.invocation) ?? message.workerId);
      if (!setUpsRecorded.has(setUp)) {
        setUpsRecorded.add(setUp);
        for (const fact of message.invocationFacts) facts?.addRunFact(id, fact.kind, fact.data);
      }
      invocationRecorded.add(message.workerId);
    }
    for (const fact of message.runFacts) facts?.addRunFact(id, fact.kind, fact.data);
  }

  /** The after-items step's output from a worker: handed to the run skeleton waiting for it, or kept until it asks. */
  function afterItemsResult(id: string, jobId: string | undefined, data: unknown): void {
    const message = parsedOrUnrecoverable(AfterItemsResultMessageSchema, data, `result ${jobId} is not valid`);
    if (message.runId !== id) throw new UnrecoverableError(`result ${jobId} belongs to run ${message.runId}, not ${id}`);
    if (!kind.afterItems) throw new UnrecoverableError(`result ${jobId}: a ${kind.name} run has no step after its ${kind.nouns.items}`);
    const step = kind.afterItems;
    const output: AfterOut = unrecoverable(() => step.wire.output.decode(message.output, `fleet result ${jobId} (${kind.name}: the step after the ${kind.nouns.items})`));
    recordFacts(id, message);
    if (afterWaiting) {
      afterWaiting.resolve(output);
      afterWaiting = null;
    } else {
      afterEarly = { output };
    }
  }

  /** The after-items step on the queue of the run's requirements; its job id makes a second add a no-op. */
  async function enqueueAfterItems(id: string, input: AfterIn): Promise<void> {
    await queue.add(AFTER_ITEMS_JOB, { runId: id, input: kind.afterItems!.wire.input.encode(input) }, { jobId: afterItemsJobId(id), attempts: JOB_ATTEMPTS, backoff: { type: 'fixed', delay: 1_000 }, removeOnComplete: true, removeOnFail: true });
  }

  /** One planned item on the queue of its requirements; its job id makes a second add of the same item a no-op. */
  async function enqueue(id: string, planned: PlannedItem<Item>): Promise<void> {
    await queue.add(kind.nouns.item, { runId: id, key: planned.key, item: wire.item.encode(planned.item) }, { jobId: itemJobId(id, planned.key), attempts: JOB_ATTEMPTS, backoff: { type: 'fixed', delay: 1_000 }, removeOnComplete: true, removeOnFail: true });
  }

  /**
   * Finds the items in flight whose job is on neither queue (Redis restarted without persistence, or was
   * flushed) and enqueues them again. The order of the checks matters: a job leaves the item queue only
   * after its result is on the result queue, and a result leaves that queue only after it was taken from `pending`.
   */
  async function reconcile(): Promise<void> {
    if (!runId || !resultQueue) return;
    const after = afterWaiting;
    if (after?.enqueued && !(await queue.getJob(afterItemsJobId(runId))) && !(await resultQueue.getJob(afterItemsJobId(runId))) && afterWaiting === after) {
      await writeDescriptor();
      await enqueueAfterItems(runId, after.input);
      requeued++;
      log(`fleet: the step after the ${kind.nouns.items} vanished from the queue (Redis restarted without persistence or was flushed); enqueued again`);
    }
    const vanished: PlannedItem<Item>[] = [];
    for (const [key, entry] of [...pending]) {
      if (!entry.enqueued) continue;
      if (await queue.getJob(itemJobId(runId, key))) continue;
      if (await resultQueue.getJob(key)) continue;
      if (pending.get(key) === entry) vanished.push(entry.planned);
    }
    if (vanished.length === 0) return;
    await writeDescriptor();
    for (const planned of vanished) await enqueue(runId, planned);
    requeued += vanished.length;
    const keys = vanished.map((p) => p.key);
    log(`fleet: ${vanished.length} ${kind.nouns.items} vanished from the queue (Redis restarted without persistence or was flushed); enqueued again: ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? `, … ${keys.length - 5} more` : ''}`);
  }

  /** Passes on which rig runs an item in flight, once per change of rig. */
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
