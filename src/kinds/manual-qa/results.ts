import { z } from 'zod';
import { llmUsage } from '../../run/run-facts.ts';
import type { LlmUsageSummary } from '../../llm/usage.ts';
import type { SummaryHeader } from '../../domain/summary-header.ts';
import { summaryHeader } from '../../report/summary-header.ts';
import { PAPERS } from '../../domain/method.ts';
import { parseOrThrow } from '../../domain/validation.ts';
import type { ResultStore } from '../../store/store.ts';
import type { RunRecord } from '../../store/types.ts';
import { alignmentReport, evaluatorBias, FactAnnotationSchema, familyBias, type AlignmentReport, type FactAnnotation, type FamilyBias } from '../../manual/alignment.ts';
import { modelFamily } from '../../llm/modelRef.ts';
import { MANUAL_QA_FACTS, MANUAL_QA_KIND, ManualQaResultSchema, ManualQaSetupSchema, type ManualQaSetup, OmissionSearchResultSchema, manualItemOutcome, summariseManualQa, type ManualItemOutcome, type ManualQaResult, type ManualQaSummary } from './item.ts';
import type { ManualEvaluation } from '../../manual/evaluate.ts';
import type { OmissionSearchResult } from '../../manual/omission.ts';
import { TestItemSchema, type TestItem } from '../../manual/testset.ts';

/** One question of a stored manual-QA run: the planned item and, once asked, its result and outcome. */
export interface ManualQaRow {
  item: TestItem;
  result: ManualQaResult | null;
  outcome: ManualItemOutcome | null;
}

export interface ManualQaRun {
  run: RunRecord;
  /** what every kind's summary.json starts with: kind, run, preset, tiers and invocations (run facts) */
  header: SummaryHeader;
  rows: ManualQaRow[];
  setup: ManualQaSetup | null;
  omission: OmissionSearchResult | null;
  annotations: FactAnnotation[];
  /** the model calls of the judge tiers (run facts, as dialogue runs keep them) */
  llm: LlmUsageSummary | null;
}

/** A manual-QA run as stored, validated: an item or result that does not parse fails naming the run and the item. */
export function loadManualQaRun(store: ResultStore, runId: string): ManualQaRun {
  const run = store.getRun(runId);
  if (!run) throw new Error(`${store.path}: no run with id "${runId}"`);
  if (run.kind !== MANUAL_QA_KIND) throw new Error(`run ${runId} is a ${run.kind} run, not a ${MANUAL_QA_KIND} run`);
  const where = (key: string) => `${store.path}: run ${runId} item "${key}"`;
  const rows = store.itemResults(runId).map((row) => {
    const result = row.result === null ? null : parseOrThrow(ManualQaResultSchema, row.result, `${where(row.key)} result`);
    return { item: parseOrThrow(TestItemSchema, row.item, where(row.key)), result, outcome: result ? manualItemOutcome(result) : null };
  });
  const setups = store.runFacts(runId, MANUAL_QA_FACTS.setup);
  const omission = store.runFacts(runId, MANUAL_QA_FACTS.omission).at(-1);
  const annotations = store.itemAnnotations(runId).map((a, i) => parseOrThrow(FactAnnotationSchema, { ...(a.data as object), itemId: a.key, rater: a.rater }, `${store.path}: run ${runId} annotation ${i + 1}`));
  return {
    run,
    rows,
    setup: latestSetup(setups.map((fact) => parseOrThrow(ManualQaSetupSchema, fact.data, `${store.path}: run ${runId} fact ${MANUAL_QA_FACTS.setup}`))),
    header: summaryHeader(store, run, PAPERS.gear),
    llm: llmUsage(store, runId, rows.filter((r) => r.result !== null).length),
    omission: omission ? parseOrThrow(OmissionSearchResultSchema, omission.data, `${store.path}: run ${runId} fact ${MANUAL_QA_FACTS.omission}`) : null,
    annotations,
  };
}

/** The latest invocation's setup, with the test-set generation of the run's first (a resumed run does not generate again). */
function latestSetup(setups: readonly ManualQaSetup[]): ManualQaSetup | null {
  const latest = setups.at(-1);
  if (!latest) return null;
  const generation = setups.find((s) => s.generation)?.generation;
  return generation ? { ...latest, generation } : latest;
}

/** The latest annotation of each rater per item (a rater may revise), in the order first made. */
export function latestAnnotations(annotations: readonly FactAnnotation[]): FactAnnotation[] {
  const latest = new Map<string, FactAnnotation>();
  for (const a of annotations) latest.set(`${a.itemId}\u0000${a.rater}`, a);
  return [...latest.values()];
}

/** summary.json of a manual-QA run. See docs/manual-qa.md, "Campaigns". */
export interface ManualQaRunSummary extends SummaryHeader {
  planned: number;
  /** questions asked and stored */
  questions: number;
  /** by the first judge tier (docs/manual-qa.md) */
  outcomes: Record<ManualItemOutcome, number>;
  setup: ManualQaSetup | null;
  /** per judge tier: the seven metrics overall, per question kind, difficulty and chapter; the warning-omission table */
  judgeMetrics: ManualQaSummary[];
  omissionSearch: OmissionSearchResult | null;
  /** lab, with two judge tiers or more: per metric, Kruskal–Wallis over all the tiers' per-question values */
  evaluatorBias?: ReturnType<typeof evaluatorBias>;
  /** GEAR's bias test (paper, or lab with assistantFamily set): the assistant's family as evaluator against each other family */
  familyBias?: FamilyBias;
  /** the first tier against the raters' annotations (absent without annotations) */
  alignment?: { tier: string; annotations: number; raters: number; report: AlignmentReport };
  /** the LLM judge tiers' calls, tokens, latency, cost (absent when only the deterministic tier ran) */
  llm?: LlmUsageSummary;
}

export function computeManualQaSummary(data: ManualQaRun): ManualQaRunSummary {
  const { run, rows } = data;
  const asked = rows.filter((r): r is ManualQaRow & { result: ManualQaResult } => r.result !== null);
  const items = rows.map((r) => r.item);
  const results = asked.map((r) => r.result);
  const tierNames = data.setup?.judges ?? [...new Set(results.flatMap((r) => r.evaluations.map((e) => e.tier)))];
  const outcomes: Record<ManualItemOutcome, number> = { pass: 0, fail: 0, inconclusive: 0, error: 0 };
  for (const r of asked) outcomes[r.outcome!]++;
  const annotations = latestAnnotations(data.annotations);
  const first = tierNames[0];
  let alignment: ManualQaRunSummary['alignment'];
  if (annotations.length && first) {
    const evaluations = new Map<string, ManualEvaluation>();
    for (const r of results) {
      const e = r.evaluations.find((x) => x.tier === first);
      if (e) evaluations.set(r.itemId, e);
    }
    alignment = { tier: first, annotations: annotations.length, raters: new Set(annotations.map((a) => a.rater)).size, report: alignmentReport(evaluations, annotations) };
  }
  const evaluationsOf = (tier: string) => results.flatMap((r) => r.evaluations.filter((e) => e.tier === tier));
  const paper = data.header.preset.method === 'paper';
  const assistantFamily = data.setup?.assistantFamily ?? null;
  const bias = !paper && tierNames.length >= 2 ? evaluatorBias(tierNames.map((tier) => ({ tier, evaluations: evaluationsOf(tier) }))) : undefined;
  const families = paper || assistantFamily !== null ? familyBias(assistantFamily, tierNames.map((tier) => ({ tier, family: modelFamily(tier), evaluations: evaluationsOf(tier) }))) : undefined;
  return {
    ...data.header,
    ...(bias ? { evaluatorBias: bias } : {}),
    ...(families ? { familyBias: families } : {}),
    planned: rows.length,
    questions: asked.length,
    outcomes,
    setup: data.setup,
    judgeMetrics: tierNames.map((tier) => summariseManualQa(items, results, tier)),
    omissionSearch: data.omission,
    ...(alignment ? { alignment } : {}),
    ...(data.llm ? { llm: data.llm } : {}),
  };
}

/** What a rater submits for one item in the bench app: the marks of FactAnnotationSchema without the item id (the URL names it). */
export const FactAnnotationFormSchema = FactAnnotationSchema.omit({ itemId: true });
export type FactAnnotationForm = z.infer<typeof FactAnnotationFormSchema>;
