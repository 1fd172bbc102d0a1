import type { WatchOptions } from './run-monitor.ts';
import type { ContextVector } from '../domain/context.ts';
import type { ConversationResult, ConversationSpec, TurnRecord } from '../domain/conversation.ts';
import type { Strategy } from '../domain/taxonomy.ts';
import type { ConnectedHeadUnit } from './connect.ts';
import type { ArtifactInput, ResultStore } from '../store/store.ts';
import type { CampaignConfig, LoadedCampaign } from '../kinds/dialogue/config.ts';
import { ConversationAborted, runConversation } from '../kinds/dialogue/conversation.ts';
import type { CampaignEvent, CampaignEventListener } from './events.ts';
import { openRig, type CampaignTiers, type Rig, type RunRecorder } from './rig.ts';
import { planConversations } from '../kinds/dialogue/sampling.ts';
import type { RecordedFact } from './run-facts.ts';
import { runPool } from '../domain/pool.ts';
import { resumedRun, runEndStatus, type RunEndStatus } from './resume.ts';
import { trackUnitReach } from './unit-reach.ts';

export interface RunCampaignOptions {
  store: ResultStore;
  /** the rig to run on (openRig); the run closes it when it ends. Default: openRig(campaign, { tiers, headUnit, log }) */
  rig?: Rig;
  /** without a rig: the simulator and judge tiers to use (default: built from the config, see buildTiers) */
  tiers?: CampaignTiers;
  /** without a rig: an already connected system under test (tests); default: the config's headUnit */
  headUnit?: ConnectedHeadUnit;
  /**
   * runs the planned conversations somewhere else (the fleet coordinator, src/fleet) instead of on a
   * rig in this process; planning, storing, budget, abort and resume stay here. No rig is opened then.
   */
  executor?: ConversationExecutor;
  /** continue this run instead of starting a new one */
  resumeRunId?: string;
  /** abort = graceful stop: no new conversations start; running ones are abandoned and rerun on resume */
  signal?: AbortSignal;
  onEvent?: CampaignEventListener;
  log?: (line: string) => void;
}

export interface RunCampaignResult {
  runId: string;
  status: RunEndStatus;
  /** why the run stopped by itself before its end (the head unit left and did not come back, or stopped reaching it); null otherwise */
  stopReason: string | null;
  /** status unit_unreachable: how many conversations ran without reaching the unit, and the last cause */
  unreachable: string | null;
  done: number;
  planned: number;
}

/** A finished conversation as the store takes it: the result, its artifacts (voice recordings) and, from a fleet worker, the run facts it produced. */
export interface FinishedConversation {
  result: ConversationResult;
  artifacts: ArtifactInput[];
  /** written with the conversation in one transaction (a local run's recorder writes them as the conversation ends) */
  facts?: RecordedFact[];
}

/** Where planned conversations run: a rig in this process (rigExecutor) or a fleet of workers (src/fleet/coordinator.ts). */
export interface ConversationExecutor {
  /** conversations in flight at once */
  readonly concurrency: number;
  /** the tiers' references, stored with the run */
  readonly meta: { simulator: string; judges: string[] };
  /** Records what this invocation runs with and returns the per-conversation recorder (Rig.record). */
  record(store: ResultStore, runId: string): RunRecorder;
  /** null = go on; a text = the run must stop (why) */
  ready(): Promise<string | null>;
  /** Runs one planned conversation; rejects with ConversationAborted when the signal aborts first. `onRig`: a fleet worker's rig took it (a local run has no rig name). */
  run(runId: string, spec: ConversationSpec, signal: AbortSignal, onTurn: (turn: TurnRecord, active: readonly Strategy[]) => void, onRig: (rig: string) => void): Promise<FinishedConversation>;
  /** Closes what the executor opened; a second call does nothing. */
  close(): Promise<void>;
}

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
  options: { signal?: AbortSignal; onTurn?: (turn: TurnRecord, active: readonly Strategy[]) => void; recorder?: RunRecorder; contextAt?: (turnIndex: number) => ContextVector } = {},
): Promise<FinishedConversation> {
  const { vehicle, headUnit, voice, tiers } = rig;
  const drive = vehicle?.drive(spec);
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
      contextAt: drive?.contextAt ?? options.contextAt,
      beforeTurn: drive ? (session, turn) => drive.beforeTurn(headUnit.connection, session.sessionId, turn) : undefined,
      signal: options.signal,
      onTurn: options.onTurn,
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

/** The in-process executor: the config's concurrency on one rig, watched by the bridge monitor. */
function rigExecutor(rig: Rig, campaign: LoadedCampaign, watchOptions: () => Omit<WatchOptions, 'store' | 'runId'>): ConversationExecutor {
  const { config } = campaign;
  let recorder: RunRecorder | null = null;
  let watch: ReturnType<Rig['watch']> | null = null;
  let closing: Promise<void> | null = null;
  return {
    concurrency: config.concurrency,
    meta: { simulator: rig.tiers.simulator.describe, judges: rig.tiers.judges.map((j) => j.ref) },
    record(store, runId) {
      recorder = rig.record(store, runId);
      watch = rig.watch({ store, runId, ...watchOptions() });
      return recorder;
    },
    ready: () => watch!.ready(),
    run: (runId, spec, signal, onTurn) => runPlannedConversation(rig, config, runId, spec, { signal, onTurn, recorder: recorder ?? undefined, contextAt: campaign.contextAt }),
    close: () =>
      (closing ??= (async () => {
        watch?.close();
        await rig.close();
      })()),
  };
}

/**
 * Runs a campaign: plans (or, on resume, reloads) the conversations, connects the head unit,
 * runs conversations with bounded concurrency within the time budget, and stores each finished
 * conversation in one transaction. A conversation is stored exactly once; one that was running
 * when the process stopped is simply run again on resume.
 */
export async function runCampaign(campaign: LoadedCampaign, options: RunCampaignOptions): Promise<RunCampaignResult> {
  const { store } = options;
  const emit = (event: CampaignEvent) => options.onEvent?.(event);
  const log = options.log ?? (() => undefined);
  const { config } = campaign;

  const resumed = resumedRun(store, options.resumeRunId);
  // the rig (or the fleet) comes up before the run is recorded: a missing model, package, scenario or head unit leaves no half-started run behind
  let runIdForEvents = '';
  const executor =
    options.executor ??
    rigExecutor(options.rig ?? (await openRig(campaign, { tiers: options.tiers, headUnit: options.headUnit, log })), campaign, () => ({
      log,
      notify: (notice) => emit({ type: 'headunit', runId: runIdForEvents, ...notice }),
    }));
  let runId: string;
  let recorder: RunRecorder;
  try {
    if (resumed) {
      runId = resumed.id;
      store.setRunStatus(runId, 'running');
    } else {
      runId = store.createRun({ name: config.name, mode: campaign.runMode ?? config.mode, config, plan: campaign.plan ?? planConversations(campaign), meta: { ...executor.meta } });
    }
    runIdForEvents = runId;
    recorder = executor.record(store, runId);
  } catch (error) {
    await executor.close();
    throw error;
  }
  const planned = store.getRun(runId)!.planned;
  const remaining = store.remainingSpecs(runId);
  const budgetMs = config.budgetMinutes ? config.budgetMinutes * 60_000 : null;
  emit({ type: 'run_started', runId, name: config.name, planned, remaining: remaining.length, budgetMs });

  const started = Date.now();
  let done = planned - remaining.length;
  let budgetHit = false;
  const inflight = new Set<AbortController>();
  const onAbort = () => inflight.forEach((c) => c.abort());
  options.signal?.addEventListener('abort', onAbort);
  const aborted = new Promise<null>((resolve) => (options.signal?.aborted ? resolve(null) : options.signal?.addEventListener('abort', () => resolve(null), { once: true })));
  let stopReason: string | null = null;
  const reach = trackUnitReach(config.maxErrorShare);

  const beforeTake = async (): Promise<boolean> => {
    if (options.signal?.aborted || stopReason) return false;
    if (budgetMs !== null && Date.now() - started >= budgetMs) {
      budgetHit = true;
      return false;
    }
    // the pause hook: no new conversation starts while the head unit is away; Ctrl+C ends the wait at once
    const stop = await Promise.race([executor.ready(), aborted]);
    if (stop) stopReason ??= stop;
    return !stopReason && !options.signal?.aborted;
  };

  const work = async (spec: (typeof remaining)[number]): Promise<void> => {
    const controller = new AbortController();
    inflight.add(controller);
    emit({ type: 'conversation_started', runId, key: spec.key, spec });
    let finished: FinishedConversation;
    try {
      finished = await executor.run(
        runId,
        spec,
        controller.signal,
        (turn, active) => emit({ type: 'turn', runId, key: spec.key, turn, activeStrategies: [...active] }),
        (rig) => emit({ type: 'conversation_rig', runId, key: spec.key, rig }),
      );
    } catch (error) {
      if (error instanceof ConversationAborted) return;
      throw error;
    } finally {
      inflight.delete(controller);
    }
    const { result } = finished;
    store.saveConversation(runId, result, finished.artifacts, finished.facts);
    done++;
    reach.record(result);
    stopReason ??= reach.stopReason();
    emit({ type: 'conversation_finished', runId, key: spec.key, result });
    emit({ type: 'progress', runId, done, planned, elapsedMs: Date.now() - started, budgetMs });
  };

  try {
    await runPool(remaining, work, { concurrency: executor.concurrency, beforeTake });
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    recorder.invocationEnded();
    await executor.close();
  }
  const status = runEndStatus({ aborted: options.signal?.aborted === true, stopReason, budgetHit, done, planned, neverReachedUnit: reach.neverReached() });
  store.setRunStatus(runId, status);
  emit({ type: 'run_finished', runId, status, done, planned, ...(stopReason ? { reason: stopReason } : {}) });
  return { runId, status, stopReason, unreachable: status === 'unit_unreachable' ? reach.summary() : null, done, planned };
}
