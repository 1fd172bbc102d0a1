import type { ConversationResult, ConversationSpec } from '../domain/conversation.ts';
import { TIERS_FACT, type TierFallback } from '../domain/tiers.ts';
import { connectConfiguredHeadUnit, type ConnectedHeadUnit } from '../headunit/connect.ts';
import type { Judge } from '../judge/types.ts';
import type { UserSimulator } from '../simulator/types.ts';
import type { ResultStore } from '../store/store.ts';
import type { LoadedCampaign } from './config.ts';
import { ConversationAborted, runConversation } from './conversation.ts';
import type { CampaignEvent, CampaignEventListener } from './events.ts';
import { planConversations } from './sampling.ts';
import { describeTiers } from './tiers.ts';
import { VehicleFeed, type VehicleSection } from './vehicle-feed.ts';
import { CampaignVoice } from './voice.ts';
import { driverVocabulary } from '../voice/vocabulary.ts';
import { watchHeadUnit } from '../bridge/run-monitor.ts';
import { runPool } from '../domain/pool.ts';

export interface CampaignTiers {
  simulator: UserSimulator;
  /** in precedence order (src/judge/precedence.ts) */
  judges: Judge[];
  /** models the config named that were unavailable and replaced by its `fallback`; recorded with the run */
  fallbacks?: readonly TierFallback[];
}

export interface RunCampaignOptions {
  store: ResultStore;
  /** the simulator and judge tiers to use (see buildTiers) */
  tiers: CampaignTiers;
  /** continue this run instead of starting a new one */
  resumeRunId?: string;
  /** abort = graceful stop: no new conversations start; running ones are abandoned and rerun on resume */
  signal?: AbortSignal;
  onEvent?: CampaignEventListener;
  log?: (line: string) => void;
  /** an already connected system under test (tests); default: the config's headUnit */
  headUnit?: ConnectedHeadUnit;
}

export interface RunCampaignResult {
  runId: string;
  status: 'completed' | 'interrupted' | 'budget_exhausted';
  /** why the run stopped by itself before its end (the head unit left and did not come back); null otherwise */
  stopReason: string | null;
  done: number;
  planned: number;
  /** the summary's `vehicle` section when a drive scenario fed the run (counts of this invocation) */
  vehicle: VehicleSection | null;
}

/**
 * Runs a campaign: plans (or, on resume, reloads) the conversations, connects the head unit,
 * runs conversations with bounded concurrency within the time budget, and stores each finished
 * conversation in one transaction. A conversation is stored exactly once; one that was running
 * when the process stopped is simply run again on resume.
 */
export async function runCampaign(campaign: LoadedCampaign, options: RunCampaignOptions): Promise<RunCampaignResult> {
  const { store, tiers } = options;
  const emit = (event: CampaignEvent) => options.onEvent?.(event);
  const log = options.log ?? (() => undefined);
  const { config } = campaign;

  const resumed = options.resumeRunId ? store.getRun(options.resumeRunId) : null;
  if (options.resumeRunId && !resumed) throw new Error(`--resume: no run ${options.resumeRunId} in this workspace (icabench runs lists them)`);
  // the rig comes up before the run is recorded: a missing package, scenario or head unit leaves no half-started run behind
  const rig = await openRig(campaign, options, log);
  const { vehicle, headUnit, voice } = rig;
  let runId: string;
  try {
    if (resumed) {
      runId = resumed.id;
      store.setRunStatus(runId, 'running');
    } else {
      runId = store.createRun({ name: config.name, mode: config.mode, config, plan: planConversations(campaign), meta: { simulator: tiers.simulator.describe, judges: tiers.judges.map((j) => j.ref) } });
    }
    store.addRunFact(runId, TIERS_FACT, describeTiers(tiers));
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
  const watch = watchHeadUnit(headUnit, { store, runId, log, notify: (notice) => emit({ type: 'headunit', runId, ...notice }) });
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
    await rig.close();
  }
  const status = options.signal?.aborted || stopReason ? 'interrupted' : budgetHit && done < planned ? 'budget_exhausted' : 'completed';
  store.setRunStatus(runId, status);
  emit({ type: 'run_finished', runId, status, done, planned, ...(stopReason ? { reason: stopReason } : {}) });
  const rejected = headUnit.reference?.vehicleCounts();
  const vehicleSection = vehicle ? vehicle.section(rejected ? rejected.unknownId + rejected.lengthMismatch + rejected.valuesRejected : null) : null;
  return { runId, status, stopReason, done, planned, vehicle: vehicleSection };
}

interface Rig {
  vehicle: VehicleFeed | null;
  headUnit: ConnectedHeadUnit;
  voice: CampaignVoice | null;
  /** closes what the run opened (a head unit passed in by the caller stays open) */
  close(): Promise<void>;
}

/** The drive-scenario feed, the connected head unit and the bench's voice; on any failure, what was opened is closed again. */
async function openRig(campaign: LoadedCampaign, options: RunCampaignOptions, log: (line: string) => void): Promise<Rig> {
  const { config } = campaign;
  const spoken = config.voice?.enabled ? config.voice : null;
  if (spoken) await CampaignVoice.checkPrerequisites(spoken);
  const vehicle = config.vehicle ? await VehicleFeed.open(config.vehicle, config.concurrency) : null;
  let headUnit: ConnectedHeadUnit | undefined;
  try {
    headUnit =
      options.headUnit ??
      (await connectConfiguredHeadUnit(config.headUnit, log, {
        vehicleMapping: vehicle?.mapping,
        safety: config.safety,
        voice: spoken ? { vocabulary: driverVocabulary(campaign.seeds), onError: (error) => log(`voice: the reference head unit could not speak a reply: ${error.message}`) } : undefined,
      }));
    const voice = spoken ? await CampaignVoice.open(spoken, campaign, headUnit, log) : null;
    const connected = headUnit;
    return {
      vehicle,
      headUnit,
      voice,
      close: async () => {
        await voice?.close();
        if (!options.headUnit) await connected.close();
        await vehicle?.close();
      },
    };
  } catch (error) {
    if (headUnit && !options.headUnit) await headUnit.close();
    await vehicle?.close();
    throw error;
  }
}
