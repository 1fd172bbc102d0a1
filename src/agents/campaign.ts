import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../campaign/config.ts';
import { loadYaml } from '../config/yaml.ts';
import { startBridgeServer, type BridgeServer } from '../bridge/server.ts';
import { createProvider } from '../llm/index.ts';
import { bridgeToolAgent } from './bridge-agent.ts';
import { createEndpointAgent } from './endpoint.ts';
import { chainJudges, confirmationRuleJudge, llmPolicyJudge, type PolicyJudge } from './judge.ts';
import { runToolTaskTrial, type ToolAgent, type TrialResult } from './loop.ts';
import { FaultProfileSchema, ReplayAgent } from './replay.ts';
import { summarizeTrials, type TrialsSummary } from './summary.ts';
import { parseTasksLenient, type InvalidTask, type Task } from './tasks.ts';
import { DeterministicTaskUser, LlmTaskUser, type TaskUserSimulator } from './usersim.ts';

/**
 * A tool-agent campaign (`kind: tool-agents`): CAR-bench-format task files (paths relative to the config, so one
 * config can point at any split), an agent, `repeats` trials per task, a user simulator and judges.
 * Defaults run offline: the replay agent, the deterministic user, the rule-based judge for policy 004.
 */
export const ToolAgentsConfigSchema = z
  .object({
    kind: z.literal('tool-agents'),
    name: z.string().min(1),
    description: z.string().default(''),
    tasks: z.array(z.string().min(1)).min(1),
    /** run only these task ids (default: all) */
    taskIds: z.array(z.string().min(1)).min(1).optional(),
    repeats: z.number().int().min(1).max(100).default(3),
    agent: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('replay'), fault: FaultProfileSchema.default({ kind: 'none' }) }).strict(),
        /** an OpenAI-compatible or Ollama endpoint with tool calling: `openai-compat:<url>#<model>` or `ollama:<model>` */
        z.object({ type: z.literal('endpoint'), model: z.string().min(1), temperature: z.number().min(0).max(2).default(0), timeoutMs: z.number().int().positive().default(120_000) }).strict(),
        /** a head unit speaking icabench-tools/1 that dials in to the bench's bridge */
        z
          .object({
            type: z.literal('bridge'),
            host: z.string().default('127.0.0.1'),
            port: z.number().int().min(0).max(65535).default(7311),
            tokenEnv: z.string().default('ICABENCH_BRIDGE_TOKEN'),
            waitSeconds: z.number().positive().default(60),
            turnTimeoutMs: z.number().int().positive().default(15_000),
          })
          .strict(),
      ])
      .default({ type: 'replay', fault: { kind: 'none' } }),
    /** "deterministic" or a model reference for CAR-bench's LLM user simulator */
    user: z.string().min(1).default('deterministic'),
    /** judges of the LLM-judged policies, tried in order: "rule" (deterministic, rule 004 only) and/or model references */
    judges: z.array(z.string().min(1)).default(['rule']),
    /** trials run at once (each trial has its own environment, agent state and user) */
    concurrency: z.number().int().min(1).max(64).default(1),
  })
  .strict();
export type ToolAgentsConfig = z.infer<typeof ToolAgentsConfigSchema>;

export interface LoadedToolAgents {
  config: ToolAgentsConfig;
  path: string;
  taskFiles: string[];
}

export function loadToolAgentsConfig(path: string): LoadedToolAgents {
  const absolute = resolve(path);
  const config = loadYaml(ToolAgentsConfigSchema, absolute, 'tool-agents config');
  return { config, path: absolute, taskFiles: config.tasks.map((t) => resolve(dirname(absolute), t)) };
}

/** The tasks of a campaign: every valid task of every file (filtered by taskIds); bad files/tasks are listed, not fatal. */
export function loadCampaignTasks(loaded: LoadedToolAgents): { tasks: Task[]; invalid: InvalidTask[] } {
  const tasks: Task[] = [];
  const invalid: InvalidTask[] = [];
  for (const file of loaded.taskFiles) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      invalid.push({ where: file, taskId: '(file)', position: -1, reason: `cannot read task file: ${(error as Error).message}` });
      continue;
    }
    const parsed = parseTasksLenient(text, file);
    tasks.push(...parsed.tasks);
    invalid.push(...parsed.invalid);
  }
  const wanted = loaded.config.taskIds ? new Set(loaded.config.taskIds) : undefined;
  return { tasks: wanted ? tasks.filter((t) => wanted.has(t.task_id)) : tasks, invalid };
}

export interface ToolAgentsRun {
  results: TrialResult[];
  summary: TrialsSummary;
  invalidTasks: InvalidTask[];
}

/** Runs a tool-agent campaign: every task × repeats, trial by trial; `onTrial` sees each result as it is recorded. */
export async function runToolAgentsCampaign(loaded: LoadedToolAgents, options: { onTrial?: (result: TrialResult) => void; log?: (line: string) => void } = {}): Promise<ToolAgentsRun> {
  const { config } = loaded;
  const { tasks, invalid } = loadCampaignTasks(loaded);
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
    const connection = await bridge.waitForHeadUnit(agentConfig.waitSeconds * 1000);
    agentFor = () => bridgeToolAgent(connection, { timeoutMs: agentConfig.turnTimeoutMs });
  }
  const plan = Array.from({ length: config.repeats }, (_, trial) => tasks.map((task) => ({ task, trial }))).flat();
  const results: TrialResult[] = new Array(plan.length);
  let next = 0;
  const worker = async () => {
    while (next < plan.length) {
      const i = next++;
      const { task, trial } = plan[i];
      results[i] = await runToolTaskTrial(task, agentFor(), { trial, user: userFor(), judge });
      options.onTrial?.(results[i]);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(config.concurrency, plan.length) }, worker));
  } finally {
    await bridge?.close();
  }
  return { results, summary: summarizeTrials(results), invalidTasks: invalid };
}
