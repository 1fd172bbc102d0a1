import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { computeRunSummary, type RunSummary } from '../analysis/profile.ts';
import type { ReportSection } from '../report/html.ts';
import { readRunSummary, writeRunReportFromStore } from '../report/write.ts';
import type { ResultStore } from '../store/store.ts';
import { vehicleTimelineSection } from '../report/vehicle-section.ts';
import { tierDisagreementSection } from '../report/tier-section.ts';

/** What other parts of the bench add to a run's outputs: summary sections (vehicle, voice, llm) and report sections. */
export interface RunOutputExtras {
  /** computed from the base summary (e.g. the llm section needs the run's turn count) */
  summary?: (base: RunSummary) => Pick<RunSummary, 'vehicle' | 'voice' | 'llm'>;
  sections?: readonly ReportSection[];
}

/** Computes the run's summary from the store and writes summary.json, report.html, junit.xml and conversations.csv. */
export async function writeRunOutputs(store: ResultStore, runId: string, outDir: string, extras: RunOutputExtras = {}): Promise<RunSummary> {
  const vehicle = vehicleTimelineSection(store.conversations(runId));
  const disagreements = tierDisagreementSection(store.conversations(runId));
  const { summary } = writeRunReportFromStore(store, runId, outDir, {
    extraSections: [...(extras.sections ?? []), ...(vehicle ? [vehicle] : []), ...(disagreements ? [disagreements] : [])],
    extend: (base) => ({ ...base, ...extras.summary?.(base) }),
  });
  return summary;
}

/**
 * Finds a run's summary by a directory / summary.json written earlier, or by run id in the
 * workspace store, so `compare` works on either.
 */
export function loadSummary(store: ResultStore | null, ref: string): RunSummary {
  if (existsSync(ref.endsWith('.json') ? ref : join(ref, 'summary.json'))) return readRunSummary(ref);
  const run = store?.getRun(ref);
  if (!run) throw new Error(`"${ref}" is neither a run directory with summary.json nor a run id in this workspace (icabench runs lists the runs)`);
  return computeRunSummary(store!.conversations(ref), { id: run.id, name: run.name, mode: run.mode, status: run.status, createdAt: run.createdAt, finishedAt: run.finishedAt });
}
