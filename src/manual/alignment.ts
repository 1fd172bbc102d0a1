import { z } from 'zod';
import { icc31, kruskalWallis, mean, pearson, precisionRecallF1, type ClassificationScores } from '../domain/stats.ts';
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
    referenceFacts: z.array(
      z
        .object({
          factId: z.string(),
          covered: z.boolean(),
          essential: z.boolean(),
          safetyCritical: z.boolean(),
          /** the test-set generator's alignment (GEAR's Table 3): is this reference fact on the question, and does the manual say it */
          relevantToQuestion: z.boolean().optional(),
          correctInManual: z.boolean().optional(),
        })
        .strict(),
    ),
    answerFacts: z.array(z.object({ factId: z.string(), relevant: z.boolean(), correct: z.boolean() }).strict()),
    /**
     * the rater's own key facts for the question (GEAR's Table 3: annotators answered each question themselves), each
     * tagged essential or not and marked when the reference answer states it; absent when the rater wrote none
     */
    ownFacts: z.array(z.object({ text: z.string().trim().min(1).max(2000), essential: z.boolean(), inReference: z.boolean() }).strict()).max(100).optional(),
    /** the rater's binary labels of the whole answer (GEAR's Table 6); absent in annotations made before they existed */
    confidence: z.boolean().optional(),
    actionability: z.boolean().optional(),
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
  /** the tier's binary confidence / actionability against the raters' majority label (positive class: 1), over items both exist for */
  binary: { confidence: ClassificationScores | null; actionability: ClassificationScores | null };
  /**
   * the test-set generator against the raters (GEAR's Table 3): the share of the raters' own essential key facts the
   * reference states (completeness), of reference facts the raters found on the question (relevance) and stated by
   * the manual (correctness), each averaged over raters; n = facts marked
   */
  testSet: { completeness: { value: number | null; n: number }; relevance: { value: number | null; n: number }; correctness: { value: number | null; n: number } };
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/**
 * Evaluator bias as GEAR explores it (§4.5): for each metric, the Kruskal–Wallis test of the per-question values each
 * evaluator tier gave the same answers (p < 0.05: the tiers' score distributions differ). Needs two tiers or more
 * with judged values; a metric with fewer than two judged tiers, or all values tied, has no p.
 */
export function evaluatorBias(tiers: ReadonlyArray<{ tier: string; evaluations: readonly ManualEvaluation[] }>): Partial<Record<ManualMetric, { p: number | null; h: number | null; n: Record<string, number> }>> {
  const out: Partial<Record<ManualMetric, { p: number | null; h: number | null; n: Record<string, number> }>> = {};
  if (tiers.length < 2) return out;
  for (const metric of [...RATED_METRICS, 'confidence', 'actionability'] as const) {
    const groups = tiers.map((t) => t.evaluations.map((e) => e.metrics[metric]).flatMap((m) => (m?.status === 'judged' ? [m.value] : [])));
    const n = Object.fromEntries(tiers.map((t, i) => [t.tier, groups[i].length]));
    const usable = groups.filter((g) => g.length > 0);
    const tied = new Set(usable.flat()).size < 2;
    const test = usable.length >= 2 && !tied ? kruskalWallis(usable) : null;
    out[metric] = { p: test ? finiteOrNull(test.p) : null, h: test ? finiteOrNull(test.h) : null, n };
  }
  return out;
}

/** One metric of a family pair: Kruskal–Wallis of the two evaluators' values on the same answers. */
export interface PairTest {
  p: number | null;
  h: number | null;
  /** judged answers: by the same-family evaluator, by the other one */
  n: { same: number; other: number };
}

/** GEAR's evaluator-bias test (§4.5, Tables 7, 9, 10): the assistant's own family as evaluator against each other family. */
export interface FamilyBias {
  assistantFamily: string | null;
  /** each judge tier's model family (null: not a model, e.g. the deterministic tier) */
  families: Record<string, string | null>;
  /** the judge tier of the assistant's family */
  sameFamily: string | null;
  pairs: Array<{ other: string; otherFamily: string; metrics: Record<(typeof RATED_METRICS)[number], PairTest> }>;
  /** why no pair could be tested (no assistant family, no evaluator of it, no evaluator of another family) */
  undecided: string | null;
}

/**
 * Evaluator bias as GEAR tests it: the answers of an assistant of family F scored by the evaluator of family F against
 * the same answers scored by each evaluator of another family, one Kruskal–Wallis test per pair and metric (p < 0.05:
 * the two evaluators score the answers differently). Without the assistant's family, an evaluator of it, or one of
 * another family, no pair is tested and `undecided` says why — never "no bias".
 */
export function familyBias(assistantFamily: string | null, tiers: ReadonlyArray<{ tier: string; family: string | null; evaluations: readonly ManualEvaluation[] }>): FamilyBias {
  const families = Object.fromEntries(tiers.map((t) => [t.tier, t.family]));
  const same = assistantFamily === null ? undefined : tiers.find((t) => t.family === assistantFamily);
  const others = tiers.filter((t) => t.family !== null && t.family !== assistantFamily);
  const base = { assistantFamily, families, sameFamily: same?.tier ?? null, pairs: [] };
  if (assistantFamily === null) return { ...base, undecided: "the assistant's model family is not set (assistantFamily in the config)" };
  if (!same) return { ...base, undecided: `no judge tier of the assistant's family (${assistantFamily})` };
  if (others.length === 0) return { ...base, undecided: `no judge tier of another model family than ${assistantFamily}` };
  const judged = (t: { evaluations: readonly ManualEvaluation[] }, metric: ManualMetric) => t.evaluations.flatMap((e) => (e.metrics[metric]?.status === 'judged' ? [(e.metrics[metric] as { value: number }).value] : []));
  const pairs = others.map((other) => {
    const metrics = {} as FamilyBias['pairs'][number]['metrics'];
    for (const metric of RATED_METRICS) {
      const a = judged(same, metric);
      const b = judged(other, metric);
      const test = a.length && b.length && new Set([...a, ...b]).size > 1 ? kruskalWallis([a, b]) : null;
      metrics[metric] = { p: test ? finiteOrNull(test.p) : null, h: test ? finiteOrNull(test.h) : null, n: { same: a.length, other: b.length } };
    }
    return { other: other.tier, otherFamily: other.family!, metrics };
  });
  return { ...base, pairs, undecided: null };
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
  const binary = {} as AlignmentReport['binary'];
  for (const metric of ['confidence', 'actionability'] as const) {
    const tier: boolean[] = [];
    const human: boolean[] = [];
    for (const [itemId, marks] of byItem) {
      const judged = evaluations.get(itemId)?.metrics[metric];
      const labels = marks.map((m) => m[metric]).filter((v): v is boolean => v !== undefined);
      if (judged?.status !== 'judged' || labels.length === 0) continue;
      tier.push(judged.value === 1);
      // majority vote; a tie counts as the positive label, as for the tags
      human.push(labels.filter(Boolean).length * 2 >= labels.length);
    }
    binary[metric] = tier.length ? precisionRecallF1(tier, human) : null;
  }
  // each rater's share over all the marks they made, then the mean over the raters who made any
  const meanOverRaters = (marksOf: (a: FactAnnotation) => Array<boolean | undefined>) => {
    const perRater = raters.map((r) => annotations.filter((a) => a.rater === r).flatMap(marksOf).filter((v): v is boolean => v !== undefined)).filter((marks) => marks.length > 0);
    return { value: perRater.length ? mean(perRater.map((marks) => marks.filter(Boolean).length / marks.length)) : null, n: perRater.reduce((n, marks) => n + marks.length, 0) };
  };
  const testSetShare = (field: 'relevantToQuestion' | 'correctInManual') => meanOverRaters((a) => a.referenceFacts.map((f) => f[field]));
  return {
    pearson: pearsonOut,
    icc: iccOut,
    binary,
    testSet: {
      completeness: meanOverRaters((a) => (a.ownFacts ?? []).filter((f) => f.essential).map((f) => f.inReference)),
      relevance: testSetShare('relevantToQuestion'),
      correctness: testSetShare('correctInManual'),
    },
    tags: {
      essential: predicted.essential.length ? precisionRecallF1(predicted.essential, actual.essential) : null,
      safetyCritical: predicted.safetyCritical.length ? precisionRecallF1(predicted.safetyCritical, actual.safetyCritical) : null,
    },
  };
}
