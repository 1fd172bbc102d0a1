import { ConfigError } from '../../config/yaml.ts';
import type { TiersRecord } from '../../domain/tiers.ts';
import type { BridgeHeadUnitConnection } from '../../bridge/connection.ts';
import { ItemAborted, type KindRig, type OpenOptions } from '../../run/kind.ts';
import { buildModelTiers } from '../../run/model-tiers.ts';
import type { RecordedFact, RunFactSink } from '../../run/run-facts.ts';
import type { ConnectedHeadUnit } from '../../run/connect.ts';
import { connectConfiguredHeadUnit } from '../../run/headunit.ts';
import { HeadUnitConfigSchema } from '../../run/headunit-config.ts';
import { bridgeToolAgent, type BridgeToolAgent } from './bridge-agent.ts';
import { createEndpointAgent } from './endpoint.ts';
import { chainJudges, confirmationRuleJudge, llmPolicyJudge, type PolicyJudge } from './judge.ts';
import { runToolTaskTrial, type ToolAgent, type TrialResult } from './loop.ts';
import { ReplayAgent } from './replay.ts';
import { DETERMINISTIC_SIMULATOR, RULE_JUDGE, type LoadedToolAgents } from './config.ts';
import { parseTasksLenient, readTaskFileText, type InvalidTask, type Task } from '../../toolenv/tasks.ts';
import { TOOL_AGENTS_FACTS, type ToolTrialItem, type TrialRerun } from './results.ts';
import { DeterministicTaskUser, LlmTaskUser, type TaskSimulator } from './usersim.ts';

/**
 * The tasks of a campaign: every valid task of every file (filtered by taskIds); bad files/tasks are listed, not
 * fatal. Nothing to run is fatal: no valid task in the files, or a taskIds entry that names no task.
 */
export function loadCampaignTasks(loaded: LoadedToolAgents): { tasks: Task[]; invalid: InvalidTask[] } {
  const tasks: Task[] = [];
  const invalid: InvalidTask[] = [];
  const from = new Map<string, string>();
  for (const file of loaded.taskFiles) {
    let text: string;
    try {
      text = readTaskFileText(file);
    } catch (error) {
      invalid.push({ where: file, taskId: '(file)', position: -1, reason: (error as Error).message });
      continue;
    }
    const parsed = parseTasksLenient(text, file);
    for (const task of parsed.tasks) {
      // trials are stored and resumed by task id: the same id in two files would make them one task
      const other = from.get(task.task_id);
      if (other !== undefined) throw new ConfigError(`${file}: task ${task.task_id}: task_id: duplicate id (${other} has it too); each task_id must be unique across the task files`);
      from.set(task.task_id, file);
      tasks.push(task);
    }
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

/** The tool-agents kind's plan: every task × repeats (trial 0 of every task, then trial 1, …), and the tasks that could not be loaded. */
export function planToolTrials(loaded: LoadedToolAgents): { plan: ToolTrialItem[]; invalidTasks: InvalidTask[] } {
  const { tasks, invalid } = loadCampaignTasks(loaded);
  return { plan: Array.from({ length: loaded.config.repeats }, (_, trial) => tasks.map((task) => ({ taskId: task.task_id, trial, task }))).flat(), invalidTasks: invalid };
}

/** One finished task trial as the store takes it. */
export interface FinishedTrial {
  result: TrialResult;
  /** the trial's model calls (llm.calls), stored in its transaction */
  facts: RecordedFact[];
}

/** How often one trial is run again because the head unit's link went away during it; after that it is stored as it ended. */
export const MAX_LINK_LOSSES_PER_TRIAL = 3;

/**
 * Opens what the trials of a tool-agents run need: the task user and the policy judges (the deterministic ones or
 * models, built like every model tier: the config's `llm:` settings, each model checked first — an unavailable one
 * stops here with the fix — and every call recorded with its usage), and the agent (replay, an endpoint model whose
 * calls are recorded the same way, or a head unit dialling in to the bridge, watched like a dialogue run's unit).
 */
export async function openToolAgentsRig(loaded: LoadedToolAgents, options: OpenOptions = {}): Promise<KindRig<ToolTrialItem, FinishedTrial>> {
  const { config } = loaded;
  const log = options.log ?? (() => undefined);
  const settings = config.llm;
  const simulatorRef = options.overrides?.simulator ?? config.simulator;
  const judgeRefs = options.overrides?.judges ?? config.judges;
  const agentConfig = config.agent;
  const endpoint = agentConfig.type === 'endpoint' ? agentConfig : null;
  // the endpoint agent, the task user and the policy judges on the run floor's one tier builder (src/run/model-tiers.ts)
  const built = await buildModelTiers(
    {
      agent: {
        role: 'agent',
        refs: endpoint ? [endpoint.model] : [],
        deterministic: {},
        model: (ref, models): ToolAgent => createEndpointAgent(ref, { temperature: endpoint!.temperature, timeoutMs: endpoint!.timeoutMs, thinking: endpoint!.thinking, allowedHosts: settings.allowedHosts, ollamaHost: settings.ollamaHost, tracker: models.tracker }),
      },
      simulator: {
        role: 'simulator',
        refs: [simulatorRef],
        // a trial has its own user: each tier is a factory
        deterministic: { [DETERMINISTIC_SIMULATOR]: { kind: 'template', build: () => (): TaskSimulator => new DeterministicTaskUser() } },
        model: (ref, models) => (): TaskSimulator => new LlmTaskUser(models.provider(ref), { tracker: models.tracker, maxRetries: settings.maxRetries }),
      },
      judges: {
        role: 'judge',
        refs: judgeRefs,
        deterministic: { [RULE_JUDGE]: { kind: 'oracle', build: (): PolicyJudge => confirmationRuleJudge } },
        model: (ref, models): PolicyJudge => llmPolicyJudge(models.provider(ref), { tracker: models.tracker, maxRetries: settings.maxRetries }),
      },
    },
    settings,
    log,
  );
  const { tracker } = built;
  const judge = chainJudges(...built.judges.tiers);
  const userFor = built.simulator.tiers[0];
  // a run without policy judges records no tiers (tiers.resolved names at least one judge)
  const tiers: TiersRecord | null = judgeRefs.length ? { simulator: built.simulator.uses[0], judges: built.judges.uses, fallbacks: built.fallbacks } : null;
  const hosts = built.modelHosts;

  let headUnit: ConnectedHeadUnit | null = null;
  let agentFor: () => ToolAgent | BridgeToolAgent;
  if (agentConfig.type === 'replay') agentFor = () => new ReplayAgent(agentConfig.fault);
  else if (agentConfig.type === 'endpoint') {
    const agent = built.agent.tiers[0];
    agentFor = () => agent;
  } else {
    // the bridge a dialogue run's head unit dials in to, with its reconnect grace (src/run/headunit.ts)
    headUnit = await connectConfiguredHeadUnit(HeadUnitConfigSchema.parse({ ...agentConfig }), log);
    const connection = headUnit.connection as BridgeHeadUnitConnection;
    agentFor = () => bridgeToolAgent(connection, { timeoutMs: agentConfig.turnTimeoutMs });
  }
  // CAR-bench offers think and planning_tool to its agents; an endpoint agent may be run without them
  const planningAndThinking = agentConfig.type === 'endpoint' ? agentConfig.planningAndThinking : true;
  let store: RunFactSink | null = null;
  return {
    concurrency: config.concurrency,
    meta: { agent: endpoint?.model ?? agentConfig.type, simulator: simulatorRef, judges: [...judgeRefs] },
    envelope: { config, modelHosts: hosts, prices: settings.prices, tiers, tracker, headUnit },
    record(runStore) {
      store = runStore;
    },
    async run(runId, { key, item }, signal, _emit, ready) {
      for (let attempt = 1; ; attempt++) {
        if (signal.aborted) throw new ItemAborted(key);
        const agent = agentFor();
        const result = await runToolTaskTrial(item.task, agent, { trial: item.trial, user: userFor(), judge, planningAndThinking });
        const lost = 'linkLost' in agent ? agent.linkLost() : null;
        // the unit's link went away mid-trial: the result says nothing about the agent; run the trial again once the unit is back
        if (lost === null || attempt >= MAX_LINK_LOSSES_PER_TRIAL) return { result, facts: [] };
        store?.addRunFact(runId, TOOL_AGENTS_FACTS.trialRerun, { key, attempt, cause: lost } satisfies TrialRerun);
        log(`${key}: the head unit's link was lost during the trial (${lost}); it runs again once the unit is back`);
        // the trial is not stored; one whose unit does not come back runs again on resume
        const aborted = new Promise<string>((resolve) => (signal.aborted ? resolve('aborted') : signal.addEventListener('abort', () => resolve('aborted'), { once: true })));
        if ((await Promise.race([ready(), aborted])) !== null) throw new ItemAborted(key);
      }
    },
    close: async () => {
      await headUnit?.close();
    },
  };
}
