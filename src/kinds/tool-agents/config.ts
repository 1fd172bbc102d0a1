import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { loadYaml } from '../../config/yaml.ts';
import { acceptingRenamedFields, type RenamedField } from '../../config/renamed-fields.ts';
import { LlmSettingsSchema } from '../../llm/settings.ts';
import { BRIDGE_LISTEN_FIELDS } from '../../run/headunit-config.ts';
import { MethodSchema } from '../../domain/method.ts';
import { timerMsSchema } from '../../domain/durations.ts';
import { ThinkingModeSchema } from './thinking.ts';

/**
 * The config of a tool-agents campaign and the replay agent's fault profiles: schemas only, light to import (the
 * campaign-kind dispatch and the bench app's config list read them; the run path is src/kinds/tool-agents/campaign.ts).
 */

/** Code-checked policies the `violates_policy` fault profile can break. */
export const FAULT_POLICY_RULES = ['009', '010', '013', '014', '023', '024'] as const;
export const FaultProfileSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }).strict(),
  /** calls a REQUIRES_CONFIRMATION tool without asking first (caught by policy 004) */
  z.object({ kind: z.literal('acts_before_confirming') }).strict(),
  /** on hallucination tasks, uses the removed tool/parameter and reports success (caught by Δ_end) */
  z.object({ kind: z.literal('fabricates_removed') }).strict(),
  /** on disambiguation tasks, neither asks nor checks preferences and picks another value (caught by the disambiguation/state component) */
  z.object({ kind: z.literal('guesses_disambiguation') }).strict(),
  /** violates one named code-checked policy (caught by Δ_policy) */
  z.object({ kind: z.literal('violates_policy'), rule: z.enum(FAULT_POLICY_RULES) }).strict(),
  /** leaves out the last state-changing action (caught by Δ_state) */
  z.object({ kind: z.literal('half_done') }).strict(),
]);
export type FaultProfile = z.infer<typeof FaultProfileSchema>;

/** Fields renamed for one vocabulary across kinds; the old names are read for one release. */
export const TOOL_AGENTS_RENAMED_FIELDS: readonly RenamedField[] = [{ old: 'user', now: 'simulator' }];

/**
 * A tool-agent campaign (`kind: tool-agents`): CAR-bench-format task files (paths relative to the config, so one
 * config can point at any split), an agent, `repeats` trials per task, a user simulator and judges.
 * Defaults run offline: the replay agent, the deterministic user, the rule-based judge for policy 004.
 */
export const ToolAgentsConfigSchema = acceptingRenamedFields(
  z
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
          z
            .object({
              type: z.literal('endpoint'),
              model: z.string().min(1),
              temperature: z.number().min(0).max(2).default(0),
              timeoutMs: timerMsSchema().default(120_000),
              /** offer the `think` and `planning_tool` helpers (CAR-bench's --planning-and-thinking-tool, on by default); false measures the agent without them */
              planningAndThinking: z.boolean().default(true),
              /** the model's own reasoning mode (CAR-bench compares thinking and non-thinking models): off, on, or an effort; absent leaves the server's default (endpoint.ts) */
              thinking: ThinkingModeSchema.optional(),
            })
            .strict(),
          /** a head unit speaking icabench-tools/1 that dials in to the bench's bridge */
          z
            .object({
              type: z.literal('bridge'),
              ...BRIDGE_LISTEN_FIELDS,
            })
            .strict(),
        ])
        .default({ type: 'replay', fault: { kind: 'none' } }),
      /** the task user: "deterministic" or a model reference for CAR-bench's LLM user simulator; `user` before (docs/configuration.md) */
      simulator: z.string().min(1).default('deterministic'),
      /** judges of the LLM-judged policies, tried in order: "rule" (deterministic, rule 004 only) and/or model references */
      judges: z.array(z.string().min(1)).default(['rule']),
      /** trials run at once (each trial has its own environment, agent state and user) */
      concurrency: z.number().int().min(1).max(64).default(1),
      /** a time budget: no new trial starts after it (the run is budget_exhausted and resumable) */
      budgetMinutes: z.number().positive().optional(),
      /** how model tiers (the LLM user, LLM policy judges, an endpoint agent's host) are reached: the same settings as every kind's */
      llm: LlmSettingsSchema.prefault({}),
      /** lab (default) or CAR-bench as published (docs/reproduction.md): at least 3 trials (the leaderboard's Pass^3), think and planning_tool offered */
      method: MethodSchema.default('lab'),
    })
    .strict()
    .superRefine((config, ctx) => {
      if (config.method !== 'paper') return;
      if (config.repeats < 3) ctx.addIssue({ code: 'custom', path: ['repeats'], message: "method: paper reports the leaderboard's Pass^3: repeats must be at least 3" });
      if (config.agent.type === 'endpoint' && !config.agent.planningAndThinking)
        ctx.addIssue({ code: 'custom', path: ['agent', 'planningAndThinking'], message: 'method: paper offers think and planning_tool, as CAR-bench runs by default' });
    }),
  TOOL_AGENTS_RENAMED_FIELDS,
);
export type ToolAgentsConfig = z.infer<typeof ToolAgentsConfigSchema>;

/** The deterministic task user and policy judge: not model references. */
export const DETERMINISTIC_SIMULATOR = 'deterministic';
export const RULE_JUDGE = 'rule';

/** The model references a tool-agents config names: the LLM task user, LLM policy judges, an endpoint agent. */
export function toolAgentsModelRefs(config: Pick<ToolAgentsConfig, 'simulator' | 'judges' | 'agent'>): string[] {
  return [...(config.simulator !== DETERMINISTIC_SIMULATOR ? [config.simulator] : []), ...config.judges.filter((ref) => ref !== RULE_JUDGE), ...(config.agent.type === 'endpoint' ? [config.agent.model] : [])];
}

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
