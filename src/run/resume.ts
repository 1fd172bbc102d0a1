import type { ResultStore } from '../store/store.ts';
import type { RunRecord, RunStatus } from '../store/types.ts';

/** How a run invocation can end (every status but running). */
export type RunEndStatus = Exclude<RunStatus, 'running'>;

/**
 * How a resumable run (dialogue campaign, manual-QA) begins and ends: the run `--resume` names, and the
 * status it is left in.
 */

/** The run `--resume` names (null without one): it must be in this workspace and, when `kind` is given, of that kind. */
export function resumedRun(store: ResultStore, resumeRunId: string | undefined, kind?: string): RunRecord | null {
  if (!resumeRunId) return null;
  const run = store.getRun(resumeRunId);
  if (!run) throw new Error(`--resume: no run ${resumeRunId} in this workspace (icabench runs lists them)`);
  if (kind !== undefined && run.kind !== kind) throw new Error(`--resume: run ${run.id} is a ${run.kind} run, not a ${kind} run`);
  return run;
}

/**
 * The status a run ends in: interrupted when aborted (Ctrl+C); unit_unreachable when conversations ran but none
 * reached the head unit (src/run/unit-reach.ts); interrupted when it stopped by itself (resumable);
 * budget_exhausted when the time budget ran out before every planned item was done; completed otherwise.
 */
export function runEndStatus(end: { aborted: boolean; stopReason: string | null; budgetHit: boolean; done: number; planned: number; neverReachedUnit?: boolean }): RunEndStatus {
  if (end.aborted) return 'interrupted';
  if (end.neverReachedUnit) return 'unit_unreachable';
  if (end.stopReason) return 'interrupted';
  return end.budgetHit && end.done < end.planned ? 'budget_exhausted' : 'completed';
}
