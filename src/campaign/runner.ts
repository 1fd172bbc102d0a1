import type { ConversationResult } from '../domain/conversation.ts';
import type { ConnectedHeadUnit } from '../headunit/connect.ts';
import type { ResultStore } from '../store/store.ts';
import type { LoadedCampaign } from './config.ts';
import { ConversationAborted, runConversation } from './conversation.ts';
import type { CampaignEvent, CampaignEventListener } from './events.ts';
import { openRig, type CampaignTiers, type Rig, type RunRecorder } from './rig.ts';
import { planConversations } from './sampling.ts';
import { runPool } from '../domain/pool.ts';
import { resumedRun, runEndStatus } from './resume.ts';

export interface RunCampaignOptions {
  store: ResultStore;
  /** the rig to run on (openRig); the run closes it when it ends. Default: openRig(campaign, { tiers, headUnit, log }) */
  rig?: Rig;
  /** without a rig: the simulator and judge tiers to use (default: built from the config, see buildTiers) */
  tiers?: CampaignTiers;
  /** without a rig: an already connected system under test (tests); default: the config's headUnit */
  headUnit?: ConnectedHeadUnit;
  /** continue this run instead of starting a new one */
  resumeRunId?: string;
  /** abort = graceful stop: no new conversations start; running ones are abandoned and rerun on resume */
  signal?: AbortSignal;
  onEvent?: CampaignEventListener;
  log?: (line: string) => void;
}

export interface RunCampaignResult {
  runId: string;
  status: 'completed' | 'interrupted' | 'budget_exhausted';
  /** why the run stopped by itself before its end (the head unit left and did not come back); null otherwise */
  stopReason: string | null;
  done: number;
  planned: number;
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
  // the rig comes up before the run is recorded: a missing model, package, scenario or head unit leaves no half-started run behind
  const rig = options.rig ?? (await openRig(campaign, { tiers: options.tiers, headUnit: options.headUnit, log }));
  const { vehicle, headUnit, voice, tiers } = rig;
  let runId: string;
  let recorder: RunRecorder;
  try {
    if (resumed) {
      runId = resumed.id;
      store.setRunStatus(runId, 'running');
    } else {
      runId = store.createRun({ name: config.name, mode: config.mode, config, plan: planConversations(campaign), meta: { simulator: tiers.simulator.describe, judges: tiers.judges.map((j) => j.ref) } });
    }
    recorder = rig.record(store, runId);
  } catch (error) {
    await rig.close();
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
  const watch = rig.watch({ store, runId, log, notify: (notice) => emit({ type: 'headunit', runId, ...notice }) });
  let stopReason: string | null = null;

  const beforeTake = async (): Promise<boolean> => {
    if (options.signal?.aborted || stopReason) return false;
    if (budgetMs !== null && Date.now() - started >= budgetMs) {
      budgetHit = true;
      return false;
    }
    // the pause hook: no new conversation starts while the head unit is away
    const stop = await watch.ready();
    if (stop) stopReason ??= stop;
    return !stopReason && !options.signal?.aborted;
  };

  const work = async (spec: (typeof remaining)[number]): Promise<void> => {
    const controller = new AbortController();
    inflight.add(controller);
    emit({ type: 'conversation_started', runId, key: spec.key, spec });
    let result: ConversationResult;
    const drive = vehicle?.drive(spec);
    try {
      result = await runConversation({
        spec,
        openSession: async (context) => {
          await headUnit.ensureReady();
          const session = await headUnit.connection.openSession(`${runId}/${spec.key}`, context);
          return voice ? voice.speaking(session, spec) : session;
        },
        simulator: tiers.simulator,
        judges: tiers.judges,
        failOn: config.scoring.failOn,
        contextAt: drive?.contextAt,
        beforeTurn: drive ? (session, turn) => drive.beforeTurn(headUnit.connection, session.sessionId, turn) : undefined,
        signal: controller.signal,
        onTurn: (turn, active) => emit({ type: 'turn', runId, key: spec.key, turn, activeStrategies: [...active] }),
      });
    } catch (error) {
      voice?.discard(spec.key);
      if (error instanceof ConversationAborted) return;
      throw error;
    } finally {
      inflight.delete(controller);
      // an abandoned conversation's frames and model calls happened too: they are recorded either way
      recorder.conversationEnded(spec.key, drive);
    }
    const finished = voice ? voice.finish(result) : { result, artifacts: [] };
    result = finished.result;
    store.saveConversation(runId, result, finished.artifacts);
    done++;
    emit({ type: 'conversation_finished', runId, key: spec.key, result });
    emit({ type: 'progress', runId, done, planned, elapsedMs: Date.now() - started, budgetMs });
  };

  try {
    await runPool(remaining, work, { concurrency: config.concurrency, beforeTake });
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    watch.close();
    recorder.invocationEnded();
    await rig.close();
  }
  const status = runEndStatus({ aborted: options.signal?.aborted === true, stopReason, budgetHit, done, planned });
  store.setRunStatus(runId, status);
  emit({ type: 'run_finished', runId, status, done, planned, ...(stopReason ? { reason: stopReason } : {}) });
  return { runId, status, stopReason, done, planned };
}
