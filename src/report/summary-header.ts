import { methodOfStoredConfig, presetOf } from '../domain/method.ts';
import type { RunInfo, SummaryHeader } from '../domain/summary-header.ts';
import { TIERS_FACT, TiersRecordSchema, type TiersRecord } from '../domain/tiers.ts';
import { parseOrThrow } from '../domain/validation.ts';
import { invocations } from '../run/run-facts.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';

export function runInfo(record: RunRecord): RunInfo {
  return { id: record.id, name: record.name, mode: record.mode, status: record.status, createdAt: record.createdAt, finishedAt: record.finishedAt };
}

/** What each invocation of the run ran with (the `tiers` section of summary.json), from the run facts. */
export function runTiers(store: ResultStore, runId: string): TiersRecord[] {
  return store.runFacts(runId, TIERS_FACT).map((fact, i) => parseOrThrow(TiersRecordSchema, fact.data, `${store.path}: run ${runId} fact ${TIERS_FACT} #${i + 1}`));
}

/** The header of every kind's summary.json (src/domain/summary-header.ts), from the store and the method `paper` its kind follows (its view's). */
export function summaryHeader(store: ResultStore, record: RunRecord, paper: string): SummaryHeader {
  return {
    schemaVersion: 1,
    kind: record.kind,
    run: runInfo(record),
    preset: presetOf(paper, methodOfStoredConfig(record.config)),
    tiers: runTiers(store, record.id),
    invocations: invocations(store, record.id),
  };
}
