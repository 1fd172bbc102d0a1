import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary } from '../analysis/profile.ts';
import { summarizeRun } from '../report/summary.ts';
import { readRunSummary } from '../report/write.ts';
import { ResultStore } from '../store/store.ts';
import { workspaceStorePath } from '../store/workspace.ts';
import { holdsConversations } from '../domain/run-items.ts';

/** The results store of a workspace, for commands that read runs; null (or an error, when it must exist) when there is none. */
export function openStore(workspace: string, mustExist = true): ResultStore | null {
  const path = workspaceStorePath(workspace);
  if (!existsSync(path)) {
    if (mustExist) throw new Error(`no results store at ${path} (run a campaign first, or pass --workspace)`);
    return null;
  }
  return ResultStore.open(path);
}

/**
 * Finds a run's summary by a directory / summary.json written earlier, or by run id in the
 * workspace store, so `compare` works on either.
 */
export async function loadSummary(store: ResultStore | null, ref: string): Promise<RunSummary> {
  if (existsSync(ref.endsWith('.json') ? ref : join(ref, 'summary.json'))) return readRunSummary(ref);
  const run = store?.getRun(ref);
  if (!run) throw new Error(`"${ref}" is neither a run directory with summary.json nor a run id in this workspace (icabench runs lists the runs)`);
  if (!holdsConversations(run)) throw new Error(`run ${ref} is a ${run.kind} run; compare works on runs of conversations (dialogue, suite, live; its summary.json and report hold the ${run.kind} figures)`);
  return summarizeRun(store!, ref);
}
