import { ConfigError } from '../dialogue/config.ts';
import { resumedRun } from '../../run/resume.ts';
import { runPool } from '../../domain/pool.ts';
import { parseOrThrow } from '../../domain/validation.ts';
import type { ResultStore } from '../../store/store.ts';
import { startBridgeServer, type BridgeServer } from '../../bridge/server.ts';
import { createProvider } from '../../llm/index.ts';
import { unavailableModelsText } from '../../llm/availability.ts';
import { bridgeToolAgent } from './bridge-agent.ts';
import { createEndpointAgent } from './endpoint.ts';
import { chainJudges, confirmationRuleJudge, llmPolicyJudge, type PolicyJudge } from './judge.ts';
import { runToolTaskTrial, type ToolAgent, type TrialResult } from './loop.ts';
import { ReplayAgent } from './replay.ts';
import type { LoadedToolAgents } from './config.ts';
import { summarizeTrials, type TrialsSummary } from './summary.ts';
import { parseTasksLenient, readTaskFileText, type InvalidTask, type Task } from './tasks.ts';
import { loadToolAgentsRun, TOOL_AGENTS_FACTS, TOOL_AGENTS_KIND, ToolTrialItemSchema, trialKey, trialOutcomeWord, type ToolTrialItem } from './results.ts';
import { DeterministicTaskUser, LlmTaskUser, type TaskUserSimulator } from './usersim.ts';

/**
 * The tasks of a campaign: every valid task of every file (filtered by taskIds); bad files/tasks are listed, not
 * fatal. Nothing to run is fatal: no valid task in the files, or a taskIds entry that names no task.
 */
export function loadCampaignTasks(loaded: LoadedToolAgents): { tasks: Task[]; invalid: InvalidTask[] } {
  const tasks: Task[] = [];
  const invalid: InvalidTask[] = [];
  for (const file of loaded.taskFiles) {
    let text: string;
    try {
      text = readTaskFileText(file);
    } catch (error) {
      invalid.push({ where: file, taskId: '(file)', position: -1, reason: (error as Error).message });
      continue;
    }
    const parsed = parseTasksLenient(text, file);
    for (const task of parsed.tasks) tasks.push(task);
    for (const bad of parsed.invalid) invalid.push(bad);
  }
  if (tasks.length === 0) {
    const reasons = invalid.slice(0, 3).map((bad) => bad.reason);
    throw new ConfigError(`${loaded.path}: tasks: nothing to run: no task loaded from ${loaded.taskFiles.join(', ')}${reasons.length ? ` (${reasons.join('; ')}${invalid.length > 3 ? '; …' : ''})` : ''}`);
  }
  if (!loaded.config.taskIds) return { tasks, invalid };
  const known = new Set(tasks.map((t) => t.task_id));
  const unknown = loaded.config.taskIds.filter((id) => !known.has(id));
  if (unknown.length) throw new ConfigError(`${loaded.path}: taskIds: ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''} not in the task files (${loaded.taskFiles.length} files, ${tasks.length} tasks)`);
  const wanted = new Set(loaded.config.taskIds);
  return { tasks: tasks.filter((t) => wanted.has(t.task_id)), invalid };
}

export interface ToolAgentsRun {
  /** the stored run (null when run without a store) */
  runId: string | null;
  status: 'completed' | 'interrupted';
  /** every trial of the run, including those stored by earlier invocations of a resumed run */
  results: TrialResult[];
  summary: TrialsSummary;
  invalidTasks: InvalidTask[];
}

export interface RunToolAgentsOptions {
  /** store every trial as an item result of a `tool-agents` run (resumable); without it the run lives in memory only */
  store?: ResultStore;
  /** continue this stored run: its remaining trials, with the tasks as planned (the task files are not reread) */
  resumeRunId?: string;
  /** abort = graceful stop: no new trial starts; running ones finish and are stored */
  signal?: AbortSignal;
  onTrial?: (result: TrialResult) => void;
  log?: (line: string) => void;
}

/**
 * Runs a tool-agent campaign: every task × repeats (trial 0 of every task, then trial 1, …); `onTrial` sees each
 * result as it is recorded. With a store, each trial is one item result saved as soon as it ends, so an interrupted
 * run continues with `resumeRunId` and everything the report shows is read back from the store.
 */
export async function runToolAgentsCampaign(loaded: LoadedToolAgents, options: RunToolAgentsOptions = {}): Promise<ToolAgentsRun> {
  const { config } = loaded;
  const { store } = options;
  if (options.resumeRunId && !store) throw new Error('runToolAgentsCampaign: resumeRunId needs the store holding the run');
  const resumed = store ? resumedRun(store, options.resumeRunId, TOOL_AGENTS_KIND) : null;

  let plan: ToolTrialItem[];
  let invalidTasks: InvalidTask[];
  if (resumed) {
    plan = store!.remainingItems(resumed.id).map((row) => parseOrThrow(ToolTrialItemSchema, row.item, `${store!.path}: run ${resumed.id} trial "${row.key}"`));
    invalidTasks = loadToolAgentsRun(store!, resumed.id).invalidTasks;
  } else {
    const loadedTasks = loadCampaignTasks(loaded);
    invalidTasks = loadedTasks.invalid;
    plan = Array.from({ length: config.repeats }, (_, trial) => loadedTasks.tasks.map((task) => ({ taskId: task.task_id, trial, task }))).flat();
  }
  for (const bad of invalidTasks) options.log?.(`task not loaded: ${bad.where} ${bad.taskId}: ${bad.reason}`);

  // every model the run calls, checked once before anything is recorded
  const modelRefs = [...config.judges.filter((j) => j !== 'rule'), ...(config.user === 'deterministic' ? [] : [config.user]), ...(config.agent.type === 'endpoint' ? [config.agent.model] : [])];
  const unavailable = await unavailableModelsText('the run was not started', modelRefs);
  if (unavailable) throw new ConfigError(unavailable);
  const judges: PolicyJudge[] = config.judges.map((j) => (j === 'rule' ? confirmationRuleJudge : llmPolicyJudge(createProvider(j))));
  const judge = chainJudges(...judges);
  const userFor = (): TaskUserSimulator => (config.user === 'deterministic' ? new DeterministicTaskUser() : new LlmTaskUser(createProvider(config.user)));
  let bridge: BridgeServer | undefined;
  let agentFor: () => ToolAgent;
  const agentConfig = config.agent;
  if (agentConfig.type === 'replay') agentFor = () => new ReplayAgent(agentConfig.fault);
  else if (agentConfig.type === 'endpoint') {
    const agent = createEndpointAgent(agentConfig.model, { temperature: agentConfig.temperature, timeoutMs: agentConfig.timeoutMs });
    agentFor = () => agent;
  } else {
    const token = process.env[agentConfig.tokenEnv];
    if (!token) throw new ConfigError(`${loaded.path}: agent.tokenEnv: $${agentConfig.tokenEnv} is not set (the bridge needs the shared token)`);
    bridge = await startBridgeServer({ host: agentConfig.host, port: agentConfig.port, token, turnTimeoutMs: agentConfig.turnTimeoutMs });
    options.log?.(`bridge listening on ${bridge.url}; waiting up to ${agentConfig.waitSeconds} s for a head unit with capabilities.tools`);
    try {
      const connection = await bridge.waitForHeadUnit(agentConfig.waitSeconds * 1000);
      agentFor = () => bridgeToolAgent(connection, { timeoutMs: agentConfig.turnTimeoutMs });
    } catch (error) {
      await bridge.close();
      throw error;
    }
  }

  // recorded only once everything that can fail before the first trial came up
  let runId: string | null = null;
  if (store) {
    if (resumed) {
      runId = resumed.id;
      store.setRunStatus(runId, 'running');
    } else {
      runId = store.createItemRun({ name: config.name, kind: TOOL_AGENTS_KIND, config, plan: plan.map((item) => ({ key: trialKey(item.taskId, item.trial), item })) });
      store.addRunFact(runId, TOOL_AGENTS_FACTS.invalidTasks, invalidTasks);
    }
  }
  const fresh: TrialResult[] = [];
  try {
    await runPool(
      plan,
      async ({ task, trial }) => {
        const planningAndThinking = agentConfig.type === 'endpoint' ? agentConfig.planningAndThinking : true;
        const result = await runToolTaskTrial(task, agentFor(), { trial, user: userFor(), judge, planningAndThinking });
        if (store && runId) store.saveItemResult(runId, trialKey(task.task_id, trial), trialOutcomeWord(result), result);
        fresh.push(result);
        options.onTrial?.(result);
      },
      { concurrency: config.concurrency, beforeTake: () => !options.signal?.aborted },
    );
  } catch (error) {
    if (store && runId) store.setRunStatus(runId, 'interrupted');
    throw error;
  } finally {
    await bridge?.close();
  }
  const status = fresh.length < plan.length ? 'interrupted' : 'completed';
  if (store && runId) store.setRunStatus(runId, status);
  // the stored run is the record (every invocation's trials); in memory, this invocation's; both in plan order
  const results = store && runId ? loadToolAgentsRun(store, runId).results : orderByPlan(plan, fresh);
  return { runId, status, results, summary: summarizeTrials(results), invalidTasks };
}

function orderByPlan(plan: readonly ToolTrialItem[], results: readonly TrialResult[]): TrialResult[] {
  const byKey = new Map(results.map((r) => [trialKey(r.taskId, r.trial), r]));
  return plan.map((item) => byKey.get(trialKey(item.taskId, item.trial))).filter((r): r is TrialResult => r !== undefined);
}
