import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { computeRunSummary, RunSummarySchema, type RunSummary } from '../analysis/profile.ts';
import { parseOrThrow } from '../domain/validation.ts';
import { writeRunReport } from '../report/run-report.ts';
import type { ResultStore } from '../store/store.ts';

/** Extra summary sections other parts of the bench contribute for a run (vehicle, voice, llm). */
export type SummaryExtensions = Pick<RunSummary, 'vehicle' | 'voice' | 'llm'>;

/** Computes the run's summary from the store and writes summary.json, report.html, junit.xml and conversations.csv. */
export async function writeRunOutputs(store: ResultStore, runId: string, outDir: string, extensions: SummaryExtensions = {}): Promise<RunSummary> {
  const run = store.getRun(runId);
  if (!run) throw new Error(`no run ${runId} in ${store.path}`);
  const info = { id: run.id, name: run.name, mode: run.mode, status: run.status, createdAt: run.createdAt, finishedAt: run.finishedAt };
  const summary: RunSummary = { ...computeRunSummary(store.conversations(runId), info), ...extensions };
  await writeRunReport(outDir, { run: info, summary, conversations: () => store.conversations(runId) });
  return summary;
}

/**
 * Finds a run's summary by run id (in the workspace store) or by a directory / summary.json path
 * written earlier, so `compare` works on either.
 */
export function loadSummary(store: ResultStore | null, ref: string): RunSummary {
  const file = ref.endsWith('.json') ? ref : join(ref, 'summary.json');
  if (existsSync(file)) return parseOrThrow(RunSummarySchema, JSON.parse(readFileSync(file, 'utf8')), file);
  const run = store?.getRun(ref);
  if (!run) throw new Error(`"${ref}" is neither a run id in this workspace nor a directory with summary.json (icabench runs lists the runs)`);
  return computeRunSummary(store!.conversations(ref), { id: run.id, name: run.name, mode: run.mode, status: run.status, createdAt: run.createdAt, finishedAt: run.finishedAt });
}
