import { z } from 'zod';
import { parseOrThrow } from '../../domain/validation.ts';
import { SummaryHeaderSchema } from '../../domain/summary-header.ts';
import { summaryHeader } from '../../report/summary-header.ts';
import { PAPERS } from '../../domain/method.ts';
import { LlmUsageSummarySchema } from '../../llm/usage.ts';
import { llmUsage } from '../../run/run-facts.ts';
import type { ResultStore } from '../../store/store.ts';
import { TrialResultSchema, type TrialResult } from './loop.ts';
import { summarizeTrials, TrialsSummarySchema } from './summary.ts';
import { InvalidTaskSchema, TaskSchema, type InvalidTask } from '../../toolenv/tasks.ts';

/**
 * A tool-agents run in the store (docs/tool-agents.md, "Campaign"): one item result per task trial, key
 * `<task id>#<trial>`, and the tasks that could not be loaded as a run fact. What summary.json, the report, compare
 * and the bench app read — one place, like src/kinds/manual-qa/results.ts for manual-QA runs.
 */
/** The campaign kind of src/kinds/registry.ts that this module runs. */
export const TOOL_AGENTS_KIND = 'tool-agents';

/** Run facts a stored tool-agents run records besides its item results. */
export const TOOL_AGENTS_FACTS = {
  /** the tasks (or task files) that could not be loaded when the run was planned, with the reason */
  invalidTasks: 'tool_agents_invalid_tasks',
  /** a trial run again because the bridge head unit's link went away during it (its first result said nothing about the agent) */
  trialRerun: 'tool_agents_trial_rerun',
} as const;
const InvalidTasksFactSchema = z.array(InvalidTaskSchema);

/** One trial run again after its link was lost: which, the how-manieth attempt was lost, and the cause. */
export const TrialRerunSchema = z.strictObject({ key: z.string(), attempt: z.number().int().positive(), cause: z.string() });
export type TrialRerun = z.infer<typeof TrialRerunSchema>;

/** The trials of a run that were run again because the unit's link was lost, in the order it happened. */
export function trialReruns(store: ResultStore, runId: string): TrialRerun[] {
  return store.runFacts(runId, TOOL_AGENTS_FACTS.trialRerun).map((fact, i) => parseOrThrow(TrialRerunSchema, fact.data, `${store.path}: run ${runId} fact ${TOOL_AGENTS_FACTS.trialRerun} #${i + 1}`));
}

/** One planned task trial, as stored in item_results (key `<task id>#<trial>`): the task itself, so a resume does not reread the files. */
export const ToolTrialItemSchema = z.object({ taskId: z.string(), trial: z.number().int().nonnegative(), task: TaskSchema });
export type ToolTrialItem = z.infer<typeof ToolTrialItemSchema>;
export const trialKey = (taskId: string, trial: number): string => `${taskId}#${trial}`;

/** A trial's one-word outcome in the store: pass / fail for a scored trial, otherwise the loop's outcome (not_runnable, agent_error, …). */
export function trialOutcomeWord(result: TrialResult): string {
  if (result.outcome === 'scored') return result.reward === 1 ? 'pass' : 'fail';
  return result.outcome;
}

/** A stored tool-agents run: its trials (validated, plan order: trial 0 of every task, then trial 1, …) and the tasks that could not be loaded. */
export function loadToolAgentsRun(store: ResultStore, runId: string): { planned: number; results: TrialResult[]; invalidTasks: InvalidTask[] } {
  const run = store.getRun(runId);
  if (!run) throw new Error(`no run ${runId} in ${store.path} (icabench runs lists them)`);
  if (run.kind !== TOOL_AGENTS_KIND) throw new Error(`run ${runId} is a ${run.kind} run, not a ${TOOL_AGENTS_KIND} run`);
  const rows = store.itemResults(runId);
  const results = rows.filter((row) => row.result !== null).map((row) => parseOrThrow(TrialResultSchema, row.result, `${store.path}: run ${runId} trial "${row.key}"`));
  const invalidTasks = store.runFacts(runId, TOOL_AGENTS_FACTS.invalidTasks).flatMap((fact, i) => parseOrThrow(InvalidTasksFactSchema, fact.data, `${store.path}: run ${runId} fact ${TOOL_AGENTS_FACTS.invalidTasks} #${i + 1}`));
  return { planned: rows.length, results, invalidTasks };
}

/**
 * summary.json of a tool-agents run: the run, the agent, planned and stored trials, the trials summary
 * (pass^k / pass@k per task family in both conventions, per-policy violations, premature-action rate, runnable
 * and not-runnable counts) and the tasks that could not be loaded.
 */
export const ToolAgentsRunSummarySchema = SummaryHeaderSchema.extend({
  kind: z.literal(TOOL_AGENTS_KIND),
  /** the agent that ran (replay, replay with a fault profile, endpoint model, bridge) */
  agent: z.string().nullable(),
  /** task trials planned and stored */
  planned: z.number().int().min(0),
  trials: z.number().int().min(0),
  /** tasks (or task files) that could not be loaded: recorded, the campaign went on without them */
  invalidTasks: z.array(InvalidTaskSchema),
  ...TrialsSummarySchema.shape,
  /** the model tiers' calls (endpoint agent, LLM task user, LLM policy judges): tokens, latency, errors, cost, per agent message; absent when no model ran */
  llm: LlmUsageSummarySchema.optional(),
});
export type ToolAgentsRunSummary = z.infer<typeof ToolAgentsRunSummarySchema>;

export function computeToolAgentsSummary(store: ResultStore, runId: string): { summary: ToolAgentsRunSummary; results: TrialResult[] } {
  const run = store.getRun(runId)!;
  const { planned, results, invalidTasks } = loadToolAgentsRun(store, runId);
  const usage = llmUsage(store, runId, results.reduce((sum, r) => sum + r.agentMessages, 0));
  const summary = ToolAgentsRunSummarySchema.parse({
    ...summaryHeader(store, run, PAPERS.carbench),
    agent: results[0]?.agent ?? null,
    planned,
    trials: results.length,
    invalidTasks,
    ...summarizeTrials(results),
    ...(usage ? { llm: usage } : {}),
  });
  return { summary, results };
}

/** One stored task trial, validated; null when it is planned but not run yet; undefined when the run has no such key. */
export function loadToolTrial(store: ResultStore, runId: string, key: string): { outcome: string | null; result: TrialResult | null } | undefined {
  const row = store.itemResults(runId).find((r) => r.key === key);
  if (!row) return undefined;
  return { outcome: row.outcome, result: row.result === null ? null : parseOrThrow(TrialResultSchema, row.result, `${store.path}: run ${runId} trial "${key}"`) };
}
