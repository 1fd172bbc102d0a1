import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary } from '../analysis/profile.ts';
import { summarizeRun } from '../report/summary.ts';
import { readRunSummary } from '../report/write.ts';
import type { ResultStore } from '../store/store.ts';

/**
 * Finds a run's summary by a directory / summary.json written earlier, or by run id in the
 * workspace store, so `compare` works on either.
 */
export async function loadSummary(store: ResultStore | null, ref: string): Promise<RunSummary> {
  if (existsSync(ref.endsWith('.json') ? ref : join(ref, 'summary.json'))) return readRunSummary(ref);
  const run = store?.getRun(ref);
  if (!run) throw new Error(`"${ref}" is neither a run directory with summary.json nor a run id in this workspace (icabench runs lists the runs)`);
  if (run.kind !== 'dialogue') throw new Error(`run ${ref} is a ${run.kind} run; compare works on dialogue runs (its summary.json and report hold the ${run.kind} figures)`);
  return summarizeRun(store!, ref);
}
