import { z } from 'zod';
import { TargetStatusSchema, type TargetStatus } from '../domain/targets.ts';
import { FailureLabelSchema, PER_TARGET_LABELS, type FailureLabel } from '../domain/taxonomy.ts';
import { eitherShape, hasKey, memoisedSchema, sendsAs } from '../llm/structured.ts';

/**
 * What a model judge answers (issue #37: fewer completion tokens). A model host spends most of a judged turn decoding
 * the answer, so the answer the model is asked for (its JSON schema, sent through the provider's structured-output
 * field) holds what the bench uses and no more:
 * - a turn verdict (prompts/judge/turn-labels.v6): `fail`, the failures (code, target, a quote of at most QUOTE_MAX
 *   characters), left out when there is none, and `done` / `dropped`, the target ids this reply resolved; no
 *   free-text reasoning;
 * - a rubric score (prompts/judge/dimension.v5): `score`, and `why` (at most WHY_MAX characters) only below 2, where
 *   points were taken off.
 * Techniques that reason first (cot, sc, mab, mad, ar) are asked for `why` on every answer, and ar for `confidence`.
 * Answers in the shapes of earlier prompt versions (labels / targetUpdates / reasoning; score / reasoning), as a
 * request cache or a worked example may hold them, are still read. Both become the same value (TurnAnswer,
 * DimensionAnswer).
 */

export const QUOTE_MAX = 160;
export const WHY_MAX = 300;

export interface TurnAnswer {
  labels: { label: FailureLabel; targetId: string | null; evidence: string }[];
  targetUpdates: { targetId: string; status: TargetStatus }[];
  reasoning: string;
  confidence?: number;
}

export interface DimensionAnswer {
  score: 0 | 1 | 2;
  reasoning: string;
  confidence?: number;
}

/** How an answer is asked for: `why` on every answer (the reasoning techniques), `confidence` (ar). */
export interface AnswerOptions {
  why?: boolean;
  confidence?: boolean;
}

const Confidence = z.number().min(0).max(1);
const TargetIds = z.array(z.string()).max(5);

/** The reasoning a compact turn answer without `why` is stored with: what it labelled, in a line. */
export function turnReasoning(labels: readonly { label: string }[]): string {
  return labels.length ? `labelled ${labels.map((l) => l.label).join(', ')} (evidence per label)` : 'no failure labelled';
}

function compactTurnSchema({ why = false, confidence = false }: AnswerOptions) {
  return z.object({
    ...(why ? { why: z.string().min(1).max(WHY_MAX) } : {}),
    fail: z.array(z.object({ code: FailureLabelSchema, target: z.string().nullable(), quote: z.string().max(QUOTE_MAX) })).max(12).optional(),
    done: TargetIds.optional(),
    dropped: TargetIds.optional(),
    ...(confidence ? { confidence: Confidence } : {}),
  });
}

function legacyTurnSchema(confidence: boolean) {
  return z.object({
    labels: z.array(z.object({ label: FailureLabelSchema, targetId: z.string().nullable(), evidence: z.string().max(1000) })).max(12),
    targetUpdates: z.array(z.object({ targetId: z.string(), status: TargetStatusSchema })).default([]),
    reasoning: z.string().max(2000),
    ...(confidence ? { confidence: Confidence } : {}),
  });
}

const PER_TARGET = new Set<FailureLabel>(PER_TARGET_LABELS);

/** The field names of a turn answer's shape, for errors that name what the model wrote. */
const COMPACT_FIELDS = { labels: 'fail', target: 'target', done: 'done', dropped: 'dropped' };
const EARLIER_FIELDS = { labels: 'labels', target: 'targetId', done: 'targetUpdates', dropped: 'targetUpdates' };

/** Target ids must be real, per-target labels exclusive per target, per-response labels without a target. */
function checkTurnAnswer(targetIds: readonly string[], fields: typeof COMPACT_FIELDS) {
  return (value: Pick<TurnAnswer, 'labels' | 'targetUpdates'>, ctx: z.RefinementCtx) => {
    const seen = new Set<string>();
    value.labels.forEach((l, i) => {
      if (PER_TARGET.has(l.label)) {
        if (l.targetId === null || !targetIds.includes(l.targetId)) {
          ctx.addIssue({ code: 'custom', path: [fields.labels, i, fields.target], message: `${l.label} is a per-target label: ${fields.target} must be one of ${targetIds.join(', ') || '(no targets)'}` });
        } else if (seen.has(l.targetId)) {
          ctx.addIssue({ code: 'custom', path: [fields.labels, i], message: `only one per-target label per target; ${l.targetId} already has one` });
        } else seen.add(l.targetId);
      } else if (l.targetId !== null) {
        ctx.addIssue({ code: 'custom', path: [fields.labels, i, fields.target], message: `${l.label} describes the whole reply: ${fields.target} must be null` });
      }
    });
    value.targetUpdates.forEach((u) => {
      if (!targetIds.includes(u.targetId)) ctx.addIssue({ code: 'custom', path: [u.status === 1 ? fields.done : fields.dropped], message: `unknown target id "${u.targetId}"` });
    });
  };
}

function buildTurnAnswerSchema(targetIds: readonly string[], options: AnswerOptions) {
  const compact = compactTurnSchema(options).transform(({ fail = [], done = [], dropped = [], ...rest }): TurnAnswer => {
    const labels = fail.map((f) => ({ label: f.code, targetId: f.target, evidence: f.quote }));
    const targetUpdates = [...done.map((targetId) => ({ targetId, status: 1 as const })), ...dropped.map((targetId) => ({ targetId, status: -1 as const }))];
    return { labels, targetUpdates, reasoning: 'why' in rest ? String(rest.why) : turnReasoning(labels), ...('confidence' in rest ? { confidence: Number(rest.confidence) } : {}) };
  });
  const earlier = legacyTurnSchema(options.confidence ?? false).superRefine(checkTurnAnswer(targetIds, EARLIER_FIELDS));
  const accepted = eitherShape<TurnAnswer>(hasKey('labels'), earlier, compact.superRefine(checkTurnAnswer(targetIds, COMPACT_FIELDS)));
  return sendsAs(accepted, compactTurnSchema(options));
}

/** A turn verdict's schema for these targets (memoised): the compact answer is asked for, the earlier shape still read. */
export const turnAnswerSchema: (targetIds: readonly string[], options?: AnswerOptions) => ReturnType<typeof buildTurnAnswerSchema> = memoisedSchema(
  (targetIds: readonly string[], options: AnswerOptions = {}) => `${options.why ?? false}|${options.confidence ?? false}|${targetIds.join(',')}`,
  (targetIds: readonly string[], options: AnswerOptions = {}) => buildTurnAnswerSchema(targetIds, options),
);

/** The turn answer as the model is asked to write it (worked examples show this shape). */
export function compactTurnAnswer(answer: Pick<TurnAnswer, 'labels' | 'targetUpdates'> & { why?: string }): Record<string, unknown> {
  const ids = (status: TargetStatus) => answer.targetUpdates.filter((u) => u.status === status).map((u) => u.targetId);
  return {
    ...(answer.why !== undefined ? { why: answer.why.slice(0, WHY_MAX) } : {}),
    ...(answer.labels.length ? { fail: answer.labels.map((l) => ({ code: l.label, target: l.targetId, quote: l.evidence.slice(0, QUOTE_MAX) })) } : {}),
    ...(ids(1).length ? { done: ids(1) } : {}),
    ...(ids(-1).length ? { dropped: ids(-1) } : {}),
  };
}

/** The reasoning a full-marks rubric score without `why` is stored with. */
export const FULL_MARKS_REASONING = 'full marks (2) by the rubric';

function compactDimensionSchema({ why = false, confidence = false }: AnswerOptions) {
  const extra = confidence ? { confidence: Confidence } : {};
  const reason = z.string().min(1).max(WHY_MAX);
  if (why) return z.object({ why: reason, score: z.union([z.literal(0), z.literal(1), z.literal(2)]), ...extra });
  // a reason only where points were taken off
  return z.union([z.object({ score: z.literal(2), ...extra }), z.object({ score: z.union([z.literal(0), z.literal(1)]), why: reason, ...extra })]);
}

function buildDimensionAnswerSchema(options: AnswerOptions) {
  const confidence = options.confidence ? { confidence: Confidence } : {};
  const compact = compactDimensionSchema(options).transform((value): DimensionAnswer => {
    const { score, why, confidence: stated } = value as { score: 0 | 1 | 2; why?: string; confidence?: number };
    return { score, reasoning: why ?? FULL_MARKS_REASONING, ...(stated !== undefined ? { confidence: stated } : {}) };
  });
  const legacy = z.object({ score: z.union([z.literal(0), z.literal(1), z.literal(2)]), reasoning: z.string().min(1).max(2000), ...confidence });
  return sendsAs(eitherShape<DimensionAnswer>(hasKey('reasoning'), legacy, compact), compactDimensionSchema(options));
}

const dimensionSchemas = new Map<string, ReturnType<typeof buildDimensionAnswerSchema>>();

/** A rubric score's schema (memoised): the compact answer is asked for, the earlier shape still read. */
export function dimensionAnswerSchema(options: AnswerOptions = {}) {
  const key = `${options.why ?? false}|${options.confidence ?? false}`;
  let schema = dimensionSchemas.get(key);
  if (!schema) {
    schema = buildDimensionAnswerSchema(options);
    dimensionSchemas.set(key, schema);
  }
  return schema;
}
