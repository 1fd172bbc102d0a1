import { z } from 'zod';
import type { ResultStore } from '../store/store.ts';
import type { InvocationFact, RecordedFact, RunFactSink } from './run-facts.ts';
import type { TiersRecord } from '../domain/tiers.ts';
import type { LlmUsageTracker } from '../llm/usage.ts';
import type { ConnectedHeadUnit } from './connect.ts';
import { parseOrThrow } from '../domain/validation.ts';
import type { RunRecord } from '../store/types.ts';
import type { CampaignEvent } from './events.ts';
import type { ConnectedUnit } from '../bridge/server.ts';
import type { UnitReachSample } from './unit-reach.ts';
import type { KindView } from './kind-view.ts';

/**
 * The campaign-kind contract (docs/architecture.md, "Adding a campaign kind"). In the spirit of inspect_ai's
 * Task = dataset × solver × scorer, a kind declares what is particular to it, and the one run skeleton
 * (src/run/runner.ts, runKindCampaign) does everything every run needs: the resume lookup (refusing a run of
 * another kind or another config), planning, the worker pool, the time budget, Ctrl+C, storing each item in
 * one transaction, the run facts, the end status. The CLI, the bench app and the fleet reach every kind
 * through it (src/kinds/registry.ts lists the kinds).
 *
 *   config   `configSchema` and `load`: the YAML a user writes, validated and with its paths resolved
 *   dataset  `plan`: every item the run will hold, each with a unique key, stored with the run
 *   solver + scorer  `open` → KindRig.run: opens the rig (head unit, models) once, then runs and judges
 *            one item on it; what it returns is stored as is
 *   envelope what every run records the same way whatever its kind (src/run/envelope.ts): the invocation, the
 *            resolved tiers, the unit's build, the bridge link, each item's model calls in its transaction
 *   record   `storage`: how a run and its items are stored (dialogue: conversations; others: item_results)
 *   outputs  `outputs`: summary.json, report.html, junit.xml (and CSV) of a stored run, read from the store
 *   view     `view`: its method line, the app page its runs open on, its API routes and its comparison (src/run/kind-view.ts)
 */

/** What the run skeleton reads from every kind's config. */
export interface KindConfig {
  name: string;
  concurrency: number;
  budgetMinutes?: number;
  /** the share of recent items that may fail to reach the head unit before the run stops (src/run/unit-reach.ts) */
  maxErrorShare?: number;
}

/** A config file, loaded: where it came from and its validated value (paths resolved). */
export interface LoadedKindConfig<C extends KindConfig = KindConfig> {
  path: string;
  config: C;
}

/** One planned item: its key (unique in the run) and what runs it. */
export interface PlannedItem<Item> {
  key: string;
  item: Item;
}

/** The per-invocation record a runner keeps: started by `record`, ended once when the invocation ends. */
export interface InvocationRecord {
  /** the end of this invocation: what is not recorded yet (model calls after the last item) */
  invocationEnded(): void;
}

/** Where planned items run: a rig opened in this process, or a fleet of workers (src/fleet). `AfterIn`/`AfterOut`: the kind's after-items step. */
export interface ItemRunner<Item, Finished, AfterIn = never, AfterOut = never> {
  /** items in flight at once */
  readonly concurrency: number;
  /** what ran (model references, agent…), stored with a new run */
  readonly meta: Record<string, unknown>;
  /**
   * Records what this invocation runs with (run.invocation, tiers.resolved, …) and starts the per-item record; `emit` carries the
   * rig's live events (the head unit's link). It writes run facts only: on a fleet worker `facts` is a collector whose facts travel
   * to the coordinator; the facts an item produces belong in its Finished value (stored with it, in one transaction).
   */
  record(facts: RunFactSink, runId: string, emit: (event: CampaignEvent) => void): InvocationRecord;
  /** the pause hook before each item: null = go on; a text = the run must stop (why), e.g. the head unit left for good */
  ready(): Promise<string | null>;
  /** Runs and judges one planned item; rejects with ItemAborted when the signal aborts first (the item is run again on resume). */
  run(runId: string, planned: PlannedItem<Item>, signal: AbortSignal, emit: (event: CampaignEvent) => void): Promise<Finished>;
  /** Runs the kind's after-items step (CampaignKindDefinition.afterItems) on this rig: its input read from the store, its output for the store. */
  afterItems?(runId: string, input: AfterIn, log: (line: string) => void): Promise<AfterOut>;
  /** head units dialled in to a bridge this runner hosts (the bench app's rig status); absent: none */
  connectedUnits?(): ConnectedUnit[];
  /** Closes what the runner opened; a second call does nothing. */
  close(): Promise<void>;
}

/** What every Finished value may carry: the facts its item produced, stored with it in one transaction. */
export interface FinishedItem {
  facts?: RecordedFact[];
}

/**
 * What a kind's rig runs with, as the run skeleton records it for every kind alike (src/run/envelope.ts): the
 * invocation, the resolved tiers, the unit's build and link, and each item's model calls.
 */
export interface RigEnvelope {
  /** the config as this invocation runs it (`run.invocation`) */
  config: unknown;
  /** where the models' calls go and at what prices (`run.invocation`) */
  modelHosts: InvocationFact['modelHosts'];
  prices: InvocationFact['llmPrices'];
  /** what each role runs with (`tiers.resolved`); null: the run has no judge to record */
  tiers: TiersRecord | null;
  /** every model call of the run (`llm.calls`); null when only deterministic tiers run */
  tracker: Pick<LlmUsageTracker, 'drain'> | null;
  /** the head unit the items talk to: its build and its link are recorded, its absence pauses the run; null: none (a replay agent) */
  headUnit: ConnectedHeadUnit | null;
}

/** A kind's rig, opened by its `open`: what it runs with, and how to run one item on it. The run skeleton does the rest. */
export interface KindRig<Item, Finished extends FinishedItem, AfterIn = never, AfterOut = never> {
  /** items in flight at once */
  readonly concurrency: number;
  /** what ran (model references, agent…), stored with a new run */
  readonly meta: Record<string, unknown>;
  readonly envelope: RigEnvelope;
  /** the kind's own facts of an invocation (manual-QA's set-up, a drive scenario's feed); `facts` also takes what an abandoned item produced; `emit`: the live events */
  record?(facts: RunFactSink, runId: string, emit: (event: CampaignEvent) => void): void;
  /**
   * Runs and judges one planned item; rejects with ItemAborted when the signal aborts first (the item is run again on resume).
   * `ready` is the run's pause hook (the unit's link, watched by the envelope): null once the unit is there, else why the run stops.
   */
  run(runId: string, planned: PlannedItem<Item>, signal: AbortSignal, emit: (event: CampaignEvent) => void, ready: () => Promise<string | null>): Promise<Finished>;
  afterItems?(runId: string, input: AfterIn, log: (line: string) => void): Promise<AfterOut>;
  /**
   * Why the rig itself cannot run another item (an audio device of the bench failed, naming its config field and the fix),
   * or null. The envelope (src/run/envelope.ts) then abandons the item that ran into it (run again on resume, not stored as the
   * unit's failure) and stops the run with this reason. Absent: nothing of the rig fails on its own.
   */
  fault?(): string | null;
  /** Closes what the rig opened; a second call does nothing. */
  close(): Promise<void>;
}

/** An item abandoned because the run was stopped: not stored, run again on resume. */
export class ItemAborted extends Error {
  constructor(key: string) {
    super(`${key}: aborted`);
    this.name = 'ItemAborted';
  }
}

/** How a kind's runs are stored. Each item is saved exactly once, in one transaction with the facts it produced. */
export interface KindStorage<L, Item, Finished> {
  /** Records a new run with its plan (one transaction); returns its id. */
  create(store: ResultStore, loaded: L, plan: readonly PlannedItem<Item>[], meta: Record<string, unknown>): string;
  /** the planned items not stored yet, in plan order; taken one by one as the run goes (a kind may page them from the store) */
  remaining(store: ResultStore, run: RunRecord): Iterable<PlannedItem<Item>>;
  save(store: ResultStore, runId: string, key: string, finished: Finished): void;
  /**
   * On --resume: removes the stored items that never reached the head unit (an outage is no result about the unit),
   * so they run again; returns their keys. Absent: every stored item is kept.
   */
  forgetUnreached?(store: ResultStore, runId: string): string[];
}

/** What the CLI prints and writes for a stored run. */
export interface KindOutputs {
  /** Writes summary.json, report.html, junit.xml and the CSV into `outDir`; returns the lines `icabench run` prints. */
  write(store: ResultStore, runId: string, outDir: string): Promise<string[]>;
  /** summary.json of a stored run, byte for byte what `write` writes (the bench app serves it). */
  summaryJson(store: ResultStore, run: RunRecord): Promise<string>;
}

export type PathKind = 'read' | 'write' | 'device';

/** One field of a config that names a file, a folder or a device. */
export interface PathField<C = unknown> {
  field: string;
  path: string;
  kind: PathKind;
  /** sets the field to `path` (in the parsed config's form, e.g. simulator "gguf:/abs/model.gguf") */
  rewrite(config: C, path: string): void;
}

/** Options of opening a kind's runner (the CLI's overrides and log). */
export interface OpenOptions {
  overrides?: { simulator?: string; judges?: string[] };
  /** the head unit's build when it does not announce one (`icabench run --unit-build`), recorded with the run (src/run/envelope.ts) */
  unitBuild?: string;
  log?: (line: string) => void;
}

/** How a worker's rig reaches its head unit (the fleet routes jobs by it, docs/fleet.md). */
export const RIG_TRANSPORTS = ['reference', 'bridge', 'http'] as const;
/** What a rig can test beyond text (every rig has `text`). */
export const RIG_CAPABILITIES = ['text', 'audio', 'vehicle', 'tools'] as const;

/** What a config's items need of the rig that runs them: a fleet job goes only to a worker with this transport and every capability. */
export interface RigNeeds {
  transport: (typeof RIG_TRANSPORTS)[number];
  capabilities: (typeof RIG_CAPABILITIES)[number][];
}

/** One value's JSON form for a fleet worker or coordinator (src/fleet): `decode` validates with zod and throws naming `where`. */
export interface WireCodec<T> {
  encode(value: T): unknown;
  decode(data: unknown, where: string): T;
}

/**
 * How a kind's run travels through the fleet (src/fleet): the loaded config to every worker (paths stay as the coordinator
 * resolved them), each planned item as a job, each Finished value back to the coordinator, which stores it.
 */
export interface KindWire<L, Item, Finished> {
  loaded: WireCodec<L>;
  item: WireCodec<Item>;
  finished: WireCodec<Finished>;
  /** what the items of this config need of a worker's rig */
  needs(loaded: L): RigNeeds;
}

/**
 * A step a kind runs once per run, after every planned item is stored, on the rig (manual-QA: the warning-omission search
 * asks the head unit). The run skeleton reads its input from the store, the run's ItemRunner runs it (the rig in this
 * process, or a fleet worker as a job of its own), and the kind stores its output: the store stays with the run skeleton.
 */
export interface AfterItemsStep<L, AfterIn, AfterOut> {
  /** what the step needs of the stored run; null: nothing to do (the config asks for no such step, or a resumed run did it already) */
  input(loaded: L, store: ResultStore, runId: string): AfterIn | null;
  save(store: ResultStore, runId: string, output: AfterOut): void;
  /** how its input travels to a fleet worker and its output back */
  wire: { input: WireCodec<AfterIn>; output: WireCodec<AfterOut> };
}

/** The codec of a value that is its own JSON form: sent as is, validated with `schema` where it is read. */
export function jsonCodec<T>(schema: z.ZodType<T>): WireCodec<T> {
  return { encode: (value) => value, decode: (data, where) => parseOrThrow(schema, data, where) };
}

export interface CampaignKindDefinition<L extends LoadedKindConfig = LoadedKindConfig, Item = unknown, Finished extends FinishedItem = FinishedItem, FileConfig = L['config'], AfterIn = never, AfterOut = never> {
  /** its `kind:` value, and the kind its runs are stored as */
  readonly name: string;
  /** what an item is called in messages: conversation, question, task trial */
  readonly nouns: { item: string; items: string };
  readonly configSchema: z.ZodType;
  load(path: string): L;
  /** the model references the config names in every role, deterministic tiers left out (the rig status and `icabench doctor` check them) */
  modelRefs(config: FileConfig): string[];
  /** every file, folder or device the config names: the bench app checks them against its allowed folders and makes them absolute */
  pathFields(config: FileConfig): PathField<FileConfig>[];
  plan(loaded: L, log: (line: string) => void): Promise<PlannedItem<Item>[]>;
  /** opens the rig its items run on (src/run/envelope.ts, openItemRunner, makes it the run's ItemRunner) */
  open(loaded: L, options: OpenOptions): Promise<KindRig<Item, Finished, AfterIn, AfterOut>>;
  storage: KindStorage<L, Item, Finished>;
  /** the live events of an item as it starts and once it is stored (the bench app's live view, the CLI's progress) */
  startedEvent(runId: string, planned: PlannedItem<Item>): CampaignEvent;
  /**
   * whether a finished item reached the head unit (kinds that talk to one): a run none of whose items did ends as
   * unit_unreachable; null for an item that never tried the unit (it says nothing either way)
   */
  unitReach?(finished: Finished): UnitReachSample | null;
  finishedEvent(runId: string, key: string, finished: Finished): CampaignEvent;
  outputs: KindOutputs;
  /** how the bench app shows its runs; kinds that share a view (dialogue, suite, live: runs of conversations) are shown, and compared, alike */
  view: KindView;
  wire: KindWire<L, Item, Finished>;
  /** once per run after the last item is stored, on the rig (its runner's `afterItems` runs it); absent: none */
  afterItems?: AfterItemsStep<L, AfterIn, AfterOut>;
}

/** The path the `llm:` settings every kind shares may name: the development request cache (written). */
export function llmPathFields<C extends { llm: { cacheDir?: string } }>(config: C): PathField<C>[] {
  return config.llm.cacheDir ? [{ field: 'llm.cacheDir', path: config.llm.cacheDir, kind: 'write', rewrite: (c, p) => (c.llm.cacheDir = p) }] : [];
}
