import { runSummaryTally, type RunSummary } from '../analysis/profile.ts';
import { combinedVerdict, type CombinedVerdict } from '../analysis/verdict.ts';
import { protocolReport } from '../analysis/protocol.ts';
import { llmUsage, vehicleSection } from '../run/run-facts.ts';
import type { ConversationResult } from '../domain/conversation.ts';
import { safetyPolicyOfStoredConfig } from '../domain/safety-policy.ts';
import type { ResultStore } from '../store/store.ts';
import { voiceReport } from './voice-section.ts';
import { summaryHeader } from './summary-header.ts';
import { PAPERS } from '../domain/method.ts';
import { diversityCollector, diversityConfigOfStoredConfig } from '../analysis/diversity.ts';
import { resolveEmbedder } from '../embedding/index.ts';
import { methodEmbeddingModel } from '../llm/manifest.ts';

export interface SummarizeOptions {
  /**
   * Yield to the event loop after every slice of this many conversations (the bench app: pages and the live feed
   * stay responsive). Default: one synchronous pass (the CLI). Either way the run is streamed from the store, never
   * held in memory.
   */
  yieldEvery?: number;
  /**
   * sees every conversation as the summary reads it, with its combined verdict (computed once per conversation for
   * the summary and every observer): the report files are written from the same pass over the store
   */
  observe?: (result: ConversationResult, combined: CombinedVerdict) => void;
}

/**
 * THE summary of a run (summary.json), from the store alone: its conversations and its run facts
 * (tiers, model calls, vehicle frames, bridge events, invocations). `icabench run`, `icabench report
 * RUN` and the bench app all call this, so the same run gives the same summary wherever it is read;
 * how the conversations are read (options) does not change a byte of it.
 */
export async function summarizeRun(store: ResultStore, runId: string, options: SummarizeOptions = {}): Promise<RunSummary> {
  const record = store.getRun(runId);
  if (!record) throw new Error(`${store.path}: no run with id "${runId}"`);
  const voice = voiceReport();
  const protocol = protocolReport(store.runFacts(runId));
  const diversity = diversityCollector(record.name);
  const tally = runSummaryTally();
  const add = (result: ConversationResult) => {
    const combined = combinedVerdict(result);
    tally.add(result, combined);
    voice.add(result, combined);
    protocol.add(result);
    diversity.add(result, combined);
    options.observe?.(result, combined);
  };
  if (options.yieldEvery) await readYielding(store, runId, options.yieldEvery, add);
  else for (const result of store.conversations(runId)) add(result);
  // a run of conversations follows Negi et al. (dialogue, suites and live sessions alike)
  const header = summaryHeader(store, record, PAPERS.negi);
  const base = tally.finish(header.run, { safety: safetyPolicyOfStoredConfig(record.config) });
  const voiceSummary = voice.finish()?.summary;
  const protocolSection = protocol.finish();
  const vehicle = vehicleSection(store, runId);
  const llm = llmUsage(store, runId, base.turns);
  const { failing: diversitySummary, findings: findingsDiversitySummary } = await failureDiversity(diversity, record.config);
  return {
    ...base,
    ...header,
    ...(voiceSummary ? { voice: { ...voiceSummary } } : {}),
    ...(protocolSection ? { protocol: protocolSection } : {}),
    ...(vehicle ? { vehicle: { ...vehicle } } : {}),
    ...(llm ? { llm: { ...llm } } : {}),
    diversity: diversitySummary,
    findingsDiversity: findingsDiversitySummary,
  };
}

/**
 * The run's failure diversity (src/analysis/diversity.ts) with its stored `diversity:` settings: the
 * configured ONNX sentence model, or the labelled lexical TF-IDF fallback (a configured model that is
 * missing is reported with the fix on standard error).
 */
async function failureDiversity(collected: ReturnType<typeof diversityCollector>, storedConfig: unknown) {
  const config = diversityConfigOfStoredConfig(storedConfig);
  const embedder = await resolveEmbedder(config.embeddingModel, config.embeddingModel ? (line) => console.error(line) : undefined, methodEmbeddingModel());
  try {
    // one embedder for both populations (the failing conversations and those with findings)
    return await collected.finish(embedder, config);
  } finally {
    await embedder.close();
  }
}

/**
 * Hands every conversation to `add` as it is read, yielding to the event loop after every `slice` of them (the store
 * reads in batches with no statement left open, so the run may go on writing meanwhile); nothing is kept.
 */
async function readYielding(store: ResultStore, runId: string, slice: number, add: (result: ConversationResult) => void): Promise<void> {
  let read = 0;
  for (const result of store.conversations(runId)) {
    add(result);
    if (++read % slice === 0) await new Promise((resolveTick) => setImmediate(resolveTick));
  }
}
