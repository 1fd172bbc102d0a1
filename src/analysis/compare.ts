import { z } from 'zod';
import { FAILURE_LABELS } from '../domain/taxonomy.ts';
import { a12Magnitude, mannWhitneyU, varghaDelaneyA12 } from '../domain/stats.ts';
import type { RunSummary } from './profile.ts';
import { compareDiversity, DEFAULT_DIVERSITY_CONFIG, DiversityComparisonSchema, type DiversityConfig } from './diversity.ts';
import type { Embedder } from '../embedding/types.ts';
import { ReliabilitySchema } from './reliability.ts';
import { RunChangesSchema } from './changes.ts';

/** Significance level of the guided-vs-baseline tests (the paper's). */
export const COMPARISON_ALPHA = 0.05;

const RunSideSchema = z.object({
  name: z.string(),
  id: z.string().nullable(),
  conversations: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  inconclusive: z.number().int(),
  errors: z.number().int(),
  failRate: z.number().nullable(),
  /** completed conversations with at least one finding, and their share of the completed ones */
  conversationsWithFindings: z.number().int(),
  findingsRate: z.number().nullable(),
  /** the findings gate the run was judged by, the conversations it failed, and the fail rate by C alone (the paper's) */
  failOn: z.array(z.enum(FAILURE_LABELS)),
  failedByGate: z.number().int(),
  scoreOnlyFailRate: z.number().nullable(),
  meanScore: z.number().nullable(),
  uniqueFailureTypesPerConversation: z.number(),
  /** share of conversations with at least three distinct failure types (Negi et al. §VI: 81.1 % guided, 20.5 % baseline); null without conversations */
  threeOrMoreFailureTypes: z.number().nullable(),
});

/** A two-sided Mann–Whitney U test of a against b with Vargha–Delaney Â12 (a beats b). */
const SampleTestSchema = z.object({
  nA: z.number().int(),
  nB: z.number().int(),
  /** null when either sample is empty */
  u: z.number().nullable(),
  z: z.number().nullable(),
  p: z.number().nullable(),
  method: z.enum(['exact', 'normal']).nullable(),
  a12: z.number().nullable(),
  magnitude: z.enum(['negligible', 'small', 'medium', 'large']).nullable(),
  significant: z.boolean(),
});
export type SampleTest = z.infer<typeof SampleTestSchema>;

export const RunComparisonSchema = z.object({
  alpha: z.number(),
  a: RunSideSchema,
  b: RunSideSchema,
  /** a.failRate − b.failRate; null when either is undefined */
  failRateDifference: z.number().nullable(),
  /** a / b of unique failure types per conversation; null when b found none */
  uniqueFailureTypesRatio: z.number().nullable(),
  /** per-conversation C scores of a vs b */
  scores: SampleTestSchema,
  /** per-conversation counts of distinct failure labels of a vs b */
  uniqueFailureTypes: SampleTestSchema,
  /** per label: share of all failures in a and b, enrichment = shareA / shareB (null when b has none) */
  enrichment: z.record(
    z.enum(FAILURE_LABELS),
    z.object({ countA: z.number().int(), countB: z.number().int(), shareA: z.number(), shareB: z.number(), prevalenceA: z.number(), prevalenceB: z.number(), ratio: z.number().nullable() }),
  ),
  /** unique failing conversations A/B and coverage of the union's clusters; absent when a summary has no diversity section */
  diversity: DiversityComparisonSchema.optional(),
  /** the same over the conversations with findings of each run; absent when a summary has no findingsDiversity section */
  findingsDiversity: DiversityComparisonSchema.optional(),
  /** pass^k / pass@k of each run (summary.json `reliability`; null for a run without repeats); absent when neither has repeats */
  reliability: z.object({ a: ReliabilitySchema.nullable(), b: ReliabilitySchema.nullable() }).optional(),
  /** conversation by conversation (runs of one suite or campaign on two builds): fixed, regressed, turn diffs; absent when a side is not a stored run */
  changes: RunChangesSchema.optional(),
  /** why the conversations were not paired (runs of different plans: "guided vs baseline: different plans (mode guided vs baseline); …"); then no changes */
  unpaired: z.string().optional(),
});
export type RunComparison = z.infer<typeof RunComparisonSchema>;

function side(summary: RunSummary, fallbackName: string): z.infer<typeof RunSideSchema> {
  return {
    name: summary.run?.name ?? fallbackName,
    id: summary.run?.id ?? null,
    conversations: summary.conversations,
    passed: summary.passed,
    failed: summary.failed,
    inconclusive: summary.inconclusive,
    errors: summary.errors.sut_error + summary.errors.simulator_error + summary.errors.judge_error,
    failRate: summary.failRate,
    conversationsWithFindings: summary.conversationsWithFindings,
    findingsRate: summary.findingsRate,
    failOn: summary.gate.failOn,
    failedByGate: summary.gate.failedByGate,
    scoreOnlyFailRate: summary.gate.scoreOnly.failRate,
    meanScore: summary.meanScore,
    uniqueFailureTypesPerConversation: summary.uniqueFailureTypesPerConversation,
    threeOrMoreFailureTypes: threeOrMoreFailureTypes(summary),
  };
}

/** The share of a run's conversations with ≥ 3 distinct failure labels; null for a run without conversations. */
export function threeOrMoreFailureTypes(summary: Pick<RunSummary, 'perConversation'>): number | null {
  const all = summary.perConversation;
  return all.length === 0 ? null : all.filter((c) => c.uniqueFailureTypes >= 3).length / all.length;
}

export function sampleTest(a: readonly number[], b: readonly number[], alpha = COMPARISON_ALPHA): SampleTest {
  if (a.length === 0 || b.length === 0) {
    return { nA: a.length, nB: b.length, u: null, z: null, p: null, method: null, a12: null, magnitude: null, significant: false };
  }
  const test = mannWhitneyU(a, b);
  const a12 = varghaDelaneyA12(a, b);
  // z is -0 when U sits at its mean; JSON cannot keep the sign, so report +0 and round-trip exactly
  return { nA: a.length, nB: b.length, u: test.u, z: test.z === 0 ? 0 : test.z, p: test.p, method: test.method, a12, magnitude: a12Magnitude(a12), significant: test.p < alpha };
}

/**
 * Compares run a (e.g. guided) with run b (e.g. baseline): rates, mean scores, the ratio of unique
 * failure types per conversation, Mann–Whitney U and Â12 on per-conversation C scores and on
 * per-conversation unique failure counts, and the enrichment of each failure type.
 */
export function compareRuns(a: RunSummary, b: RunSummary, alpha = COMPARISON_ALPHA): RunComparison {
  const scoresOf = (s: RunSummary) => s.perConversation.flatMap((c) => (c.score === null ? [] : [c.score]));
  const uniqueOf = (s: RunSummary) => s.perConversation.map((c) => c.uniqueFailureTypes);
  return {
    alpha,
    a: side(a, 'A'),
    b: side(b, 'B'),
    failRateDifference: a.failRate === null || b.failRate === null ? null : a.failRate - b.failRate,
    uniqueFailureTypesRatio: b.uniqueFailureTypesPerConversation === 0 ? null : a.uniqueFailureTypesPerConversation / b.uniqueFailureTypesPerConversation,
    scores: sampleTest(scoresOf(a), scoresOf(b), alpha),
    uniqueFailureTypes: sampleTest(uniqueOf(a), uniqueOf(b), alpha),
    enrichment: Object.fromEntries(
      FAILURE_LABELS.map((label) => {
        const fa = a.failureTypes[label];
        const fb = b.failureTypes[label];
        return [
          label,
          { countA: fa.count, countB: fb.count, shareA: fa.share, shareB: fb.share, prevalenceA: fa.prevalence, prevalenceB: fb.prevalence, ratio: fb.share === 0 ? null : fa.share / fb.share },
        ];
      }),
    ) as RunComparison['enrichment'],
    ...(a.reliability || b.reliability ? { reliability: { a: a.reliability ?? null, b: b.reliability ?? null } } : {}),
  };
}

/**
 * compareRuns plus failure diversity (`icabench compare`): when both summaries carry a diversity
 * section, the union of their unique failing conversations is clustered with `embedder`; the same for
 * their conversations with findings (`findingsDiversity`).
 */
export async function compareRunsWithDiversity(a: RunSummary, b: RunSummary, embedder: Embedder, config: DiversityConfig = DEFAULT_DIVERSITY_CONFIG, alpha = COMPARISON_ALPHA): Promise<RunComparison> {
  const comparison = compareRuns(a, b, alpha);
  return {
    ...comparison,
    ...(a.diversity && b.diversity ? { diversity: await compareDiversity(a.diversity, b.diversity, embedder, config) } : {}),
    ...(a.findingsDiversity && b.findingsDiversity ? { findingsDiversity: await compareDiversity(a.findingsDiversity, b.findingsDiversity, embedder, config) } : {}),
  };
}
