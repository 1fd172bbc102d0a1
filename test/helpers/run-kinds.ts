import type { ConversationSpec } from '../../src/domain/conversation.ts';
import { parseOrThrow } from '../../src/domain/validation.ts';
import type { LoadedConversations } from '../../src/kinds/dialogue/config.ts';
import { dialogueKind } from '../../src/kinds/dialogue/kind.ts';
import { openRig, type Rig } from '../../src/kinds/dialogue/rig.ts';
import type { CampaignTiers } from '../../src/kinds/dialogue/tiers.ts';
import { conversationRig, type FinishedConversation } from '../../src/kinds/dialogue/run.ts';
import { openManualQaRig } from '../../src/kinds/manual-qa/campaign.ts';
import type { LoadedManualQa } from '../../src/kinds/manual-qa/config.ts';
import { MANUAL_QA_FACTS, OmissionSearchResultSchema } from '../../src/kinds/manual-qa/item.ts';
import { manualQaKind } from '../../src/kinds/manual-qa/kind.ts';
import type { OmissionSearchResult } from '../../src/manual/omission.ts';
import { openToolAgentsRig, type FinishedTrial } from '../../src/kinds/tool-agents/campaign.ts';
import type { LoadedToolAgents } from '../../src/kinds/tool-agents/config.ts';
import { toolAgentsKind } from '../../src/kinds/tool-agents/kind.ts';
import type { TrialResult } from '../../src/kinds/tool-agents/loop.ts';
import { loadToolAgentsRun, type ToolTrialItem } from '../../src/kinds/tool-agents/results.ts';
import { summarizeTrials, type TrialsSummary } from '../../src/kinds/tool-agents/summary.ts';
import type { ConnectedHeadUnit } from '../../src/run/connect.ts';
import { rigItemRunner } from '../../src/run/envelope.ts';
import type { CampaignEventListener } from '../../src/run/events.ts';
import type { CampaignKindDefinition, ItemRunner } from '../../src/run/kind.ts';
import type { RunEndStatus } from '../../src/run/resume.ts';
import { runKindCampaign, type RunKindResult } from '../../src/run/runner.ts';
import type { ResultStore } from '../../src/store/store.ts';
import type { InvalidTask } from '../../src/toolenv/tasks.ts';

/**
 * Shorthands of the tests (and scripts/bench-*.ts) for running one kind on the one run skeleton (src/run/runner.ts)
 * with parts a test supplies: prebuilt tiers, a connected head unit, a rig, an executor. Production code runs every kind
 * with runKindCampaign and openItemRunner alone.
 */

/** Where planned conversations run: a rig in this process (rigRunner) or a fleet of workers (src/fleet/coordinator.ts). */
export type ConversationExecutor = ItemRunner<ConversationSpec, FinishedConversation>;

/** The in-process runner of a dialogue rig: the kind's rig with the run envelope (src/run/envelope.ts). */
export function rigRunner(rig: Rig, campaign: LoadedConversations, log: (line: string) => void): ConversationExecutor {
  return rigItemRunner(conversationRig(rig, campaign, log), { log });
}

export interface RunCampaignOptions<L extends LoadedConversations = LoadedConversations> {
  store: ResultStore;
  /** the kind of conversations (default the dialogue kind; a suite campaign: suiteKind; a live session: its own) */
  kind?: CampaignKindDefinition<L, ConversationSpec, FinishedConversation, unknown>;
  /** the rig to run on (openRig); the run closes it when it ends. Default: openRig(campaign, { tiers, headUnit, log }) */
  rig?: Rig;
  /** without a rig: the simulator and judge tiers to use (default: built from the config, see buildTiers) */
  tiers?: CampaignTiers;
  /** without a rig: an already connected system under test; default: the config's headUnit */
  headUnit?: ConnectedHeadUnit;
  /** runs the planned conversations somewhere else (the fleet coordinator, src/fleet) instead of on a rig in this process */
  executor?: ConversationExecutor;
  resumeRunId?: string;
  signal?: AbortSignal;
  onEvent?: CampaignEventListener;
  log?: (line: string) => void;
}

/** Runs a campaign of conversations: on a rig given or opened here (or around prebuilt tiers / a connected head unit), or on an executor. */
export async function runCampaign<L extends LoadedConversations>(campaign: L, options: RunCampaignOptions<L>): Promise<RunKindResult> {
  const log = options.log ?? (() => undefined);
  const runner =
    options.executor ??
    (options.rig || options.tiers || options.headUnit ? rigRunner(options.rig ?? (await openRig(campaign, { tiers: options.tiers, headUnit: options.headUnit, log })), campaign, log) : undefined);
  const kind = options.kind ?? (dialogueKind as unknown as CampaignKindDefinition<L, ConversationSpec, FinishedConversation, unknown>);
  return runKindCampaign(kind, campaign, { store: options.store, runner, resumeRunId: options.resumeRunId, signal: options.signal, onEvent: options.onEvent, log });
}

export interface RunManualQaOptions {
  store: ResultStore;
  resumeRunId?: string;
  signal?: AbortSignal;
  log?: (line: string) => void;
  onProgress?: (done: number, planned: number) => void;
  /** an already connected system under test; default: the config's headUnit with the manual skill */
  headUnit?: ConnectedHeadUnit;
}

/** Runs a manual-QA campaign; `omission`: the warning-omission search's stored result once the run completed. */
export async function runManualQa(loaded: LoadedManualQa, options: RunManualQaOptions): Promise<RunKindResult & { omission: OmissionSearchResult | null }> {
  const { store } = options;
  const runner = options.headUnit ? rigItemRunner(await openManualQaRig(loaded, { log: options.log, headUnit: options.headUnit }), { log: options.log }) : undefined;
  const result = await runKindCampaign(manualQaKind, loaded, {
    store,
    runner,
    resumeRunId: options.resumeRunId,
    signal: options.signal,
    log: options.log,
    onEvent: options.onProgress ? (event) => event.type === 'progress' && options.onProgress!(event.done, event.planned) : undefined,
  });
  const fact = result.status === 'completed' ? store.runFacts(result.runId, MANUAL_QA_FACTS.omission).at(-1) : undefined;
  const omission = fact ? parseOrThrow(OmissionSearchResultSchema, fact.data, `${store.path}: run ${result.runId} fact ${MANUAL_QA_FACTS.omission}`) : null;
  return { ...result, omission };
}

export interface ToolAgentsRun {
  runId: string;
  status: RunEndStatus;
  /** every trial of the run, including those stored by earlier invocations of a resumed run, in plan order */
  results: TrialResult[];
  summary: TrialsSummary;
  invalidTasks: InvalidTask[];
}

export interface RunToolAgentsOptions {
  store: ResultStore;
  resumeRunId?: string;
  signal?: AbortSignal;
  onTrial?: (result: TrialResult) => void;
  log?: (line: string) => void;
}

/** Runs a tool-agent campaign and reads it back from the store; `onTrial` sees each trial as it ends. */
export async function runToolAgentsCampaign(loaded: LoadedToolAgents, options: RunToolAgentsOptions): Promise<ToolAgentsRun> {
  const { store, onTrial } = options;
  let runner: ItemRunner<ToolTrialItem, FinishedTrial> | undefined;
  if (onTrial) {
    const opened = rigItemRunner(await openToolAgentsRig(loaded, { log: options.log }), { log: options.log });
    runner = {
      ...opened,
      run: async (...args) => {
        const finished = await opened.run(...args);
        onTrial(finished.result);
        return finished;
      },
    };
  }
  const result = await runKindCampaign(toolAgentsKind, loaded, { store, runner, resumeRunId: options.resumeRunId, signal: options.signal, log: options.log });
  const run = loadToolAgentsRun(store, result.runId);
  return { runId: result.runId, status: result.status, results: run.results, summary: summarizeTrials(run.results), invalidTasks: run.invalidTasks };
}
