import { hostname } from 'node:os';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { z } from 'zod';
import type { LoadedCampaign } from '../kinds/dialogue/config.ts';
import { openRig, type Rig, type RunRecorder } from '../kinds/dialogue/rig.ts';
import { runPlannedConversation } from '../kinds/dialogue/run.ts';
import { RecordedFactSchema, type RecordedFact, type RunFactSink } from '../run/run-facts.ts';
import { parseOrThrow } from '../domain/validation.ts';
import {
  ConversationJobSchema,
  JobTakenSchema,
  RUN_KEY_PREFIX,
  RunDescriptorSchema,
  WORKER_KEY_PREFIX,
  resultQueueName,
  servedQueueNames,
  type Capability,
  type ConversationResultMessage,
  type Transport,
  type WorkerStatus,
} from './protocol.ts';
import { connectFleetRedis, fleetRedisOptions, redactedRedisUrl } from './redis.ts';
import { RedisHostLimiter } from './host-limiter.ts';
import { setSharedSlotGate } from '../llm/limiter.ts';

export interface FleetWorkerOptions {
  redisUrl: string;
  /** the rig's name, shown in the coordinator's progress and the bench app */
  rig: string;
  capabilities: readonly Capability[];
  transports: readonly Transport[];
  /** the voice rig (what speaks and listens), for workers with audio */
  voice?: string | null;
  /** conversations this worker runs at once */
  concurrency: number;
  /** a job whose worker stops renewing its lock for this long (killed, unplugged) goes back to the queue */
  lockMs: number;
  heartbeatMs?: number;
  log: (line: string) => void;
  /** tests: how a run's rig is opened (default openRig with the run's campaign) */
  openRig?: (campaign: LoadedCampaign) => Promise<Rig>;
}

export interface FleetWorker {
  readonly id: string;
  /** stops taking jobs, lets the running ones finish, closes the rigs and removes the heartbeat */
  close(): Promise<void>;
}

interface OpenedRun {
  rig: Rig;
  campaign: LoadedCampaign;
  /** what rig.record wrote when the run's rig opened: sent with every result, stored once per worker */
  invocationFacts: RecordedFact[];
  recorder: RunRecorder;
  /** the facts each conversation produced as it ended, by key, until its result is sent */
  conversationFacts: Map<string, RecordedFact[]>;
}

/**
 * The rig's recorder writing into a collector instead of a store: what rig.record writes at once
 * is the invocation's facts; what the recorder writes when a conversation ends (synchronously) is
 * that conversation's, taken at once so that conversations running side by side keep theirs apart.
 */
function recordInto(rig: Rig, runId: string): Pick<OpenedRun, 'invocationFacts' | 'recorder' | 'conversationFacts'> {
  let collected: RecordedFact[] = [];
  const sink: RunFactSink = {
    addRunFact(id, kind, data) {
      if (id !== runId) throw new Error(`fleet worker: a fact of run ${id} recorded on the rig of run ${runId}`);
      collected.push(parseOrThrow(RecordedFactSchema, { kind, data }, `fleet worker: run ${runId} fact ${kind}`));
    },
  };
  const take = () => {
    const taken = collected;
    collected = [];
    return taken;
  };
  const inner = rig.record(sink, runId);
  const invocationFacts = take();
  const conversationFacts = new Map<string, RecordedFact[]>();
  return {
    invocationFacts,
    conversationFacts,
    recorder: {
      conversationEnded(key, drive) {
        inner.conversationEnded(key, drive);
        conversationFacts.set(key, take());
      },
      // the worker's calls outside any conversation: none (every call serves a conversation), and no store to write them to
      invocationEnded: () => undefined,
    },
  };
}

function issuesText(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/**
 * A fleet worker: takes planned conversations from the queues of the campaigns its rig can serve
 * (capability routing: a queue per transport and capability set), runs each on the rig the run's
 * config describes (openRig, one per run), and sends the finished conversation back on the run's
 * result queue. A job that does not parse is failed with the reason and never run; a rig that
 * cannot reach its head unit makes the worker stop taking jobs and say so.
 */
export async function startFleetWorker(options: FleetWorkerOptions): Promise<FleetWorker> {
  const connection = fleetRedisOptions(options.redisUrl);
  const log = options.log;
  const id = `${options.rig}@${hostname()}#${process.pid}`;
  const { redis, health } = await connectFleetRedis(options.redisUrl, '--redis', log);
  // the model hosts' slots are counted across the fleet, not per worker
  setSharedSlotGate(new RedisHostLimiter(redis));
  const rigs = new Map<string, Promise<OpenedRun>>();
  const resultQueues = new Map<string, Queue>();
  const current = new Set<string>();
  let state: WorkerStatus['state'] = 'ready';
  let reason: string | null = null;
  let done = 0;
  const workers: Worker[] = [];

  const status = (): WorkerStatus => ({
    id,
    rig: options.rig,
    host: hostname(),
    pid: process.pid,
    capabilities: [...options.capabilities],
    transports: [...options.transports],
    voice: options.voice ?? null,
    concurrency: options.concurrency,
    state,
    reason,
    current: [...current],
    done,
    at: new Date().toISOString(),
  });
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  // while Redis is away the beats would only pile up in the reconnect queue; the key expired meanwhile, the next beat sets it again
  const beat = async () => health.down || redis.set(WORKER_KEY_PREFIX + id, JSON.stringify(status()), 'PX', heartbeatMs * 3).catch((error: Error) => log(`heartbeat: ${error.message}`));
  await beat();
  const heartbeat = setInterval(beat, heartbeatMs);

  const stopTakingJobs = async (why: string) => {
    if (state !== 'ready') return;
    state = 'headunit_unreachable';
    reason = why;
    log(`worker ${id}: ${why}; not taking jobs any more (the conversation goes back to the queue for another rig; restart the worker once the head unit is back)`);
    await beat();
    await Promise.all(workers.map((w) => w.pause(true)));
  };

  const rigFor = async (runId: string) => {
    let opening = rigs.get(runId);
    if (!opening) {
      opening = (async () => {
        const raw = await redis.get(RUN_KEY_PREFIX + runId);
        if (raw === null) throw new UnrecoverableError(`run ${runId} is not known to the fleet (no run descriptor in Redis)`);
        const parsed = RunDescriptorSchema.safeParse(JSON.parse(raw));
        if (!parsed.success) throw new UnrecoverableError(`run ${runId}: the run descriptor is not valid: ${issuesText(parsed.error)}`);
        const campaign: LoadedCampaign = { config: parsed.data.config, path: parsed.data.path, seeds: parsed.data.seeds, strategies: parsed.data.strategies };
        const rig = await (options.openRig ?? ((c: LoadedCampaign) => openRig(c, { log })))(campaign);
        return { rig, campaign, ...recordInto(rig, runId) };
      })();
      rigs.set(runId, opening);
      opening.catch(() => rigs.delete(runId));
    }
    return opening;
  };

  const resultQueue = (runId: string) => {
    let queue = resultQueues.get(runId);
    if (!queue) {
      queue = new Queue(resultQueueName(runId), { connection });
      queue.on('error', health.errorListener(`result queue of ${runId}`));
      resultQueues.set(runId, queue);
    }
    return queue;
  };

  const processJob = async (job: Job): Promise<{ key: string }> => {
    const parsed = ConversationJobSchema.safeParse(job.data);
    // never executed: failed with the reason, no retry
    if (!parsed.success) throw new UnrecoverableError(`bad job ${job.id}: ${issuesText(parsed.error)}`);
    const { runId, spec } = parsed.data;
    let opened: OpenedRun;
    try {
      opened = await rigFor(runId);
      await opened.rig.headUnit.ensureReady();
    } catch (error) {
      if (error instanceof UnrecoverableError) throw error;
      const why = `rig ${options.rig} cannot reach its head unit: ${error instanceof Error ? error.message : String(error)}`;
      await stopTakingJobs(why);
      throw new Error(why);
    }
    const name = `${runId}/${spec.key}`;
    current.add(name);
    try {
      await job.updateProgress(JobTakenSchema.parse({ rig: options.rig }));
      const finished = await runPlannedConversation(opened.rig, opened.campaign.config, runId, spec, { recorder: opened.recorder });
      const message: ConversationResultMessage = {
        runId,
        rig: options.rig,
        workerId: id,
        result: finished.result,
        artifacts: finished.artifacts.map((a) => ({ name: a.name, mime: a.mime, ...(a.bytes ? { base64: Buffer.from(a.bytes).toString('base64') } : {}), ...(a.path ? { path: a.path } : {}) })),
        invocationFacts: opened.invocationFacts,
        facts: opened.conversationFacts.get(spec.key) ?? [],
      };
      // at least once: a second delivery of the same conversation has the same job id and is dropped, and the store takes a key once
      await resultQueue(runId).add('result', message, { jobId: spec.key, removeOnComplete: true, removeOnFail: true });
      done++;
      return { key: spec.key };
    } finally {
      current.delete(name);
      opened.conversationFacts.delete(spec.key);
    }
  };

  for (const queue of servedQueueNames(options.capabilities, options.transports)) {
    const worker = new Worker(queue, processJob, {
      connection,
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: Math.max(500, Math.floor(options.lockMs / 2)),
      // a stalled conversation always goes back to the queue: a killed worker is never the conversation's fault
      maxStalledCount: 1_000,
    });
    worker.on('failed', (job, error) => log(`job ${job?.id ?? '?'} failed: ${error.message}`));
    worker.on('error', health.errorListener(`queue ${queue}`));
    workers.push(worker);
  }
  if (workers.length === 0) throw new Error(`worker ${id}: with capabilities ${options.capabilities.join(', ')} it can serve no campaign (every campaign needs text)`);
  log(`worker ${id} on ${redactedRedisUrl(options.redisUrl)}: ${options.capabilities.join('+')} over ${options.transports.join('/')}, ${options.concurrency} at once`);

  let closing: Promise<void> | null = null;
  return {
    id,
    close: () =>
      (closing ??= (async () => {
        state = 'stopping';
        clearInterval(heartbeat);
        await Promise.all(workers.map((w) => w.close()));
        await Promise.all([...resultQueues.values()].map((q) => q.close()));
        for (const opening of rigs.values()) await opening.then(({ rig }) => rig.close()).catch(() => undefined);
        await redis.del(WORKER_KEY_PREFIX + id).catch(() => undefined);
        setSharedSlotGate(null);
        redis.disconnect();
      })()),
  };
}
