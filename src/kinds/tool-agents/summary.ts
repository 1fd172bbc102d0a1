import { z } from 'zod';
import { toolByName } from '../../toolenv/catalog.ts';
import type { TrialResult } from './loop.ts';
import { reliability, ReliabilitySchema } from '../../analysis/reliability.ts';

/** One group of tasks (a family, or one of CAR-bench's six task types). */
const GroupSummarySchema = z.object({
  tasks: z.number().int(),
  runnableTasks: z.number().int(),
  trials: z.number().int(),
  successes: z.number().int(),
  /** pass^k / pass@k over runnable tasks, trials in trial-index order */
  reliability: ReliabilitySchema,
});
export const TrialsSummarySchema = z.object({
  /** per task family: base, hallucination, disambiguation (CAR-bench's headline split) */
  families: z.record(z.string(), GroupSummarySchema),
  /** per task type: base, hallucination_missing_tool / _parameter / _response, disambiguation_internal / _user */
  taskTypes: z.record(z.string(), GroupSummarySchema),
  /** tasks by type that could not run here, with the reason */
  notRunnable: z.array(z.object({ taskId: z.string(), reason: z.string() })),
  outcomes: z.record(z.string(), z.number().int()),
  /** violations per policy rule (code-checked and judged), counted once per trial */
  policyViolations: z.record(z.string(), z.number().int()),
  /** LLM-judged rules that applied but had no judge, per rule */
  policyNotJudged: z.record(z.string(), z.number().int()),
  /** disambiguation_user trials where a state-changing tool ran before the agent's first message to the user */
  prematureActionRate: z.number().min(0).max(1).nullable(),
  failedComponents: z.record(z.string(), z.number().int()),
});
export type TrialsSummary = z.infer<typeof TrialsSummarySchema>;

function prematureAction(result: TrialResult): boolean {
  for (const m of result.messages) {
    if (m.role === 'assistant' && !m.toolCalls.length) return false;
    if (m.role === 'assistant' && m.toolCalls.some((c) => toolByName(c.name)?.kind === 'set')) return true;
  }
  return false;
}

/** Trials grouped by `groupOf`, each group with its task counts and pass^k / pass@k over its runnable tasks. */
function groupSummaries(results: readonly TrialResult[], groupOf: (r: TrialResult) => string): TrialsSummary['families'] {
  const groups: TrialsSummary['families'] = {};
  const byGroup = new Map<string, TrialResult[]>();
  for (const r of results) byGroup.set(groupOf(r), [...(byGroup.get(groupOf(r)) ?? []), r]);
  for (const [group, list] of byGroup) {
    const byTask = new Map<string, TrialResult[]>();
    for (const r of list) byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r]);
    const runnable = [...byTask.values()].filter((trials) => trials.every((t) => t.outcome !== 'not_runnable'));
    groups[group] = {
      tasks: byTask.size,
      runnableTasks: runnable.length,
      trials: list.length,
      successes: list.filter((r) => r.reward === 1).length,
      reliability: reliability(runnable.map((trials) => [...trials].sort((a, b) => a.trial - b.trial).map((t) => t.reward === 1))),
    };
  }
  return groups;
}

export function summarizeTrials(results: readonly TrialResult[]): TrialsSummary {
  const families = groupSummaries(results, (r) => r.family);
  const taskTypes = groupSummaries(results, (r) => r.taskType);
  const notRunnable = new Map<string, string>();
  const outcomes: Record<string, number> = {};
  const policyViolations: Record<string, number> = {};
  const policyNotJudged: Record<string, number> = {};
  const failedComponents: Record<string, number> = {};
  for (const r of results) {
    outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    if (r.outcome === 'not_runnable') notRunnable.set(r.taskId, r.reason);
    if (!r.score) continue;
    const violated = new Set([...r.score.policy.code.map((c) => c.rule), ...r.score.policy.judged.filter((j) => j.status === 'violated').map((j) => j.rule)]);
    for (const rule of violated) policyViolations[rule] = (policyViolations[rule] ?? 0) + 1;
    for (const j of r.score.policy.judged) if (j.status === 'not_judged') policyNotJudged[j.rule] = (policyNotJudged[j.rule] ?? 0) + 1;
    for (const c of ['state', 'subset', 'execution', 'end', 'policy'] as const) if (!r.score[c].passed) failedComponents[c] = (failedComponents[c] ?? 0) + 1;
  }
  const disUser = results.filter((r) => r.taskType === 'disambiguation_user' && r.outcome !== 'not_runnable');
  return {
    families,
    taskTypes,
    notRunnable: [...notRunnable].map(([taskId, reason]) => ({ taskId, reason })),
    outcomes,
    policyViolations,
    policyNotJudged,
    prematureActionRate: disUser.length ? disUser.filter(prematureAction).length / disUser.length : null,
    failedComponents,
  };
}
