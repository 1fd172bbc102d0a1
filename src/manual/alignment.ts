import { z } from 'zod';
import { icc31, mean, pearson, precisionRecallF1, type ClassificationScores } from '../domain/stats.ts';
import type { ManualEvaluation } from './evaluate.ts';
import type { ManualMetric } from './model.ts';

/**
 * Human alignment of the evaluator (GEAR validated its metrics against raters: Pearson per metric,
 * ICC among annotators, P/R/F1 of SplitTag's tags). A rater marks, on the facts an evaluation shows,
 * which reference facts the answer covers and which answer facts are relevant and correct, and labels
 * the reference facts essential / safety-critical.
 */
export const FactAnnotationSchema = z
  .object({
    itemId: z.string().min(1),
    rater: z.string().min(1),
    referenceFacts: z.array(z.object({ factId: z.string(), covered: z.boolean(), essential: z.boolean(), safetyCritical: z.boolean() }).strict()),
    answerFacts: z.array(z.object({ factId: z.string(), relevant: z.boolean(), correct: z.boolean() }).strict()),
  })
  .strict();
export type FactAnnotation = z.infer<typeof FactAnnotationSchema>;

/** The metrics a rater's marks imply (the same formulas as the evaluator's); null where there is nothing to measure. */
export function humanMetrics(annotation: FactAnnotation): Partial<Record<ManualMetric, number | null>> {
  const share = (n: number, d: number) => (d === 0 ? null : n / d);
  const refs = annotation.referenceFacts;
  const relevant = annotation.answerFacts.filter((f) => f.relevant);
  return {
    completeness_hard: share(refs.filter((f) => f.covered).length, refs.length),
    completeness_soft: share(refs.filter((f) => f.essential && f.covered).length, refs.filter((f) => f.essential).length),
    risk_awareness: share(refs.filter((f) => f.safetyCritical && f.covered).length, refs.filter((f) => f.safetyCritical).length),
    relevance: share(relevant.length, annotation.answerFacts.length),
    correctness: share(relevant.filter((f) => f.correct).length, relevant.length),
  };
}

const RATED_METRICS = ['completeness_hard', 'completeness_soft', 'risk_awareness', 'relevance', 'correctness'] as const;

export interface AlignmentReport {
  /** per metric: Pearson r of the tier's value and the raters' mean, over items where both exist (null below 3 pairs or constant) */
  pearson: Record<(typeof RATED_METRICS)[number], { r: number | null; n: number }>;
  /** per metric: ICC(3,1) among the raters, over items every one of them annotated (null with fewer than 2 raters or 2 items) */
  icc: Record<(typeof RATED_METRICS)[number], { icc: number | null; n: number; raters: number }>;
  /** SplitTag's tags against the raters' majority label, over the reference facts they labelled */
  tags: { essential: ClassificationScores | null; safetyCritical: ClassificationScores | null };
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/** Compares one evaluator tier's evaluations (by item id) with the raters' annotations. */
export function alignmentReport(evaluations: ReadonlyMap<string, ManualEvaluation>, annotations: readonly FactAnnotation[]): AlignmentReport {
  const byItem = new Map<string, FactAnnotation[]>();
  for (const a of annotations) byItem.set(a.itemId, [...(byItem.get(a.itemId) ?? []), FactAnnotationSchema.parse(a)]);
  const raters = [...new Set(annotations.map((a) => a.rater))].sort();

  const pearsonOut = {} as AlignmentReport['pearson'];
  const iccOut = {} as AlignmentReport['icc'];
  for (const metric of RATED_METRICS) {
    const tier: number[] = [];
    const human: number[] = [];
    const rows: number[][] = [];
    for (const [itemId, marks] of byItem) {
      const values = marks.map((m) => humanMetrics(m)[metric]).filter((v): v is number => v !== null && v !== undefined);
      const judged = evaluations.get(itemId)?.metrics[metric];
      if (values.length && judged?.status === 'judged') {
        tier.push(judged.value);
        human.push(mean(values));
      }
      const perRater = raters.map((r) => marks.find((m) => m.rater === r)).map((m) => (m ? humanMetrics(m)[metric] : null));
      if (raters.length >= 2 && perRater.every((v) => typeof v === 'number')) rows.push(perRater as number[]);
    }
    pearsonOut[metric] = { r: tier.length >= 3 ? finiteOrNull(pearson(tier, human)) : null, n: tier.length };
    iccOut[metric] = { icc: rows.length >= 2 ? finiteOrNull(icc31(rows)) : null, n: rows.length, raters: raters.length };
  }

  const predicted: Record<'essential' | 'safetyCritical', boolean[]> = { essential: [], safetyCritical: [] };
  const actual: Record<'essential' | 'safetyCritical', boolean[]> = { essential: [], safetyCritical: [] };
  for (const [itemId, marks] of byItem) {
    const evaluation = evaluations.get(itemId);
    if (!evaluation) continue;
    for (const fact of evaluation.referenceFacts) {
      const labels = marks.flatMap((m) => m.referenceFacts.filter((f) => f.factId === fact.id));
      if (labels.length === 0) continue;
      for (const tag of ['essential', 'safetyCritical'] as const) {
        predicted[tag].push(fact[tag]);
        // majority of the raters; a tie counts as the positive label
        actual[tag].push(labels.filter((l) => l[tag]).length * 2 >= labels.length);
      }
    }
  }
  return {
    pearson: pearsonOut,
    icc: iccOut,
    tags: {
      essential: predicted.essential.length ? precisionRecallF1(predicted.essential, actual.essential) : null,
      safetyCritical: predicted.safetyCritical.length ? precisionRecallF1(predicted.safetyCritical, actual.safetyCritical) : null,
    },
  };
}
