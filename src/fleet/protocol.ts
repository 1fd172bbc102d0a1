import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import { describeZodError } from '../domain/validation.ts';
import { WireFactSchema } from '../run/run-facts.ts';
import { RIG_CAPABILITIES, RIG_TRANSPORTS, type RigNeeds } from '../run/kind.ts';

/**
 * What travels through the fleet's Redis, each message validated with zod where it is read: a
 * worker never runs a job it cannot parse, a coordinator never stores a result it cannot parse.
 */

/** What a worker's rig can test beyond text; a config's items need some (src/run/kind.ts, RigNeeds): `audio` for spoken turns, `vehicle` for a drive scenario, `tools` for tool-agent tasks. */
export const CapabilitySchema = z.enum(RIG_CAPABILITIES);
export type Capability = z.infer<typeof CapabilitySchema>;

/** How the rig reaches its head unit (or agent): the reference unit in the worker, a unit dialling in to the worker's bridge, an HTTP endpoint. */
export const TransportSchema = z.enum(RIG_TRANSPORTS);
export type Transport = z.infer<typeof TransportSchema>;

export const WorkerStateSchema = z.enum(['ready', 'headunit_unreachable', 'stopping']);

/** A worker's heartbeat (a Redis key that expires when the worker stops beating). */
export const WorkerStatusSchema = z.strictObject({
  id: z.string().min(1),
  rig: z.string().min(1),
  host: z.string(),
  pid: z.number().int(),
  capabilities: z.array(CapabilitySchema).min(1),
  transports: z.array(TransportSchema).min(1),
  /** the voice rig (what speaks and listens), when the worker has audio */
  voice: z.string().nullable(),
  concurrency: z.number().int().min(1),
  state: WorkerStateSchema,
  /** why the worker stopped taking jobs (state headunit_unreachable) */
  reason: z.string().nullable(),
  /** run id / item key of what it runs now */
  current: z.array(z.string()),
  done: z.number().int().min(0),
  /** ISO time of this beat */
  at: z.string(),
});
export type WorkerStatus = z.infer<typeof WorkerStatusSchema>;

/** What a run's items need of a worker: the kind's rig needs, `text` always among them, sorted. */
export type Requirements = RigNeeds;

export function runRequirements(needs: RigNeeds): Requirements {
  return { transport: needs.transport, capabilities: [...new Set<Capability>(['text', ...needs.capabilities])].sort() };
}

export function describeRequirements(requirements: Requirements): string {
  return `${requirements.capabilities.join('+')} over ${requirements.transport}`;
}

/** A worker serves a run when it has its transport and every capability it needs. */
export function canServe(worker: Pick<WorkerStatus, 'capabilities' | 'transports'>, requirements: Requirements): boolean {
  return worker.transports.includes(requirements.transport) && requirements.capabilities.every((c) => worker.capabilities.includes(c));
}

/** One queue per requirement profile: a worker listens only on the queues of profiles it can serve (capability routing). */
export function itemQueueName(requirements: Requirements): string {
  return `icabench-items-${requirements.transport}-${requirements.capabilities.join('+')}`;
}

/** Every queue a worker with these capabilities can take jobs from. */
export function servedQueueNames(capabilities: readonly Capability[], transports: readonly Transport[]): string[] {
  const extras = [...new Set(capabilities)].filter((c) => c !== 'text').sort() as Capability[];
  const subsets: Capability[][] = [[]];
  for (const extra of extras) subsets.push(...subsets.map((s) => [...s, extra]));
  if (!capabilities.includes('text')) return [];
  return transports.flatMap((transport) => subsets.map((subset) => itemQueueName({ transport, capabilities: ['text' as Capability, ...subset].sort() })));
}

/** The results of one run travel back on their own queue; the coordinator of that run consumes it. */
export function resultQueueName(runId: string): string {
  return `icabench-results-${runId}`;
}

export const RUN_KEY_PREFIX = 'icabench:fleet:run:';
export const WORKER_KEY_PREFIX = 'icabench:fleet:worker:';

/** The job id of one planned item: unique per run and key, so an enqueued item is never enqueued twice. */
export function itemJobId(runId: string, key: string): string {
  return `${runId}__${key}`;
}

/** What a worker needs to open the runner of a run: the kind and its loaded config in the kind's wire form (src/run/kind.ts, KindWire), paths as the coordinator resolved them. */
export const RunDescriptorSchema = z.strictObject({
  runId: z.string().min(1),
  kind: z.string().min(1),
  loaded: z.unknown(),
});
export type RunDescriptor = z.infer<typeof RunDescriptorSchema>;

/** One job = one planned item; `item` is in its kind's wire form, decoded by the worker with the run's kind. */
export const ItemJobSchema = z.strictObject({
  runId: z.string().min(1),
  key: z.string().min(1),
  item: z.unknown(),
});
export type ItemJob = z.infer<typeof ItemJobSchema>;

/** The job name of a kind's step after its items (src/run/kind.ts, AfterItemsStep); an item job is named after the kind's item noun. */
export const AFTER_ITEMS_JOB = 'after-items';

/** The job id of a run's after-items step, on the item queue and on the result queue: apart from every item's (`<run id>__<key>`, and a key planned before the run had an id). */
export function afterItemsJobId(runId: string): string {
  return `${runId}.after-items`;
}

/** The job of a run's after-items step, once per run after every item is stored; `input` is in the step's wire form. */
export const AfterItemsJobSchema = z.strictObject({
  runId: z.string().min(1),
  input: z.unknown(),
});
export type AfterItemsJob = z.infer<typeof AfterItemsJobSchema>;

/** What a worker reports as a job's progress when it takes it: its rig (the coordinator's live view shows which rig runs what). */
export const JobTakenSchema = z.strictObject({ rig: z.string().min(1) });

/** What every result from a worker carries (an item's, and the after-items step's): who sent it, and its runner's facts. */
const WorkerResultSchema = z.strictObject({
  runId: z.string().min(1),
  rig: z.string().min(1),
  workerId: z.string().min(1),
  /** what the worker's runner recorded as it opened for this run (`run.invocation`, `tiers.resolved`, …): the same with every result, stored once per worker */
  invocationFacts: z.array(WireFactSchema),
  /** facts the runner recorded since the previous result outside any item (the head unit's link events): stored once, as they come */
  runFacts: z.array(WireFactSchema),
});
export type WorkerResult = z.infer<typeof WorkerResultSchema>;

/** A finished item on its way back to the coordinator. */
export const ItemResultMessageSchema = WorkerResultSchema.extend({
  key: z.string().min(1),
  /** the kind's Finished value in its wire form (with the facts the item produced), decoded by the coordinator with the run's kind */
  finished: z.unknown(),
});
export type ItemResultMessage = z.infer<typeof ItemResultMessageSchema>;

/** The output of a run's after-items step on its way back to the coordinator. */
export const AfterItemsResultMessageSchema = WorkerResultSchema.extend({
  /** the step's output in its wire form, decoded by the coordinator with the run's kind */
  output: z.unknown(),
});
export type AfterItemsResultMessage = z.infer<typeof AfterItemsResultMessageSchema>;

/** A job's or result's value read with `read`; one that does not read fails the job for good (never retried, never run). */
export function unrecoverable<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new UnrecoverableError(error instanceof Error ? error.message : String(error));
  }
}

/** A job's or result's message checked against its schema; one that does not match fails the job for good, saying what was wrong. */
export function parsedOrUnrecoverable<S extends z.ZodType>(schema: S, data: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new UnrecoverableError(`${where}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}
