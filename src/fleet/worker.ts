import { hostname } from 'node:os';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { campaignKind, type AnyCampaignKind } from '../kinds/registry.ts';
import type { ItemRunner, LoadedKindConfig } from '../run/kind.ts';
import { openItemRunner } from '../run/envelope.ts';
import { parseOrThrow } from '../domain/validation.ts';
import {
  AFTER_ITEMS_JOB,
  AfterItemsJobSchema,
  ItemJobSchema,
  JobTakenSchema,
  RUN_KEY_PREFIX,
  RunDescriptorSchema,
  WORKER_KEY_PREFIX,
  afterItemsJobId,
  parsedOrUnrecoverable,
  unrecoverable,
  resultQueueName,
  servedQueueNames,
  type AfterItemsResultMessage,
  type Capability,
  type ItemResultMessage,
  type Transport,
  type WorkerStatus,
} from './protocol.ts';
import { connectFleetRedis, fleetRedisOptions, redactedRedisUrl, type RedisHealth } from './redis.ts';
import type { Redis } from 'ioredis';
import { RedisHostLimiter } from './host-limiter.ts';
import { setSharedSlotGate } from '../llm/limiter.ts';
import { WireFactSchema, type WireFact } from '../run/run-facts.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the runner of whichever kind a run is
type AnyItemRunner = ItemRunner<any, any, any, any>;

export interface FleetWorkerOptions {
  redisUrl: string;
  /** the rig's name, shown in the coordinator's progress and the bench app */
  rig: string;
  capabilities: readonly Capability[];
  transports: readonly Transport[];
  /** the voice rig (what speaks and listens), for workers with audio */
  voice?: string | null;
  /** items this worker runs at once */
  concurrency: number;
  /** a job whose worker stops renewing its lock for this long (killed, unplugged) goes back to the queue */
  lockMs: number;
  heartbeatMs?: number;
  log: (line: string) => void;
  /** tests: how a run's runner is opened (default: the kind's own `open` with the run's loaded config) */
  openRunner?: (kind: AnyCampaignKind, loaded: LoadedKindConfig, log: (line: string) => void) => Promise<AnyItemRunner>;
}

export interface FleetWorker {
  readonly id: string;
  /** stops taking jobs, lets the running ones finish, closes the runners and removes the heartbeat */
  close(): Promise<void>;
}

/** A run this worker serves: its kind, the runner opened for it, and the facts the runner recorded. */
interface OpenedRun {
  kind: AnyCampaignKind;
  runner: AnyItemRunner;
  /** what runner.record wrote as the runner opened: sent with every result, stored once per worker */
  invocationFacts: WireFact[];
  /** what the runner recorded since (outside any item's Finished value): sent with the next result, then dropped */
  takeRunFacts(): WireFact[];
}

/**
 * A fleet worker: takes planned items from the queues of the runs its rig can serve (capability routing: a queue per
 * transport and capability set), runs each with the runner the run's kind opens for the run's loaded config (the kind
 * contract, src/run/kind.ts: one runner per run), and sends the kind's Finished value back on the run's result queue. A
 * job that does not parse is failed with the reason and never run; a runner that cannot reach its head unit makes the
 * worker stop taking jobs and say so.
 */
export async function startFleetWorker(options: FleetWorkerOptions): Promise<FleetWorker> {
  // a rig that can serve no queue is refused before anything connects: it would hold a Redis connection it never uses
  const queues = servedQueueNames(options.capabilities, options.transports);
  if (queues.length === 0) throw new Error(`worker of rig "${options.rig}": with capabilities ${options.capabilities.join(', ')} it can serve no run (every run needs text)`);
  const { redis, health } = await connectFleetRedis(options.redisUrl, '--redis', options.log);
  // the model hosts' slots are counted across the fleet, not per worker
  setSharedSlotGate(new RedisHostLimiter(redis));
  const worker = new RigWorker(options, redis, health);
  await worker.beat();
  worker.startHeartbeat();
  worker.takeJobs(queues);
  return { id: worker.id, close: () => worker.close() };
}

type DescribedRun = { kind: AnyCampaignKind; loaded: LoadedKindConfig };

/** One worker process's state and steps (startFleetWorker says what it does). */
class RigWorker {
  readonly id: string;
  private readonly log: (line: string) => void;
  private readonly connection: ReturnType<typeof fleetRedisOptions>;
  private readonly runs = new Map<string, Promise<OpenedRun>>();
  private readonly resultQueues = new Map<string, Queue>();
  /** the run's kind and loaded config, from its descriptor, read once per run */
  private readonly descriptors = new Map<string, Promise<DescribedRun>>();
  private readonly current = new Set<string>();
  private state: WorkerStatus['state'] = 'ready';
  private reason: string | null = null;
  private done = 0;
  private readonly workers: Worker[] = [];
  private readonly heartbeatMs: number;
  private heartbeat: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly options: FleetWorkerOptions,
    private readonly redis: Redis,
    private readonly health: RedisHealth,
  ) {
    this.connection = fleetRedisOptions(options.redisUrl);
    this.log = options.log;
    this.id = `${options.rig}@${hostname()}#${process.pid}`;
    this.heartbeatMs = options.heartbeatMs ?? 2_000;
  }

  private status(): WorkerStatus {
    const { options } = this;
    return {
      id: this.id,
      rig: options.rig,
      host: hostname(),
      pid: process.pid,
      capabilities: [...options.capabilities],
      transports: [...options.transports],
      voice: options.voice ?? null,
      concurrency: options.concurrency,
      state: this.state,
      reason: this.reason,
      current: [...this.current],
      done: this.done,
      at: new Date().toISOString(),
    };
  }

  // while Redis is away the beats would only pile up in the reconnect queue; the key expired meanwhile, the next beat sets it again
  async beat(): Promise<unknown> {
    return this.health.down || this.redis.set(WORKER_KEY_PREFIX + this.id, JSON.stringify(this.status()), 'PX', this.heartbeatMs * 3).catch((error: Error) => this.log(`heartbeat: ${error.message}`));
  }

  startHeartbeat(): void {
    this.heartbeat = setInterval(() => void this.beat(), this.heartbeatMs);
  }

  /** One BullMQ worker per queue this rig can serve (servedQueueNames). */
  takeJobs(queues: readonly string[]): void {
    const { options } = this;
    for (const queue of queues) {
      const worker = new Worker(queue, (job) => (job.name === AFTER_ITEMS_JOB ? this.processAfterItems(job) : this.processItem(job)), {
        connection: this.connection,
        concurrency: options.concurrency,
        lockDuration: options.lockMs,
        stalledInterval: Math.max(500, Math.floor(options.lockMs / 2)),
        // a stalled item always goes back to the queue: a killed worker is never the item's fault
        maxStalledCount: 1_000,
      });
      worker.on('failed', (job, error) => this.log(`job ${job?.id ?? '?'} failed: ${error.message}`));
      worker.on('error', this.health.errorListener(`queue ${queue}`));
      this.workers.push(worker);
    }
    this.log(`worker ${this.id} on ${redactedRedisUrl(options.redisUrl)}: ${options.capabilities.join('+')} over ${options.transports.join('/')}, ${options.concurrency} at once`);
  }

  private async stopTakingJobs(why: string): Promise<void> {
    if (this.state !== 'ready') return;
    this.state = 'headunit_unreachable';
    this.reason = why;
    this.log(`worker ${this.id}: ${why}; not taking jobs any more (the item goes back to the queue for another rig; restart the worker once the head unit is back)`);
    await this.beat();
    await Promise.all(this.workers.map((w) => w.pause(true)));
  }

  /** A Redis that restarted empty may have lost the descriptor until the coordinator writes it again: a failed read is retried on the next job. */
  private describedRun(runId: string): Promise<DescribedRun> {
    let reading = this.descriptors.get(runId);
    if (!reading) {
      reading = this.readDescriptor(runId);
      this.descriptors.set(runId, reading);
      reading.catch(() => this.descriptors.delete(runId));
    }
    return reading;
  }

  /** A run unknown or not valid fails the job for good. */
  private async readDescriptor(runId: string): Promise<DescribedRun> {
    const raw = await this.redis.get(RUN_KEY_PREFIX + runId);
    if (raw === null) throw new UnrecoverableError(`run ${runId} is not known to the fleet (no run descriptor in Redis)`);
    const json = unrecoverable(() => {
      try {
        return JSON.parse(raw) as unknown;
      } catch (error) {
        throw new Error(`run ${runId}: the run descriptor in Redis is not JSON (${(error as Error).message})`);
      }
    });
    const descriptor = parsedOrUnrecoverable(RunDescriptorSchema, json, `run ${runId}: the run descriptor is not valid`);
    try {
      const kind = await campaignKind(descriptor.kind);
      return { kind, loaded: kind.wire.loaded.decode(descriptor.loaded, `run ${runId}: the run descriptor's config`) };
    } catch (error) {
      throw new UnrecoverableError((error as Error).message);
    }
  }

  private runFor(runId: string, kind: AnyCampaignKind, loaded: LoadedKindConfig): Promise<OpenedRun> {
    let opening = this.runs.get(runId);
    if (!opening) {
      opening = this.openRun(runId, kind, loaded);
      this.runs.set(runId, opening);
      opening.catch(() => this.runs.delete(runId));
    }
    return opening;
  }

  private async openRun(runId: string, kind: AnyCampaignKind, loaded: LoadedKindConfig): Promise<OpenedRun> {
    const { log } = this;
    const runner = await (this.options.openRunner ?? ((k, l) => openItemRunner(k, l, { log })))(kind, loaded, log);
    // what the runner records goes into this collector: the facts travel with the results, the coordinator stores them
    let collected: WireFact[] = [];
    const take = () => {
      const taken = collected;
      collected = [];
      return taken;
    };
    runner.record({ addRunFact: (id, factKind, data) => {
      if (id !== runId) throw new Error(`fleet worker: a fact of run ${id} recorded by the runner of run ${runId}`);
      collected.push(parseOrThrow(WireFactSchema, { kind: factKind, data }, `fleet worker: run ${runId} fact ${factKind}`));
    } }, runId, () => undefined);
    return { kind, runner, invocationFacts: take(), takeRunFacts: take };
  }

  private resultQueue(runId: string): Queue {
    let queue = this.resultQueues.get(runId);
    if (!queue) {
      queue = new Queue(resultQueueName(runId), { connection: this.connection });
      queue.on('error', this.health.errorListener(`result queue of ${runId}`));
      this.resultQueues.set(runId, queue);
    }
    return queue;
  }

  /** The run's runner, opened once, with its head unit ready; a unit it cannot reach makes the worker stop taking jobs. */
  private async readyRunner(runId: string, kind: AnyCampaignKind, loaded: LoadedKindConfig): Promise<OpenedRun> {
    try {
      const opened = await this.runFor(runId, kind, loaded);
      const stop = await opened.runner.ready();
      if (stop) throw new Error(stop);
      return opened;
    } catch (error) {
      const why = `rig ${this.options.rig} cannot reach its head unit: ${error instanceof Error ? error.message : String(error)}`;
      await this.stopTakingJobs(why);
      throw new Error(why);
    }
  }

  private async processItem(job: Job): Promise<{ key: string }> {
    // a bad job is never executed: failed with the reason, no retry
    const itemJob = parsedOrUnrecoverable(ItemJobSchema, job.data, `bad job ${job.id}`);
    const { runId, key } = itemJob;
    const { kind, loaded } = await this.describedRun(runId);
    const item = unrecoverable(() => kind.wire.item.decode(itemJob.item, `bad job ${job.id}: item`));
    const opened = await this.readyRunner(runId, kind, loaded);
    const name = `${runId}/${key}`;
    this.current.add(name);
    try {
      await job.updateProgress(JobTakenSchema.parse({ rig: this.options.rig }));
      // the job runs to its end: a worker asked to stop lets its items finish (quitting at once sends them back to the queue)
      const finished = await opened.runner.run(runId, { key, item }, new AbortController().signal, () => undefined);
      const message: ItemResultMessage = {
        runId,
        rig: this.options.rig,
        workerId: this.id,
        key,
        finished: kind.wire.finished.encode(finished),
        invocationFacts: opened.invocationFacts,
        runFacts: opened.takeRunFacts(),
      };
      // at least once: a second delivery of the same item has the same job id and is dropped, and the store takes a key once
      await this.resultQueue(runId).add('result', message, { jobId: key, removeOnComplete: true, removeOnFail: true });
      this.done++;
      return { key };
    } finally {
      this.current.delete(name);
    }
  }

  /** A run's after-items step (manual-QA: the warning-omission search) on this rig's runner of the run; its output goes back as a result. */
  private async processAfterItems(job: Job): Promise<void> {
    const stepJob = parsedOrUnrecoverable(AfterItemsJobSchema, job.data, `bad job ${job.id}`);
    const { runId } = stepJob;
    const { kind, loaded } = await this.describedRun(runId);
    const step = kind.afterItems;
    if (!step) throw new UnrecoverableError(`bad job ${job.id}: a ${kind.name} run has no step after its ${kind.nouns.items}`);
    const input = unrecoverable(() => step.wire.input.decode(stepJob.input, `bad job ${job.id}: input`));
    const opened = await this.readyRunner(runId, kind, loaded);
    if (!opened.runner.afterItems) throw new UnrecoverableError(`bad job ${job.id}: the ${kind.name} runner of this worker cannot run the step after the ${kind.nouns.items}`);
    const name = `${runId}/${AFTER_ITEMS_JOB}`;
    this.current.add(name);
    try {
      await job.updateProgress(JobTakenSchema.parse({ rig: this.options.rig }));
      const output = await opened.runner.afterItems(runId, input, this.log);
      const message: AfterItemsResultMessage = {
        runId,
        rig: this.options.rig,
        workerId: this.id,
        output: step.wire.output.encode(output),
        invocationFacts: opened.invocationFacts,
        runFacts: opened.takeRunFacts(),
      };
      await this.resultQueue(runId).add(AFTER_ITEMS_JOB, message, { jobId: afterItemsJobId(runId), removeOnComplete: true, removeOnFail: true });
    } finally {
      this.current.delete(name);
    }
  }

  /** Stops taking jobs, lets the running ones finish, closes the runners and removes the heartbeat. */
  close(): Promise<void> {
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    this.state = 'stopping';
    if (this.heartbeat) clearInterval(this.heartbeat);
    await Promise.all(this.workers.map((w) => w.close()));
    await Promise.all([...this.resultQueues.values()].map((q) => q.close()));
    for (const opening of this.runs.values()) await opening.then(({ runner }) => runner.close()).catch(() => undefined);
    await this.redis.del(WORKER_KEY_PREFIX + this.id).catch(() => undefined);
    setSharedSlotGate(null);
    this.redis.disconnect();
  }
}
