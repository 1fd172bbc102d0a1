import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { computeRunSummary, type RunSummary } from '../analysis/profile.ts';
import { safetyPolicyOfStoredConfig } from '../domain/safety-policy.ts';
import { TIERS_FACT, TiersRecordSchema, type TiersRecord } from '../domain/tiers.ts';
import { parseOrThrow } from '../domain/validation.ts';
import type { ReportSection } from '../report/html.ts';
import { readRunSummary, writeRunReportFromStore } from '../report/write.ts';
import type { ResultStore } from '../store/store.ts';
import { vehicleTimelineSection } from '../report/vehicle-section.ts';
import { judgeDisagreementSection } from '../report/judge-section.ts';
import { voiceReport } from '../report/voice-section.ts';
import type { Artifact } from '../store/types.ts';
import { protocolReport } from '../analysis/protocol.ts';
import { protocolSection } from '../report/protocol-section.ts';
import { diversityCollector, diversityConfigOfStoredConfig } from '../analysis/diversity.ts';
import { diversitySection } from '../report/diversity-section.ts';
import { resolveEmbedder } from '../embedding/index.ts';

/** What other parts of the bench add to a run's outputs: summary sections (vehicle, voice, llm) and report sections. */
export interface RunOutputExtras {
  /** computed from the base summary (e.g. the llm section needs the run's turn count) */
  summary?: (base: RunSummary) => Pick<RunSummary, 'vehicle' | 'voice' | 'llm'>;
  sections?: readonly ReportSection[];
}

/**
 * Computes the run's summary from the store and writes summary.json, report.html, junit.xml and
 * conversations.csv; for a voice run also the `voice` section and the audio the report plays (audio/).
 */
export async function writeRunOutputs(store: ResultStore, runId: string, outDir: string, extras: RunOutputExtras = {}): Promise<RunSummary> {
  // one pass over the store for every section
  const protocolCollector = protocolReport(store.runFacts(runId));
  const collectors = { vehicle: vehicleTimelineSection(), disagreements: judgeDisagreementSection(), voice: voiceReport({ exportAudio: audioExporter(store, runId, outDir) }), protocol: protocolCollector };
  const record = store.getRun(runId);
  const diversityCollected = diversityCollector(record?.name ?? runId);
  for (const result of store.conversations(runId)) {
    for (const collector of Object.values(collectors)) collector.add(result);
    diversityCollected.add(result);
  }
  const diversity = await failureDiversity(diversityCollected, record?.config);
  const vehicle = collectors.vehicle.finish();
  const disagreements = collectors.disagreements.finish();
  const voice = collectors.voice.finish();
  const protocol = collectors.protocol.finish();
  const { summary } = writeRunReportFromStore(store, runId, outDir, {
    extraSections: [
      ...(extras.sections ?? []),
      ...(vehicle ? [vehicle] : []),
      ...(voice ? [voice.section] : []),
      ...(disagreements ? [disagreements] : []),
      ...(protocol ? [protocolSection(protocol)] : []),
      diversitySection(diversity),
    ],
    extend: (base) => {
      const tiers = runTiers(store, runId);
      return { ...base, ...(tiers.length ? { tiers } : {}), ...(voice ? { voice: { ...voice.summary } } : {}), ...(protocol ? { protocol } : {}), diversity, ...extras.summary?.(base) };
    },
    protocolOf: protocolCollector.rowFor,
  });
  return summary;
}

/**
 * The run's failure diversity with its stored `diversity:` settings: the configured ONNX sentence
 * model, or the labelled lexical TF-IDF fallback (a configured model that is missing is reported with the fix).
 */
async function failureDiversity(collected: ReturnType<typeof diversityCollector>, storedConfig: unknown) {
  const config = diversityConfigOfStoredConfig(storedConfig);
  const embedder = await resolveEmbedder(config.embeddingModel, config.embeddingModel ? (line) => console.error(line) : undefined);
  try {
    return await collected.finish(embedder, config);
  } finally {
    await embedder.close();
  }
}

/** What each invocation of the run ran with (the `tiers` section of summary.json), from the run facts. */
export function runTiers(store: ResultStore, runId: string): TiersRecord[] {
  return store.runFacts(runId, TIERS_FACT).map((fact, i) => parseOrThrow(TiersRecordSchema, fact.data, `${store.path}: run ${runId} fact ${TIERS_FACT} #${i + 1}`));
}

/** The gate in one phrase for the command line: "gate failOn [safety_violation] failed 24" or "no gate". */
export function gateText(failOn: readonly string[], failedByGate: number): string {
  return failOn.length ? `gate failOn [${failOn.join(', ')}] failed ${failedByGate}` : 'no gate, failOn []';
}

/** Copies a conversation's audio artifact out of the store next to the report. */
function audioExporter(store: ResultStore, runId: string, outDir: string): (key: string, name: string, path: string) => boolean {
  // the report asks for both sides of a turn, and for a conversation's turns together: keep the last conversation's artifacts
  let cached: { key: string; artifacts: Artifact[] } | null = null;
  return (key, name, path) => {
    if (cached?.key !== key) cached = { key, artifacts: store.artifacts(runId, key) };
    const bytes = cached.artifacts.find((a) => a.name === name)?.bytes;
    if (!bytes) return false;
    const file = join(outDir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
    return true;
  };
}

/**
 * Finds a run's summary by a directory / summary.json written earlier, or by run id in the
 * workspace store, so `compare` works on either.
 */
export function loadSummary(store: ResultStore | null, ref: string): RunSummary {
  if (existsSync(ref.endsWith('.json') ? ref : join(ref, 'summary.json'))) return readRunSummary(ref);
  const run = store?.getRun(ref);
  if (!run) throw new Error(`"${ref}" is neither a run directory with summary.json nor a run id in this workspace (icabench runs lists the runs)`);
  return computeRunSummary(
    store!.conversations(ref),
    { id: run.id, name: run.name, mode: run.mode, status: run.status, createdAt: run.createdAt, finishedAt: run.finishedAt },
    { safety: safetyPolicyOfStoredConfig(run.config) },
  );
}
