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
  type Requirements,
  type RunDescriptor,
  type WorkerResult,
  type WorkerStatus,
} from './protocol.ts';
import { connectFleetRedis, fleetRedisOptions, redactedRedisUrl, type RedisHealth, type RedisHealthChange } from './redis.ts';
import type { CampaignEvent } from '../run/events.ts';

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
  // what the workers open their runner with; a config that cannot travel fails here, before Redis is touched
  const wireLoaded = kind.wire.loaded.encode(loaded);
  const requirements = runRequirements(kind.wire.needs(loaded));
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
  const coordinator = new FleetCoordinator(kind, options, { redis, health, requirements, wireLoaded, capable });
  try {
    await coordinator.events.waitUntilReady();
  } catch (error) {
    // its timers, queue and event stream are already open: a failed start must not leave them behind
    await coordinator.close().catch(() => undefined);
    throw error;
  }
  log(`fleet: ${capable.length} worker(s) can serve ${describeRequirements(requirements)}: ${capable.map((w) => w.rig).join(', ')}`);
  return coordinator;
}

/** What openFleetRunner found before the run starts: its Redis, what the run needs, and the workers that can serve it. */
interface FleetSetUp {
  redis: Redis;
  health: RedisHealth;
  requirements: Requirements;
  wireLoaded: unknown;
  capable: WorkerStatus[];
}

/** The coordinator's state for one run invocation, and its steps (openFleetRunner says what it does). */
class FleetCoordinator<L extends LoadedKindConfig, Item, Finished extends FinishedItem, AfterIn, AfterOut> implements FleetRunner<Item, Finished, AfterIn, AfterOut> {
  readonly concurrency: number;
  readonly meta: Record<string, unknown>;
  readonly events: QueueEvents;
  private readonly log: (line: string) => void;
  private readonly redis: Redis;
  private readonly health: RedisHealth;
  private readonly connection: ReturnType<typeof fleetRedisOptions>;
  private readonly requirements: Requirements;
  private readonly queueName: string;
  private readonly queue: Queue;
  private readonly wireLoaded: unknown;
  private readonly capable: WorkerStatus[];
  /** each item in flight, by key */
  private readonly pending = new Map<string, PendingItem<Item, Finished>>();
  /** results that came back before this invocation asked for them (a resumed run's abandoned items) */
  private readonly early = new Map<string, { finished: Finished; rig: string }>();
  /** the items this invocation handed back (a second result of one is a duplicate) */
  private readonly handedBack = new Set<string>();
  private readonly doneByRig = new Map<string, number>();
  private stalled = 0;
  private failed = 0;
  private duplicates = 0;
  private requeued = 0;
  private runId: string | null = null;
  private descriptor: RunDescriptor | null = null;
  private descriptorWritten: Promise<unknown> | null = null;
  private results: Worker | null = null;
  /** the result queue, read when looking for vanished jobs (a result waiting there has not vanished) */
  private resultQueue: Queue | null = null;
  /** why the run must stop: its Redis stayed away longer than the grace */
  private redisLost: string | null = null;
  private facts: RunFactSink | null = null;
  /** the workers whose invocation facts this invocation recorded */
  private readonly invocationRecorded = new Set<string>();
  /** the workers' set-ups (their run.invocation, as JSON) whose invocation facts this invocation recorded */
  private readonly setUpsRecorded = new Set<string>();
  private closing: Promise<void> | null = null;
  /** the after-items step: the run skeleton waiting for its output, once its job is enqueued */
  private afterWaiting: { resolve: (output: AfterOut) => void; reject: (error: Error) => void; input: AfterIn; enqueued: boolean } | null = null;
  /** its output when it came back before it was asked for (a resumed run whose step ran for the previous invocation) */
  private afterEarly: { output: AfterOut } | null = null;
  private readonly progressTimer: NodeJS.Timeout | null;
  private readonly reconcileTimer: NodeJS.Timeout;
  private graceTimer: NodeJS.Timeout | null = null;
  private reconciling: Promise<void> | null = null;

  constructor(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the file's config form does not matter to the fleet
    private readonly kind: CampaignKindDefinition<L, Item, Finished, any, AfterIn, AfterOut>,
    private readonly options: FleetOptions,
    setUp: FleetSetUp,
  ) {
    this.log = options.log;
    ({ redis: this.redis, health: this.health, requirements: this.requirements, wireLoaded: this.wireLoaded, capable: this.capable } = setUp);
    this.connection = fleetRedisOptions(options.redisUrl, '--fleet');
    this.queueName = itemQueueName(this.requirements);
    this.queue = new Queue(this.queueName, { connection: this.connection });
    this.events = new QueueEvents(this.queueName, { connection: this.connection });
    this.queue.on('error', this.health.errorListener('fleet queue'));
    this.events.on('error', this.health.errorListener('fleet events'));
    this.followQueueEvents();
    this.progressTimer = this.startProgressLines();
    // a lost or flushed queue: the items in flight are checked against it now and then, and at once when Redis is back
    this.reconcileTimer = setInterval(() => this.reconcileSoon(), options.reconcileMs ?? 5_000);
    this.reconcileTimer.unref();
    this.health.onChange((change) => this.onRedisHealth(change));
    const capacity = this.capable.reduce((sum, w) => sum + w.concurrency, 0);
    // keeps every capable worker busy with one more job waiting each; workers that join later take from the same queue
    this.concurrency = Math.max(8, 2 * capacity);
    this.meta = { fleet: describeRequirements(this.requirements), rigs: [...new Set(this.capable.map((w) => w.rig))] };
  }

  /** The key of one of this run's jobs, or null for another run's. */
  private itemKeyOf(jobId: string): string | null {
    return this.runId && jobId.startsWith(`${this.runId}__`) ? jobId.slice(this.runId.length + 2) : null;
  }

  private followQueueEvents(): void {
    const { kind, log } = this;
    this.events.on('stalled', ({ jobId }) => {
      if (this.runId && jobId === afterItemsJobId(this.runId)) log(`fleet: the step after the ${kind.nouns.items} stalled (its worker stopped); it goes back to the queue`);
      const key = this.itemKeyOf(jobId);
      if (key !== null) {
        this.stalled++;
        log(`fleet: ${key} stalled (its worker stopped); it goes back to the queue`);
      }
    });
    this.events.on('progress', ({ jobId, data }) => {
      const key = this.itemKeyOf(jobId);
      if (key === null) return;
      const taken = JobTakenSchema.safeParse(data);
      if (taken.success) this.tellRig(key, taken.data.rig);
      else log(`fleet: ignoring the progress of ${jobId}: ${taken.error.issues[0]?.message ?? 'invalid'}`);
    });
    this.events.on('failed', ({ jobId, failedReason }) => {
      if (this.runId && jobId === afterItemsJobId(this.runId)) {
        this.afterWaiting?.reject(new Error(`the step after the ${kind.nouns.items} failed on the fleet: ${failedReason}`));
        this.afterWaiting = null;
        return;
      }
      const key = this.itemKeyOf(jobId);
      if (key === null) return;
      this.failed++;
      this.pending.get(key)?.reject(new Error(`${kind.nouns.item} ${key} failed on the fleet: ${failedReason}`));
      this.pending.delete(key);
    });
  }

  async progress(): Promise<{ rigs: RigProgress[]; stalled: number; failed: number; duplicates: number }> {
    const live = await liveWorkers(this.redis);
    const rigs = new Map<string, RigProgress>();
    const entry = (rig: string) => rigs.get(rig) ?? rigs.set(rig, { rig, workers: 0, running: 0, done: 0 }).get(rig)!;
    for (const worker of live) {
      const e = entry(worker.rig);
      e.workers++;
      e.running += worker.current.filter((c) => this.runId !== null && c.startsWith(`${this.runId}/`)).length;
    }
    for (const [rig, n] of this.doneByRig) entry(rig).done = n;
    return { rigs: [...rigs.values()].sort((a, b) => a.rig.localeCompare(b.rig)), stalled: this.stalled, failed: this.failed, duplicates: this.duplicates };
  }

  /** The per-rig progress line, every progressMs when it changed. */
  private startProgressLines(): NodeJS.Timeout | null {
    const every = this.options.progressMs ?? 5_000;
    if (every <= 0) return null;
    let lastProgress = '';
    const timer = setInterval(() => {
      // commands wait for the reconnect while Redis is away: the outage lines say what goes on meanwhile
      if (this.health.down) return;
      void this.progress()
        .then((p) => {
          const line = `fleet: ${p.rigs.map((r) => `${r.rig} ${r.running} running, ${r.done} done`).join(' | ')}; stalled ${p.stalled}, failed ${p.failed}`;
          if (line !== lastProgress) this.log(line);
          lastProgress = line;
        })
        .catch(() => undefined);
    }, every);
    timer.unref();
    return timer;
  }

  counts(): { stalled: number; failed: number; duplicates: number; requeued: number } {
    return { stalled: this.stalled, failed: this.failed, duplicates: this.duplicates, requeued: this.requeued };
  }

  private reconcileSoon(): void {
    if (this.health.down || this.redisLost || this.reconciling) return;
    this.reconciling = this.reconcile()
      .catch((error: Error) => this.log(`fleet: checking the queue failed: ${error.message}`))
      .finally(() => (this.reconciling = null));
  }

  /** Redis went away: the run waits up to the grace for it, then stops; Redis came back: the queue is checked at once. */
  private onRedisHealth(change: RedisHealthChange): void {
    if (change.state === 'back') {
      if (this.graceTimer) clearTimeout(this.graceTimer);
      this.graceTimer = null;
      return this.reconcileSoon();
    }
    const graceMs = this.options.redisGraceMs ?? DEFAULT_REDIS_GRACE_MS;
    this.graceTimer ??= setTimeout(() => {
      const redisLost = `the fleet's Redis at ${redactedRedisUrl(this.options.redisUrl)} stayed unreachable for ${Math.round(graceMs / 1000)} s (${change.cause})`;
      this.redisLost = redisLost;
      this.log(`fleet: ${redisLost}; the run stops`);
      // the items in flight are abandoned: their results cannot come back; --resume runs them again
      for (const [key, entry] of this.pending) {
        this.pending.delete(key);
        entry.reject(new ItemAborted(key));
      }
      this.afterWaiting?.reject(new Error(redisLost));
      this.afterWaiting = null;
    }, graceMs);
  }

  record(sink: RunFactSink, id: string): { invocationEnded: () => void } {
    this.runId = id;
    this.facts = sink;
    sink.addRunFact(id, FLEET_FACT, { requirements: this.requirements, queue: this.queueName, workers: this.capable.map((w) => ({ id: w.id, rig: w.rig, capabilities: w.capabilities, transports: w.transports })) });
    this.descriptor = { runId: id, kind: this.kind.name, loaded: this.wireLoaded };
    this.descriptorWritten = this.writeDescriptor();
    this.resultQueue = new Queue(resultQueueName(id), { connection: this.connection });
    this.resultQueue.on('error', this.health.errorListener('fleet result queue'));
    this.results = new Worker(
      resultQueueName(id),
      async (job) => (job.name === AFTER_ITEMS_JOB ? this.afterItemsResult(id, job.id, job.data) : this.itemResult(id, job.id, job.data)),
      // a result is handed over in milliseconds: a short lock brings one a killed coordinator was taking back to the queue in seconds for
      // the resumed one (the default 30 s lock held it, and the same item's rerun result, deduplicated by its job id, for up to a minute)
      { connection: this.connection, concurrency: 1, lockDuration: RESULT_LOCK_MS, stalledInterval: RESULT_LOCK_MS / 2, maxStalledCount: 1_000 },
    );
    this.results.on('failed', (job, error) => this.log(`fleet: ${error.message}`));
    this.results.on('error', this.health.errorListener('fleet results'));
    return { invocationEnded: () => undefined };
  }

  /** An item's result from a worker: handed to the run waiting for it, counted as a duplicate, or kept until it is asked for. */
  private itemResult(id: string, jobId: string | undefined, data: unknown): void {
    const { kind } = this;
    const message = parsedOrUnrecoverable(ItemResultMessageSchema, data, `result ${jobId} is not valid`);
    if (message.runId !== id) throw new UnrecoverableError(`result ${jobId} belongs to run ${message.runId}, not ${id}`);
    const finished: Finished = unrecoverable(() => kind.wire.finished.decode(message.finished, `fleet result ${jobId} (${kind.name} ${kind.nouns.item} ${message.key})`));
    this.recordFacts(id, message);
    const { key } = message;
    const waiting = this.pending.get(key);
    if (waiting) {
      this.tellRig(key, message.rig);
      this.pending.delete(key);
      this.handedBack.add(key);
      this.doneByRig.set(message.rig, (this.doneByRig.get(message.rig) ?? 0) + 1);
      waiting.resolve(finished);
    } else if (this.handedBack.has(key)) {
      this.duplicates++;
    } else {
      this.early.set(key, { finished, rig: message.rig });
    }
  }

  async ready(): Promise<string | null> {
    return this.redisLost;
  }

  async afterItems(id: string, input: AfterIn, runLog: (line: string) => void): Promise<AfterOut> {
    if (!this.kind.afterItems) throw new Error(`a ${this.kind.name} run has no step after its ${this.kind.nouns.items}`);
    if (this.redisLost) throw new Error(this.redisLost);
    if (this.afterEarly) {
      const { output } = this.afterEarly;
      this.afterEarly = null;
      return output;
    }
    const output = new Promise<AfterOut>((resolve, reject) => (this.afterWaiting = { resolve, reject, input, enqueued: false }));
    await Promise.race([this.descriptorWritten!.then(() => this.enqueueAfterItems(id, input)), output]);
    if (this.afterWaiting) this.afterWaiting.enqueued = true;
    runLog(`fleet: the step after the ${this.kind.nouns.items} went to a worker`);
    return output;
  }

  async run(id: string, planned: PlannedItem<Item>, signal: AbortSignal, emit: (event: CampaignEvent) => void): Promise<Finished> {
    const { key } = planned;
    const onRig = (rig: string) => emit({ type: 'conversation_rig', runId: id, key, rig });
    if (this.redisLost) throw new ItemAborted(key);
    const already = this.early.get(key);
    if (already) {
      this.early.delete(key);
      this.handedBack.add(key);
      onRig(already.rig);
      return already.finished;
    }
    const jobId = itemJobId(id, key);
    let entry!: PendingItem<Item, Finished>;
    const finished = new Promise<Finished>((resolve, reject) => {
      entry = { planned, resolve, reject, onRig, rig: null, enqueued: false };
      this.pending.set(key, entry);
    });
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new ItemAborted(key)), { once: true }));
    // either may settle while the other is awaited
    finished.catch(() => undefined);
    aborted.catch(() => undefined);
    try {
      // while Redis is away the add waits for the reconnect; a grace running out rejects `finished`
      await Promise.race([this.descriptorWritten!.then(() => this.enqueue(id, planned)), finished, aborted]);
      entry.enqueued = true;
      return await Promise.race([finished, aborted]);
    } catch (error) {
      if (!(error instanceof ItemAborted)) throw error;
      // a lost Redis cannot take the job back: it reruns on --resume
      if (this.redisLost) throw error;
      return this.abandon(key, jobId);
    }
  }

  close(): Promise<void> {
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    if (this.progressTimer) clearInterval(this.progressTimer);
    clearInterval(this.reconcileTimer);
    if (this.graceTimer) clearTimeout(this.graceTimer);
    if (this.redisLost) {
      // nothing can be said to a Redis that is gone: the result worker stops without finishing its job, and the event
      // stream's close (which waits for its connection to end, never while it is reconnecting) is not waited for
      await this.results?.close(true);
      await this.resultQueue?.close();
      await this.queue.close();
      void this.events.close().catch(() => undefined);
    } else {
      await this.results?.close();
      await this.resultQueue?.close();
      await this.events.close();
      await this.queue.close();
    }
    this.redis.disconnect();
  }

  /** The run's kind and loaded config for the workers; written again when Redis comes back without it (restarted without persistence). */
  private writeDescriptor(): Promise<unknown> {
    const { descriptor } = this;
    return descriptor ? this.redis.set(RUN_KEY_PREFIX + descriptor.runId, JSON.stringify(descriptor), 'EX', DESCRIPTOR_TTL_S) : Promise.resolve();
  }

  /**
   * What the workers run with (run.invocation, tiers.resolved, the unit's first connection, …), as a local run records its
   * runner's once per invocation: once per set-up (workers alike record what one process records; a worker on another
   * machine, build or model host adds its own); then the facts the worker's runner recorded outside any item.
   */
  private recordFacts(id: string, message: WorkerResult): void {
    if (!this.invocationRecorded.has(message.workerId)) {
      const setUp = JSON.stringify(message.invocationFacts.find((f) => f.kind === RUN_FACTS.invocation) ?? message.workerId);
      if (!this.setUpsRecorded.has(setUp)) {
        this.setUpsRecorded.add(setUp);
        for (const fact of message.invocationFacts) this.facts?.addRunFact(id, fact.kind, fact.data);
      }
      this.invocationRecorded.add(message.workerId);
    }
    for (const fact of message.runFacts) this.facts?.addRunFact(id, fact.kind, fact.data);
  }

  /** The after-items step's output from a worker: handed to the run skeleton waiting for it, or kept until it asks. */
  private afterItemsResult(id: string, jobId: string | undefined, data: unknown): void {
    const { kind } = this;
    const message = parsedOrUnrecoverable(AfterItemsResultMessageSchema, data, `result ${jobId} is not valid`);
    if (message.runId !== id) throw new UnrecoverableError(`result ${jobId} belongs to run ${message.runId}, not ${id}`);
    if (!kind.afterItems) throw new UnrecoverableError(`result ${jobId}: a ${kind.name} run has no step after its ${kind.nouns.items}`);
    const step = kind.afterItems;
    const output: AfterOut = unrecoverable(() => step.wire.output.decode(message.output, `fleet result ${jobId} (${kind.name}: the step after the ${kind.nouns.items})`));
    this.recordFacts(id, message);
    if (this.afterWaiting) {
      this.afterWaiting.resolve(output);
      this.afterWaiting = null;
    } else {
      this.afterEarly = { output };
    }
  }

  /** The after-items step on the queue of the run's requirements; its job id makes a second add a no-op. */
  private async enqueueAfterItems(id: string, input: AfterIn): Promise<void> {
    await this.queue.add(AFTER_ITEMS_JOB, { runId: id, input: this.kind.afterItems!.wire.input.encode(input) }, { jobId: afterItemsJobId(id), attempts: JOB_ATTEMPTS, backoff: { type: 'fixed', delay: 1_000 }, removeOnComplete: true, removeOnFail: true });
  }

  /** One planned item on the queue of its requirements; its job id makes a second add of the same item a no-op. */
  private async enqueue(id: string, planned: PlannedItem<Item>): Promise<void> {
    await this.queue.add(this.kind.nouns.item, { runId: id, key: planned.key, item: this.kind.wire.item.encode(planned.item) }, { jobId: itemJobId(id, planned.key), attempts: JOB_ATTEMPTS, backoff: { type: 'fixed', delay: 1_000 }, removeOnComplete: true, removeOnFail: true });
  }

  /**
   * Finds the items in flight whose job is on neither queue (Redis restarted without persistence, or was
   * flushed) and enqueues them again. The order of the checks matters: a job leaves the item queue only
   * after its result is on the result queue, and a result leaves that queue only after it was taken from `pending`.
   */
  private async reconcile(): Promise<void> {
    const { runId, resultQueue, queue, kind } = this;
    if (!runId || !resultQueue) return;
    const after = this.afterWaiting;
    if (after?.enqueued && !(await queue.getJob(afterItemsJobId(runId))) && !(await resultQueue.getJob(afterItemsJobId(runId))) && this.afterWaiting === after) {
      await this.writeDescriptor();
      await this.enqueueAfterItems(runId, after.input);
      this.requeued++;
      this.log(`fleet: the step after the ${kind.nouns.items} vanished from the queue (Redis restarted without persistence or was flushed); enqueued again`);
    }
    const vanished: PlannedItem<Item>[] = [];
    for (const [key, entry] of [...this.pending]) {
      if (!entry.enqueued) continue;
      if (await queue.getJob(itemJobId(runId, key))) continue;
      if (await resultQueue.getJob(key)) continue;
      if (this.pending.get(key) === entry) vanished.push(entry.planned);
    }
    if (vanished.length === 0) return;
    await this.writeDescriptor();
    for (const planned of vanished) await this.enqueue(runId, planned);
    this.requeued += vanished.length;
    const keys = vanished.map((p) => p.key);
    this.log(`fleet: ${vanished.length} ${kind.nouns.items} vanished from the queue (Redis restarted without persistence or was flushed); enqueued again: ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? `, … ${keys.length - 5} more` : ''}`);
  }

  /** Passes on which rig runs an item in flight, once per change of rig. */
  private tellRig(key: string, rig: string): void {
    const entry = this.pending.get(key);
    if (!entry || entry.rig === rig) return;
    entry.rig = rig;
    entry.onRig(rig);
  }

  /** Ctrl+C or the budget: a waiting job is taken off the queue; a running one finishes on its rig, and its result is kept for --resume only if it arrives in time. */
  private async abandon(key: string, jobId: string): Promise<never> {
    this.pending.delete(key);
    const job = await this.queue.getJob(jobId);
    if (job && ((await job.isWaiting()) || (await job.isDelayed()))) await job.remove().catch(() => undefined);
    throw new ItemAborted(key);
  }
}
