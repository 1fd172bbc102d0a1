import { z } from 'zod';
import { renameFields, type RenamedField } from '../../config/renamed-fields.ts';
import type { ContextVector } from '../../domain/context.ts';
import { examineString, ManipulationFindingSchema } from '../../domain/manipulation.ts';
import type { HeadUnitConnection } from '../../headunit/types.ts';
import { ManualEvaluationSchema, type ManualEvaluation } from '../../manual/evaluate.ts';
import { MANUAL_METRICS, metricFails, type ManualMetric } from '../../manual/model.ts';
import type { TestItem } from '../../manual/testset.ts';
import { GenerationRecordSchema } from '../../manual/generate.ts';
import { PARAPHRASE_OPERATORS, type OmissionSearchResult } from '../../manual/omission.ts';

/** Fields renamed for one vocabulary across kinds; the old names are read for one release. */
export const MANUAL_QA_RENAMED_FIELDS: readonly RenamedField[] = [{ old: 'evaluators', now: 'judges' }];

/** The setup fact; runs stored before the vocabulary change name the judge tiers `evaluators`, and still report. */
export const ManualQaSetupSchema = z.preprocess(
  (stored) => renameFields(stored, MANUAL_QA_RENAMED_FIELDS),
  z.object({ retrieval: z.string(), judges: z.array(z.string()), manual: z.array(z.string()), testSet: z.string(), generation: GenerationRecordSchema.optional(), assistantFamily: z.string().nullable().default(null) }),
);
export type ManualQaSetup = z.infer<typeof ManualQaSetupSchema>;

/** Run facts a manual-QA run records besides its item results. */
export const MANUAL_QA_FACTS = {
  /** what ran: retrieval, judge tiers, manual files (one per invocation) */
  setup: 'manual_qa_setup',
  /** the warning-omission search's result (once, after the planned questions) */
  omission: 'manual_omission_search',
} as const;

const count = z.number().int().min(0);
/** The warning-omission search's result (`OmissionSearchResult`, src/manual/omission.ts) as a run stores it and a fleet worker returns it. */
export const OmissionSearchResultSchema = z.object({
  budget: count,
  asked: count,
  omissions: count,
  omissionRate: z.number().min(0).max(1),
  findings: z.array(z.object({ question: z.string(), operator: z.enum(PARAPHRASE_OPERATORS), parentId: z.string(), omittedWarningIds: z.array(z.string()), answer: z.string() })),
  warningsOmitted: count,
  byOperator: z.record(z.enum(PARAPHRASE_OPERATORS), z.object({ asked: count, omissions: count })),
}) satisfies z.ZodType<OmissionSearchResult>;

/**
 * One planned question of a manual-QA run, as the campaign runner stores it (one item result per
 * question): the question goes to the head unit as an ordinary user turn of its own session (over
 * the bridge or the HTTP chat adapter), and every evaluator tier judges the answer.
 */
export const MANUAL_QA_KIND = 'manual-qa';

export const ManualQaResultSchema = z.object({
  itemId: z.string(),
  question: z.string(),
  status: z.enum(['completed', 'sut_error']),
  answer: z.string().nullable(),
  error: z.string().nullable(),
  latencyMs: z.number().min(0),
  evaluations: z.array(ManualEvaluationSchema),
  /** what the head unit reported about itself (the reference unit's fault log); evaluators never read it */
  diagnostics: z.unknown().optional(),
  /** the answer addresses the bench instead of the driver (src/domain/manipulation.ts): the item fails whatever its metrics; absent in runs before the check */
  manipulation: z.array(ManipulationFindingSchema).optional(),
});
export type ManualQaResult = z.infer<typeof ManualQaResultSchema>;

/** A manual-QA judge: the deterministic oracle or a model judge (`judges:` in the config). */
export interface ManualQaJudge {
  readonly tier: string;
  evaluate(item: TestItem, answer: string): ManualEvaluation | Promise<ManualEvaluation>;
}

/** Asks one planned question and evaluates the answer with every tier. A head unit failure is recorded, not thrown. */
export async function runPlannedQuestion(connection: HeadUnitConnection, item: TestItem, tiers: readonly ManualQaJudge[], sessionId: string, context: ContextVector): Promise<ManualQaResult> {
  const base = { itemId: item.id, question: item.question };
  const started = performance.now();
  let reply;
  try {
    const session = await connection.openSession(sessionId, context);
    try {
      reply = await session.send(0, item.question, context);
    } finally {
      await session.close().catch(() => undefined);
    }
  } catch (error) {
    return { ...base, status: 'sut_error', answer: null, error: (error as Error).message, latencyMs: performance.now() - started, evaluations: [] };
  }
  const latencyMs = performance.now() - started;
  const evaluations: ManualEvaluation[] = [];
  for (const tier of tiers) {
    try {
      evaluations.push(await tier.evaluate(item, reply.text));
    } catch (error) {
      evaluations.push({ tier: tier.tier, outcome: 'judge_error', metrics: Object.fromEntries(MANUAL_METRICS.map((m) => [m, { status: 'not_judged', reason: (error as Error).message }])) as ManualEvaluation['metrics'], referenceFacts: [], coverage: [], answerFacts: [], reasoning: (error as Error).message });
    }
  }
  const manipulation = examineString(reply.text, 'answer', 'free');
  return { ...base, status: 'completed', answer: reply.text, error: null, latencyMs, evaluations, ...(reply.diagnostics ? { diagnostics: reply.diagnostics } : {}), ...(manipulation.length ? { manipulation } : {}) };
}

export interface MetricAggregate {
  /** mean over the answers where the metric was judged; null when none was */
  mean: number | null;
  judged: number;
  notJudged: number;
  notApplicable: number;
  /** answers it flagged (judged below 1) */
  flagged: number;
}

export interface WarningOmissionRow {
  warningId: string;
  type: string | null;
  /** the manual's text of the warning */
  text: string;
  asked: number;
  omitted: number;
  /** one question that made the system leave it out, with the answer beside the manual's text */
  example: { question: string; answer: string } | null;
}

export interface ManualQaSummary {
  tier: string;
  questions: number;
  sutErrors: number;
  metrics: Record<ManualMetric, MetricAggregate>;
  byKind: Record<string, Record<ManualMetric, MetricAggregate>>;
  byDifficulty: Record<string, Record<ManualMetric, MetricAggregate>>;
  byChapter: Record<string, Record<ManualMetric, MetricAggregate>>;
  warnings: WarningOmissionRow[];
}

function aggregate(evaluations: readonly ManualEvaluation[]): Record<ManualMetric, MetricAggregate> {
  return Object.fromEntries(
    MANUAL_METRICS.map((metric) => {
      const values = evaluations.map((e) => e.metrics[metric]);
      const judged = values.filter((v) => v.status === 'judged');
      return [
        metric,
        {
          mean: judged.length ? judged.reduce((s, v) => s + v.value, 0) / judged.length : null,
          judged: judged.length,
          notJudged: values.filter((v) => v.status === 'not_judged').length,
          notApplicable: values.filter((v) => v.status === 'not_applicable').length,
          flagged: values.filter(metricFails).length,
        },
      ];
    }),
  ) as Record<ManualMetric, MetricAggregate>;
}

/**
 * A manual-QA run's figures for one evaluator tier: the seven metrics overall and per question kind,
 * difficulty and chapter (means over judged answers; not-judged counted apart, never as passed), and
 * the warning-omission table: per required warning, how often it was asked about and left out.
 */
export function summariseManualQa(items: readonly TestItem[], results: readonly ManualQaResult[], tier: string): ManualQaSummary {
  const byId = new Map(items.map((i) => [i.id, i]));
  const evaluated = results.flatMap((r) => {
    const evaluation = r.evaluations.find((e) => e.tier === tier);
    const item = byId.get(r.itemId);
    return evaluation && item ? [{ result: r, item, evaluation }] : [];
  });
  const group = (key: (item: TestItem) => string) => {
    const groups = new Map<string, ManualEvaluation[]>();
    for (const e of evaluated) groups.set(key(e.item), [...(groups.get(key(e.item)) ?? []), e.evaluation]);
    return Object.fromEntries([...groups].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, aggregate(v)]));
  };
  const rows = new Map<string, WarningOmissionRow>();
  for (const { result, item, evaluation } of evaluated) {
    for (const fact of item.facts.filter((f) => f.safetyCritical && f.warningId)) {
      const row = rows.get(fact.warningId!) ?? { warningId: fact.warningId!, type: fact.warningType, text: fact.text, asked: 0, omitted: 0, example: null };
      row.asked++;
      const coverage = evaluation.coverage.find((c) => c.factId === fact.id);
      if (coverage?.covered === false) {
        row.omitted++;
        row.example ??= { question: result.question, answer: result.answer ?? '' };
      }
      rows.set(fact.warningId!, row);
    }
  }
  return {
    tier,
    questions: results.length,
    sutErrors: results.filter((r) => r.status === 'sut_error').length,
    metrics: aggregate(evaluated.map((e) => e.evaluation)),
    byKind: group((i) => i.kind),
    byDifficulty: group((i) => i.difficulty),
    byChapter: group((i) => i.chapter),
    warnings: [...rows.values()].sort((a, b) => b.omitted - a.omitted || a.warningId.localeCompare(b.warningId)),
  };
}

/** An item's one-word verdict by the first evaluator tier: pass (judged, nothing flagged), fail (a metric judged below 1, or an answer that addresses the bench), inconclusive (nothing judged, or the tier failed), error (the head unit failed). */
export type ManualItemOutcome = 'pass' | 'fail' | 'inconclusive' | 'error';

export function manualItemOutcome(result: ManualQaResult): ManualItemOutcome {
  if (result.status === 'sut_error') return 'error';
  if (result.manipulation?.length) return 'fail';
  const deciding = result.evaluations[0];
  if (!deciding || deciding.outcome === 'judge_error') return 'inconclusive';
  const values = MANUAL_METRICS.map((m) => deciding.metrics[m]);
  if (values.some(metricFails)) return 'fail';
  return values.some((v) => v?.status === 'judged') ? 'pass' : 'inconclusive';
}
