import { computeToolAgentsSummary, loadToolTrial, TOOL_AGENTS_KIND, trialKey, trialOutcomeWord } from '../kinds/tool-agents/results.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';
import { ApiError } from './http-util.ts';

/**
 * The bench app's view of tool-agents runs (read only): the summary (the same code as summary.json,
 * src/kinds/tool-agents/outputs.ts), one row per task with R per trial, and one trial in full
 * (trajectory, score with the state diff, failed components and policies).
 */
export class ToolRunApi {
  constructor(private readonly store: ResultStore) {}

  private requireToolRun(run: RunRecord): void {
    if (run.kind !== TOOL_AGENTS_KIND) throw new ApiError(400, 'not_tool_agents_run', `run ${run.id} is a ${run.kind} run, not a ${TOOL_AGENTS_KIND} run`);
  }

  /** The summary and the tasks in plan order, each with its trials' key, outcome and R. */
  overview(run: RunRecord): unknown {
    this.requireToolRun(run);
    const { summary, results } = computeToolAgentsSummary(this.store, run.id);
    const tasks = new Map<string, { taskId: string; taskType: string; family: string; trials: { key: string; trial: number; outcome: string; reward: 0 | 1 | null; reason: string }[] }>();
    for (const r of results) {
      const task = tasks.get(r.taskId) ?? { taskId: r.taskId, taskType: r.taskType, family: r.family, trials: [] };
      task.trials.push({ key: trialKey(r.taskId, r.trial), trial: r.trial, outcome: trialOutcomeWord(r), reward: r.reward, reason: r.reason });
      tasks.set(r.taskId, task);
    }
    for (const task of tasks.values()) task.trials.sort((a, b) => a.trial - b.trial);
    return { summary, tasks: [...tasks.values()] };
  }

  /** One stored trial (key `<task id>#<trial>`) in full. */
  trial(run: RunRecord, key: string): unknown {
    this.requireToolRun(run);
    const trial = loadToolTrial(this.store, run.id, key);
    if (!trial) throw new ApiError(404, 'item_not_found', `run ${run.id} has no task trial "${key}" (keys are <task id>#<trial>)`);
    if (trial.result === null) throw new ApiError(409, 'not_run', `task trial "${key}" of run ${run.id} has not run yet`);
    return { key, outcome: trial.outcome, result: trial.result };
  }
}
