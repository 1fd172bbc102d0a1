import type { ContextVector } from '../../domain/context.ts';
import type { ConversationResult, ConversationSpec } from '../../domain/conversation.ts';
import type { ConnectedHeadUnit } from '../../run/connect.ts';
import type { ArtifactInput, ResultStore } from '../../store/store.ts';
import type { CampaignEvent, CampaignEventListener } from '../../run/events.ts';
import type { CampaignKindDefinition, ItemRunner } from '../../run/kind.ts';
import { openRig, type CampaignTiers, type Rig, type RunRecorder } from './rig.ts';
import type { RecordedFact, RunFactSink } from '../../run/run-facts.ts';
import { runKindCampaign, type RunKindResult } from '../../run/runner.ts';
import { pipelinesTurns, type CampaignConfig, type LoadedCampaign } from './config.ts';
import { runConversation } from './conversation.ts';
import { dialogueKind } from './kind.ts';
import { textOnlyNoticeFor } from './text-only.ts';

/** A finished conversation as the store takes it: the result, its artifacts (voice recordings) and, from a fleet worker, the run facts it produced. */
export interface FinishedConversation {
  result: ConversationResult;
  artifacts: ArtifactInput[];
  /** written with the conversation in one transaction (a local run's recorder writes them as the conversation ends) */
  facts?: RecordedFact[];
}

/** Where planned conversations run: a rig in this process (rigRunner) or a fleet of workers (src/fleet/coordinator.ts). */
export type ConversationExecutor = ItemRunner<ConversationSpec, FinishedConversation>;

/**
 * Runs one planned conversation on a rig: the session with its head unit (spoken through the
 * bench's voice when the config asks for it), the drive scenario's frames, the tiers. The one
 * place a conversation is driven: `icabench run` and every fleet worker call it.
 */
export async function runPlannedConversation(
  rig: Rig,
  config: CampaignConfig,
  runId: string,
  spec: ConversationSpec,
  options: { signal?: AbortSignal; emit?: (event: CampaignEvent) => void; recorder?: RunRecorder; contextAt?: (turnIndex: number) => ContextVector } = {},
): Promise<FinishedConversation> {
  const { vehicle, headUnit, voice, tiers } = rig;
  const drive = vehicle?.drive(spec);
  const emit = options.emit;
  let result: ConversationResult;
  // what the unit announced in its hello; read once it is connected
  let structured = true;
  try {
    result = await runConversation({
      spec,
      openSession: async (context) => {
        await headUnit.ensureReady();
        structured = headUnit.connection.capabilities().structuredActions;
        const session = await headUnit.connection.openSession(`${runId}/${spec.key}`, context);
        return voice ? voice.speaking(session, spec) : session;
      },
      simulator: tiers.simulator,
      judges: tiers.judges,
      structuredReplies: () => structured,
      failOn: config.scoring.failOn,
      inconclusive: config.scoring.inconclusive,
      // the paper's baseline runs without evaluator feedback (Negi et al., "Baseline")
      evaluatorFeedback: !(config.method === 'paper' && config.mode === 'baseline'),
      pipeline: pipelinesTurns(config),
      contextAt: drive?.contextAt ?? options.contextAt,
      beforeTurn: drive ? (session, turn) => drive.beforeTurn(headUnit.connection, session.sessionId, turn) : undefined,
      observeTurn: vehicle?.observation ? () => vehicle.observation!.watchTurn() : undefined,
      signal: options.signal,
      onTurn: emit ? (turn, active) => emit({ type: 'turn', runId, key: spec.key, turn, activeStrategies: [...active] }) : undefined,
    });
  } catch (error) {
    voice?.discard(spec.key);
    throw error;
  } finally {
    // an abandoned conversation's frames and model calls happened too: they are recorded either way
    options.recorder?.conversationEnded(spec.key, drive);
  }
  return voice ? voice.finish(result) : { result, artifacts: [] };
}

/**
 * The in-process runner of the dialogue kind: the config's concurrency on one rig, watched by the bridge monitor. The facts a
 * conversation produces (its model calls, its vehicle frames) come back with it, stored in its transaction. `contextAt`
 * sets each turn's context (a live session: what the technician set; a drive scenario still wins).
 */
export function rigRunner(rig: Rig, campaign: LoadedCampaign, log: (line: string) => void, contextAt?: (turnIndex: number) => ContextVector): ConversationExecutor {
  const { config } = campaign;
  let recorder: RunRecorder | null = null;
  let watch: ReturnType<Rig['watch']> | null = null;
  let closing: Promise<void> | null = null;
  /** each ended conversation's facts, until it is handed back */
  const ended = new Map<string, RecordedFact[]>();
  let sink: RunFactSink | null = null;
  const take = (key: string) => {
    const facts = ended.get(key) ?? [];
    ended.delete(key);
    return facts;
  };
  return {
    concurrency: config.concurrency,
    meta: { simulator: rig.tiers.simulator.describe, judges: rig.tiers.judges.map((j) => j.ref) },
    record(facts, runId, emit) {
      sink = facts;
      // what the recorder writes as a conversation ends (synchronously) is that conversation's: taken aside at once
      let capturing: RecordedFact[] | null = null;
      const inner = rig.record({ addRunFact: (id, kind, data) => (capturing ? void capturing.push({ kind, data } as RecordedFact) : facts.addRunFact(id, kind, data)) }, runId);
      recorder = {
        conversationEnded(key, drive) {
          capturing = [];
          try {
            inner.conversationEnded(key, drive);
          } finally {
            ended.set(key, capturing);
            capturing = null;
          }
        },
        invocationEnded: () => inner.invocationEnded(),
      };
      watch = rig.watch({ store: facts, runId, log, notify: (notice) => emit({ type: 'headunit', runId, ...notice }) });
      // the unit is connected (its hello known): a text-only unit without a model judge is told so before the first conversation
      const textOnly = textOnlyNoticeFor(rig, campaign);
      if (textOnly) {
        log(`note: ${textOnly}`);
        emit({ type: 'headunit', runId, kind: 'text_only', message: textOnly });
      }
      return recorder;
    },
    ready: () => watch!.ready(),
    connectedUnits: () => rig.headUnit.bridge?.connectedUnits() ?? [],
    // an abandoned conversation rejects with ConversationAborted, an ItemAborted: run again on resume
    async run(runId, { key, item: spec }, signal, emit) {
      let finished: FinishedConversation;
      try {
        finished = await runPlannedConversation(rig, campaign.config, runId, spec, { signal, emit, recorder: recorder ?? undefined, contextAt });
      } catch (error) {
        // an abandoned conversation's frames and model calls happened too: recorded with the run
        for (const fact of take(key)) sink?.addRunFact(runId, fact.kind, fact.data);
        throw error;
      }
      return { ...finished, facts: [...(finished.facts ?? []), ...take(key)] };
    },
    close: () =>
      (closing ??= (async () => {
        watch?.close();
        await rig.close();
      })()),
  };
}

export interface RunCampaignOptions<L extends LoadedCampaign = LoadedCampaign> {
  store: ResultStore;
  /** the kind of conversations (default the dialogue kind; a suite campaign: suiteKind; a live session: its own) */
  kind?: CampaignKindDefinition<L, ConversationSpec, FinishedConversation, unknown>;
  /** the rig to run on (openRig); the run closes it when it ends. Default: openRig(campaign, { tiers, headUnit, log }) */
  rig?: Rig;
  /** without a rig: the simulator and judge tiers to use (default: built from the config, see buildTiers) */
  tiers?: CampaignTiers;
  /** without a rig: an already connected system under test (tests); default: the config's headUnit */
  headUnit?: ConnectedHeadUnit;
  /** runs the planned conversations somewhere else (the fleet coordinator, src/fleet) instead of on a rig in this process */
  executor?: ConversationExecutor;
  /** continue this run instead of starting a new one */
  resumeRunId?: string;
  /** abort = graceful stop: no new conversations start; running ones are abandoned and rerun on resume */
  signal?: AbortSignal;
  onEvent?: CampaignEventListener;
  log?: (line: string) => void;
}

/**
 * Runs a campaign of conversations on the one run skeleton (src/run/runner.ts): on a rig given or opened here (or
 * prebuilt tiers / a connected head unit, for tests), or on the fleet's workers.
 */
export async function runCampaign<L extends LoadedCampaign>(campaign: L, options: RunCampaignOptions<L>): Promise<RunKindResult> {
  const log = options.log ?? (() => undefined);
  const runner =
    options.executor ??
    (options.rig || options.tiers || options.headUnit ? rigRunner(options.rig ?? (await openRig(campaign, { tiers: options.tiers, headUnit: options.headUnit, log })), campaign, log) : undefined);
  const kind = options.kind ?? (dialogueKind as CampaignKindDefinition<L, ConversationSpec, FinishedConversation, unknown>);
  return runKindCampaign(kind, campaign, { store: options.store, runner, resumeRunId: options.resumeRunId, signal: options.signal, onEvent: options.onEvent, log });
}
