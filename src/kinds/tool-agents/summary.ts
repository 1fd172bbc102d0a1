import { z } from 'zod';
import { toolByName } from '../../toolenv/catalog.ts';
import type { TrialResult } from './loop.ts';
import { reliability, ReliabilitySchema } from '../../analysis/reliability.ts';
import { attributeFailure, hallucinationFailure, HallucinationFailureSchema, TrialAttributionSchema } from './attribution.ts';

/** One group of tasks (a family, or one of CAR-bench's six task types). */
const GroupSummarySchema = z.object({
  tasks: z.number().int(),
  runnableTasks: z.number().int(),
  trials: z.number().int(),
  successes: z.number().int(),
  /** pass^k / pass@k over runnable tasks, trials in trial-index order */
  reliability: ReliabilitySchema,
});
const share = z.number().min(0).max(1);
const CountSchema = z.object({ trials: z.number().int(), successes: z.number().int() });

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
  /**
   * CAR-bench's leaderboard figure: "Avg Pass^3", the unweighted mean of the base, hallucination and
   * disambiguation Pass^3 in the first-k convention (the first three trials of a task all succeed); null unless all
   * three families have tasks with at least three trials
   */
  competition: z.object({ macroPassHat3: share.nullable(), byFamily: z.record(z.string(), share.nullable()) }),
  /**
   * Failures whose source is the user simulator, by CAR-bench's user-error attribution (src/kinds/tool-agents/attribution.ts):
   * every failed trial with a user error, with the agent errors beside it (`sole` when there are none). The pass rate
   * and each family's pass^k (unbiased, at the family's largest k) as scored and with the sole-source user-error trials
   * counted as passed, as the paper measures what the simulator's own errors cost.
   */
  misfires: z.object({
    trials: z.array(TrialAttributionSchema),
    failedTrials: z.number().int(),
    soleSource: z.number().int(),
    passRate: z.object({ included: share.nullable(), excluded: share.nullable() }),
    passHatK: z.record(z.string(), z.object({ k: z.number().int(), asScored: share, withoutSoleUserErrors: share })),
  }),
  /** failed hallucination trials split as the paper does: active fabrication vs implicit concealment (attribution.ts) */
  hallucinationFailures: z.object({ fabrication: z.number().int(), concealment: z.number().int(), trials: z.array(HallucinationFailureSchema) }),
  /**
   * R and its scope. Offline, the LLM-judged policies other than 004 have no judge: their trials are scored over
   * the components that were judged (`overJudged`, what R reports), and only the trials whose every applicable
   * component was judged give R complete.
   */
  reward: z.object({ overJudged: CountSchema, complete: CountSchema, statement: z.string() }),
});
export type TrialsSummary = z.infer<typeof TrialsSummarySchema>;

function prematureAction(result: TrialResult): boolean {
  for (const m of result.messages) {
    if (m.role === 'assistant' && !m.toolCalls.length) return false;
    if (m.role === 'assistant' && m.toolCalls.some((c) => toolByName(c.name)?.kind === 'set')) return true;
  }
  return false;
}

const COMPETITION_FAMILIES = ['base', 'hallucination', 'disambiguation'] as const;

function competition(families: TrialsSummary['families']): TrialsSummary['competition'] {
  const byFamily = Object.fromEntries(COMPETITION_FAMILIES.map((f) => [f, families[f]?.reliability.byK[2]?.passHatK.firstK ?? null]));
  const values = Object.values(byFamily);
  return { macroPassHat3: values.every((v) => v !== null) ? values.reduce((sum, v) => sum + v!, 0) / values.length : null, byFamily };
}

function misfireReport(results: readonly TrialResult[]): TrialsSummary['misfires'] {
  const scored = results.filter((r) => r.outcome !== 'not_runnable');
  const attributed = scored.map((r) => ({ result: r, attribution: attributeFailure(r) }));
  const withUserErrors = attributed.flatMap(({ attribution }) => (attribution && attribution.userErrors.length ? [attribution] : []));
  const sole = new Set(attributed.filter(({ attribution }) => attribution?.sole).map(({ result }) => result));
  const successes = scored.filter((r) => r.reward === 1).length;
  const rest = scored.length - sole.size;
  return {
    trials: withUserErrors,
    failedTrials: scored.length - successes,
    soleSource: sole.size,
    passRate: { included: scored.length ? successes / scored.length : null, excluded: rest ? successes / rest : null },
    passHatK: Object.fromEntries(
      [...new Set(scored.map((r) => r.family))].sort().flatMap((family) => {
        const inFamily = results.filter((r) => r.family === family);
        const asScored = groupSummaries(inFamily, (r) => r.family)[family].reliability.byK.at(-1);
        const corrected = groupSummaries(inFamily.map((r) => (sole.has(r) ? { ...r, reward: 1 as const } : r)), (r) => r.family)[family].reliability.byK.at(-1);
        return asScored && corrected ? [[family, { k: asScored.k, asScored: asScored.passHatK.unbiased, withoutSoleUserErrors: corrected.passHatK.unbiased }]] : [];
      }),
    ),
  };
}

function hallucinationSplit(results: readonly TrialResult[]): TrialsSummary['hallucinationFailures'] {
  const trials = results.flatMap((r) => hallucinationFailure(r) ?? []);
  return { fabrication: trials.filter((t) => t.kind === 'fabrication').length, concealment: trials.filter((t) => t.kind === 'concealment').length, trials };
}

function rewardScope(results: readonly TrialResult[]): TrialsSummary['reward'] {
  const scored = results.filter((r) => r.score !== null);
  const complete = scored.filter((r) => r.score!.scope === 'full');
  const count = (list: readonly TrialResult[]) => ({ trials: list.length, successes: list.filter((r) => r.reward === 1).length });
  const notJudged = scored.length - complete.length;
  const statement = notJudged
    ? `R over the judged components: ${count(scored).successes}/${scored.length}; ${notJudged} trial(s) had LLM-judged policies not judged (no judge model), so R complete covers the other ${complete.length}: ${count(complete).successes}/${complete.length}`
    : `R complete: ${count(scored).successes}/${scored.length} (every applicable component judged)`;
  return { overJudged: count(scored), complete: count(complete), statement };
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
    for (const c of ['state', 'subset', 'execution', 'end', 'policy', 'manipulation'] as const) if (!r.score[c].passed) failedComponents[c] = (failedComponents[c] ?? 0) + 1;
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
    competition: competition(families),
    misfires: misfireReport(results),
    hallucinationFailures: hallucinationSplit(results),
    reward: rewardScope(results),
  };
}
