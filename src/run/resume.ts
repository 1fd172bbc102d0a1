import type { z } from 'zod';
import { withCurrentNames } from '../config/renamed-fields.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord, RunStatus } from '../store/types.ts';

/** How a run invocation can end (every status but running). */
export type RunEndStatus = Exclude<RunStatus, 'running'>;

/**
 * How a resumable run (every campaign kind) begins and ends: the run `--resume` names, and the status it is
 * left in.
 */

/** Fields a resume may change: how fast and how long the rest runs, not what it runs. */
const RESUME_MAY_CHANGE = new Set(['budgetMinutes', 'concurrency', 'description']);

/** The top-level fields of two configs whose values differ (as stored: JSON). */
function differingFields(stored: unknown, given: unknown): string[] {
  const a = (JSON.parse(JSON.stringify(stored ?? {})) ?? {}) as Record<string, unknown>;
  const b = (JSON.parse(JSON.stringify(given ?? {})) ?? {}) as Record<string, unknown>;
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((field) => !RESUME_MAY_CHANGE.has(field) && JSON.stringify(a[field]) !== JSON.stringify(b[field])).sort();
}

/**
 * The run `--resume` names (null without one). It must be in this workspace and, when `kind` is given, of that
 * kind; when `config` is given, the run must have been started with that config (its budget, concurrency and
 * description may change): resuming a run with another config would store items of one config in a run of another.
 * With the kind's `schema`, a run stored before a field was renamed compares in today's names.
 */
export function resumedRun(store: ResultStore, resumeRunId: string | undefined, kind?: string, config?: unknown, schema?: z.ZodType): RunRecord | null {
  if (!resumeRunId) return null;
  const run = store.getRun(resumeRunId);
  if (!run) throw new Error(`--resume: no run ${resumeRunId} in this workspace (icabench runs lists them)`);
  if (kind !== undefined && run.kind !== kind) throw new Error(`--resume: run ${run.id} is a ${run.kind} run, not a ${kind} run; resume it with the ${run.kind} config it was started with`);
  if (config !== undefined) {
    const fields = differingFields(schema ? withCurrentNames(schema, run.config) : run.config, config);
    if (fields.length) throw new Error(`--resume: run ${run.id} ("${run.name}") was started with another config (${fields.join(', ')} differ${fields.length === 1 ? 's' : ''}); resume it with the config it was started with, or start a new run`);
  }
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
