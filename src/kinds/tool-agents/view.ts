import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../domain/api-error.ts';
import { comparisonWarnings } from '../../domain/comparable.ts';
import { PAPERS } from '../../domain/method.ts';
import { writeAtomically } from '../../report/write.ts';
import type { KindRunView, KindView } from '../../run/kind-view.ts';
import type { ResultStore } from '../../store/store.ts';
import type { RunRecord } from '../../store/types.ts';
import { compareToolRuns, toolComparisonLines, type ToolRunComparison } from './compare.ts';
import { toolAgentsFirstScreen } from './first-screen.ts';
import { computeToolAgentsSummary, loadToolAgentsRun, loadToolTrial, trialKey, trialOutcomeWord } from './results.ts';

/**
 * The bench app's view of tool-agents runs (read only), under /api/runs/<id>/tool-agents: the summary (the same code as
 * summary.json, ./outputs.ts), one row per task with R per trial, and one trial in full (trajectory, score with the
 * state diff, failed components and policies). Two runs compare task by task (pass^k per family, the tasks that moved).
 */
export const toolAgentsView: KindView = {
  paper: PAPERS.carbench,
  page: 'tool-agents',
  links: [{ label: 'tasks & trials', path: 'tool-agents' }],
  compared: true,
  open: async ({ store }) => toolRunView(store),
};

/** Two tool-agents runs as the compare page is served them (GET /api/compare), as `icabench compare` prints them. */
export interface ToolRunsCompared {
  a: { id: string; name: string };
  b: { id: string; name: string };
  toolComparison: ToolRunComparison;
  /** why the figures may not be read as like for like (method, judges differ) */
  warnings: string[];
}

export function toolRunView(store: ResultStore): KindRunView {
  const api = new ToolRunApi(store);
  return {
    routes: [
      { method: 'GET', path: /^tool-agents$/, handle: async ({ run }) => ({ json: api.overview(run) }) },
      { method: 'GET', path: /^tool-agents\/trials\/(?<key>[^/]+)$/, handle: async ({ run, params }) => ({ json: api.trial(run, params.key) }) },
    ],
    async compare(a, b) {
      const [ra, rb] = [a, b].map((run) => loadToolAgentsRun(store, run.id).results);
      const toolComparison = compareToolRuns(ra, rb);
      const served: ToolRunsCompared = { a: { id: a.id, name: a.name }, b: { id: b.id, name: b.name }, toolComparison, warnings: comparisonWarnings(a.config, b.config) };
      return {
        served,
        json: toolComparison,
        lines: () => toolComparisonLines({ ...served.a, agent: ra[0]?.agent ?? null }, { ...served.b, agent: rb[0]?.agent ?? null }, toolComparison),
        write(dir) {
          mkdirSync(dir, { recursive: true });
          const file = join(dir, 'comparison.json');
          writeAtomically(file, `${JSON.stringify({ a: served.a, b: served.b, ...toolComparison }, null, 2)}\n`);
          return [file];
        },
      };
    },
  };
}

/** The tool-agents routes' answers, from the store. */
export class ToolRunApi {
  constructor(private readonly store: ResultStore) {}

  /** The summary, the tasks in plan order (each with its trials' key, outcome and R), and report.html's first screen. */
  overview(run: RunRecord): unknown {
    const { summary, results } = computeToolAgentsSummary(this.store, run.id);
    const tasks = new Map<string, { taskId: string; taskType: string; family: string; trials: { key: string; trial: number; outcome: string; reward: 0 | 1 | null; reason: string }[] }>();
    for (const r of results) {
      const task = tasks.get(r.taskId) ?? { taskId: r.taskId, taskType: r.taskType, family: r.family, trials: [] };
      task.trials.push({ key: trialKey(r.taskId, r.trial), trial: r.trial, outcome: trialOutcomeWord(r), reward: r.reward, reason: r.reason });
      tasks.set(r.taskId, task);
    }
    for (const task of tasks.values()) task.trials.sort((a, b) => a.trial - b.trial);
    return { summary, tasks: [...tasks.values()], firstScreen: toolAgentsFirstScreen(this.store, run, summary, results) };
  }

  /** One stored trial (key `<task id>#<trial>`) in full. */
  trial(run: RunRecord, key: string): unknown {
    const trial = loadToolTrial(this.store, run.id, key);
    if (!trial) throw new ApiError(404, 'item_not_found', `run ${run.id} has no task trial "${key}" (keys are <task id>#<trial>)`);
    if (trial.result === null) throw new ApiError(409, 'not_run', `task trial "${key}" of run ${run.id} has not run yet`);
    return { key, outcome: trial.outcome, result: trial.result };
  }
}
