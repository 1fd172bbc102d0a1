import { arch, platform } from 'node:os';
import { z } from 'zod';
import { LlmCallRecordSchema, LlmUsageTracker, PriceTableSchema, type LlmCallRecord, type LlmUsageSummary } from '../llm/usage.ts';
import { parseOrThrow } from '../domain/validation.ts';
import { InvocationSummarySchema, type InvocationSummary } from '../domain/invocation.ts';
import type { ResultStore } from '../store/store.ts';
import { TIERS_FACT, TiersRecordSchema } from '../domain/tiers.ts';
import { icabenchVersion } from '../domain/package-files.ts';

/**
 * The run facts a campaign records as it runs, besides its conversations, so that everything a
 * report shows is in the store with the run (docs/architecture.md, "One rig, one record"):
 *
 * - `run.invocation`  once per invocation (a resume is one more): package and Node versions, the
 *   machine, the model hosts, the LLM prices and the resolved config it ran with;
 * - `llm.calls`       the model calls (usage and accounting) made since the previous record: after
 *   every conversation and at the end of each invocation that uses model tiers;
 * - `vehicle.feed`    once per invocation of a drive-scenario campaign: what fed the bus;
 * - `vehicle.frames`  after every conversation: the frames sent (and rejected by the head unit);
 * - `vehicle.observe` once per invocation that watches the bus (vehicle.observe): transport, action mapping, window;
 * - `unit.build`      once per invocation: the head unit and the build it announced (or `--unit-build`).
 *
 * Voice metrics are stored per turn with the conversation (TurnRecord.voice); the judge references
 * and prompt versions in `tiers.resolved` (src/domain/tiers.ts); bridge events in `bridge.*`.
 */
export const RUN_FACTS = {
  invocation: 'run.invocation',
  llmCalls: 'llm.calls',
  vehicleFeed: 'vehicle.feed',
  vehicleFrames: 'vehicle.frames',
  vehicleObserve: 'vehicle.observe',
  unitBuild: 'unit.build',
} as const;

export const InvocationFactSchema = InvocationSummarySchema.extend({
  llmPrices: PriceTableSchema,
  /** the campaign config as loaded for this invocation */
  config: z.unknown(),
});
export type InvocationFact = z.infer<typeof InvocationFactSchema>;

/** What this invocation runs with, as every kind records it (`run.invocation`): versions, the machine, the model hosts and prices, the config. */
export function invocationFact(config: unknown, modelHosts: InvocationFact['modelHosts'], llmPrices: InvocationFact['llmPrices']): InvocationFact {
  return { icabench: icabenchVersion(), node: process.version, platform: platform(), arch: arch(), modelHosts, llmPrices, config };
}

export const LlmCallsFactSchema = z.object({
  /** the conversation whose end flushed these calls; null at the end of an invocation */
  conversation: z.string().nullable(),
  calls: z.array(LlmCallRecordSchema),
});

/**
 * The head unit a run (each invocation of it) talked to, and its build: the one its hello announced
 * (`unit.build`, docs/bridge-protocol.md), or the one `--unit-build` gave (it wins, for units that do not
 * announce one); null when neither said. Two runs of one suite or campaign on two builds are compared by it.
 */
export const UnitBuildFactSchema = z.object({
  unit: z.string().nullable(),
  version: z.string().nullable(),
  build: z.string().nullable(),
  source: z.enum(['hello', 'option']).nullable(),
});
export type UnitBuildFact = z.infer<typeof UnitBuildFactSchema>;

export const VehicleFeedFactSchema = z.object({
  scenario: z.string(),
  mapping: z.string(),
  dbc: z.string(),
  transport: z.string(),
  secondsPerTurn: z.number(),
});

export const VehicleFramesFactSchema = z.object({
  conversation: z.string(),
  framesSent: z.number().int().min(0),
  /** frames the receiving head unit rejected meanwhile (known for the reference head unit; null otherwise) */
  framesRejected: z.number().int().min(0).nullable(),
});

/** The observation channel of a run (docs/bus-observation.md): where it listened, with which action mapping and window. */
export const VehicleObserveFactSchema = z.object({
  transport: z.string(),
  mapping: z.string(),
  dbc: z.string(),
  windowMs: z.number().min(0),
  /** the action kinds the mapping reads (vehicle_control per control) */
  carries: z.array(z.string()),
});

/** The `vehicle` section of summary.json. */
export const VehicleSectionSchema = VehicleFeedFactSchema.extend({
  framesSent: z.number().int().min(0),
  framesRejected: z.number().int().min(0).nullable(),
});
export type VehicleSection = z.infer<typeof VehicleSectionSchema>;

const SCHEMAS = {
  [RUN_FACTS.invocation]: InvocationFactSchema,
  [RUN_FACTS.llmCalls]: LlmCallsFactSchema,
  [RUN_FACTS.vehicleFeed]: VehicleFeedFactSchema,
  [RUN_FACTS.vehicleFrames]: VehicleFramesFactSchema,
  [RUN_FACTS.vehicleObserve]: VehicleObserveFactSchema,
  [RUN_FACTS.unitBuild]: UnitBuildFactSchema,
} as const;
type Kind = keyof typeof SCHEMAS;

/** Where run facts are written: the run's store, or (on a fleet worker) a collector whose facts travel with the result. */
export type RunFactSink = Pick<ResultStore, 'addRunFact'>;

/** A run fact as it travels from a fleet worker to the coordinator, validated against its kind's schema. */
export const RecordedFactSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal(RUN_FACTS.invocation), data: InvocationFactSchema }),
  z.strictObject({ kind: z.literal(RUN_FACTS.llmCalls), data: LlmCallsFactSchema }),
  z.strictObject({ kind: z.literal(RUN_FACTS.vehicleFeed), data: VehicleFeedFactSchema }),
  z.strictObject({ kind: z.literal(RUN_FACTS.vehicleFrames), data: VehicleFramesFactSchema }),
  z.strictObject({ kind: z.literal(RUN_FACTS.vehicleObserve), data: VehicleObserveFactSchema }),
  z.strictObject({ kind: z.literal(RUN_FACTS.unitBuild), data: UnitBuildFactSchema }),
  z.strictObject({ kind: z.literal(TIERS_FACT), data: TiersRecordSchema }),
]);
export type RecordedFact = z.infer<typeof RecordedFactSchema>;

const RECORDED_KINDS = new Set<string>(RecordedFactSchema.options.map((o) => o.shape.kind.value));
/** Any run fact on the fleet's wire: a kind above validated against its schema; a kind's own facts (e.g. manual-qa.setup) as the kind recorded them. */
export const WireFactSchema = z.union([
  RecordedFactSchema,
  z.strictObject({ kind: z.string().min(1).refine((kind) => !RECORDED_KINDS.has(kind), { message: 'a recorded fact kind whose data does not match its schema' }), data: z.json() }),
]);
export type WireFact = z.infer<typeof WireFactSchema>;

/** A run's facts of one kind, validated, in the order they were recorded. */
export function readRunFacts<K extends Kind>(store: ResultStore, runId: string, kind: K): z.infer<(typeof SCHEMAS)[K]>[] {
  return store.runFacts(runId, kind).map((fact, i) => parseOrThrow(SCHEMAS[kind], fact.data, `${store.path}: run ${runId} fact ${kind} #${i + 1}`) as z.infer<(typeof SCHEMAS)[K]>);
}

/** Records a fact after validating it against its kind's schema (a writer bug fails here, not in a later report). */
export function recordRunFact<K extends Kind>(store: RunFactSink, runId: string, kind: K, data: z.input<(typeof SCHEMAS)[K]>): void {
  store.addRunFact(runId, kind, parseOrThrow(SCHEMAS[kind], data, `run ${runId} fact ${kind}`));
}

/** Flushes a tracker's new call records as `llm.calls` facts. */
export class LlmCallRecorder {
  constructor(private readonly tracker: Pick<LlmUsageTracker, 'drain'>) {}

  flush(store: RunFactSink, runId: string, conversation: string | null, always = false): void {
    for (const fact of this.take(runId, conversation, always)) store.addRunFact(runId, fact.kind, fact.data);
  }

  /**
   * The new call records as the `llm.calls` fact of one item (none when no call was made), for the store to write in
   * the item's own transaction: a crash then leaves neither calls without their item nor an item without its calls.
   * The tracker forgets them: from here on the store holds them.
   */
  take(runId: string, conversation: string | null, always = false): RecordedFact[] {
    const calls = this.tracker.drain();
    if (calls.length === 0 && !always) return [];
    return [{ kind: RUN_FACTS.llmCalls, data: parseOrThrow(LlmCallsFactSchema, { conversation, calls }, `run ${runId} fact ${RUN_FACTS.llmCalls}`) }];
  }
}

/** The `vehicle` section of summary.json: the feed (as of the latest invocation) and the frames of every conversation; null without a drive scenario. */
export function vehicleSection(store: ResultStore, runId: string): VehicleSection | null {
  const feed = readRunFacts(store, runId, RUN_FACTS.vehicleFeed).at(-1);
  if (!feed) return null;
  const frames = readRunFacts(store, runId, RUN_FACTS.vehicleFrames);
  const rejected = frames.map((f) => f.framesRejected);
  return {
    ...feed,
    framesSent: frames.reduce((sum, f) => sum + f.framesSent, 0),
    framesRejected: rejected.includes(null) ? null : (rejected as number[]).reduce((sum, n) => sum + n, 0),
  };
}

/** The `llm` section of summary.json from the stored calls of every invocation (prices as of the latest); null when no model tier ran. */
export function llmUsage(store: ResultStore, runId: string, turns: number): LlmUsageSummary | null {
  const facts = readRunFacts(store, runId, RUN_FACTS.llmCalls);
  if (facts.length === 0) return null;
  const prices = readRunFacts(store, runId, RUN_FACTS.invocation).at(-1)?.llmPrices ?? {};
  const tracker = new LlmUsageTracker({ prices });
  for (const fact of facts) for (const call of fact.calls) tracker.record(call);
  return tracker.summary(turns);
}

/** The build a run last recorded (its latest invocation's), null when it recorded none. */
export function unitBuildOf(store: ResultStore, runId: string): UnitBuildFact | null {
  return readRunFacts(store, runId, RUN_FACTS.unitBuild).at(-1) ?? null;
}

/** The `invocations` section of summary.json: what each start or resume ran on. */
export function invocations(store: ResultStore, runId: string): InvocationSummary[] {
  return readRunFacts(store, runId, RUN_FACTS.invocation).map(({ icabench, node, platform, arch, modelHosts }) => ({ icabench, node, platform, arch, modelHosts }));
}
