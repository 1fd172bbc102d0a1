import { z } from 'zod';
import { DIMENSIONS, FailureLabelSchema, type Dimension, type FailureLabel } from '../../domain/taxonomy.ts';
import type { Annotation, AnnotationInput } from '../../store/types.ts';
import { TargetStatusSchema, type TargetStatus } from '../../domain/targets.ts';
import { computeConversationScore } from '../../judge/score.ts';
import { completedTargetShare } from '../../judge/targets.ts';

const Score012 = z.union([z.literal(0), z.literal(1), z.literal(2)]);

/** One rater's rating of one conversation, as the annotation screen submits it. */
export const RatingFormSchema = z.object({
  rater: z
    .string()
    .trim()
    .min(1, 'expected a rater name')
    .max(64)
    .regex(/^[\p{L}\p{N} ._-]+$/u, 'expected letters, digits, space, dot, dash or underscore'),
  dimensions: z.object({ instruction: Score012, context: Score012, plan: Score012, safety: Score012 }),
  /** the rater's view of each target: -1 dropped, 0 incomplete, 1 completed */
  targets: z.record(z.string().min(1).max(100), TargetStatusSchema).refine((t) => Object.keys(t).length <= 50, 'at most 50 targets'),
  /** optional failure labels the rater puts on turns */
  turnLabels: z.array(z.object({ turn: z.number().int().min(0).max(49), label: FailureLabelSchema })).max(400).default([]),
  note: z.string().max(4000).default(''),
});
export type RatingForm = z.infer<typeof RatingFormSchema>;

/** A rating read back from the store (latest value per field wins, so a rater can revise). */
export interface Rating {
  key: string;
  rater: string;
  dimensions: Partial<Record<Dimension, 0 | 1 | 2>>;
  targets: Record<string, TargetStatus>;
  /** T of the paper from the rater's target statuses: completed / not dropped */
  completedShare: number;
  turnLabels: { turn: number; label: FailureLabel }[];
  /** C and pass from the rater's scores, by the judge's own formula */
  score: number;
  pass: boolean;
  note: string;
}

/**
 * Storage encoding (the store keeps one number per rater × dimension): the four rubric
 * dimensions under their names, `target:<id>` per target status, `turn_label:<turn>:<label>`
 * = 1 for a label present (0 when withdrawn), `note` carries the free-text note.
 */
export function encodeRating(key: string, form: RatingForm, previous: Rating | null): AnnotationInput[] {
  const rows: AnnotationInput[] = DIMENSIONS.map((dimension) => ({ key, rater: form.rater, dimension, score: form.dimensions[dimension] }));
  for (const [targetId, status] of Object.entries(form.targets)) rows.push({ key, rater: form.rater, dimension: `target:${targetId}`, score: status });
  const labels = new Set(form.turnLabels.map((l) => `${l.turn}:${l.label}`));
  for (const id of labels) rows.push({ key, rater: form.rater, dimension: `turn_label:${id}`, score: 1 });
  for (const old of previous?.turnLabels ?? []) {
    const id = `${old.turn}:${old.label}`;
    if (!labels.has(id)) rows.push({ key, rater: form.rater, dimension: `turn_label:${id}`, score: 0 });
  }
  rows.push({ key, rater: form.rater, dimension: 'note', score: 0, note: form.note });
  return rows;
}

/** Folds stored annotation rows into one rating per (conversation, rater); incomplete ratings are skipped. */
export function decodeRatings(annotations: readonly Annotation[]): Rating[] {
  const grouped = new Map<string, Annotation[]>();
  for (const a of annotations) {
    const id = JSON.stringify([a.key, a.rater]);
    const list = grouped.get(id) ?? [];
    list.push(a);
    grouped.set(id, list);
  }
  const ratings: Rating[] = [];
  for (const rows of grouped.values()) {
    const latest = new Map<string, Annotation>();
    for (const row of rows) latest.set(row.dimension, row);
    const dimensions: Partial<Record<Dimension, 0 | 1 | 2>> = {};
    for (const d of DIMENSIONS) {
      const v = latest.get(d)?.score;
      if (v === 0 || v === 1 || v === 2) dimensions[d] = v;
    }
    if (Object.keys(dimensions).length !== DIMENSIONS.length) continue;
    const targets: Record<string, TargetStatus> = {};
    const turnLabels: Rating['turnLabels'] = [];
    for (const [dimension, row] of latest) {
      if (dimension.startsWith('target:')) {
        const status = TargetStatusSchema.safeParse(row.score);
        if (status.success) targets[dimension.slice('target:'.length)] = status.data;
      } else if (dimension.startsWith('turn_label:') && row.score === 1) {
        const [, turn, label] = dimension.split(':');
        const parsed = FailureLabelSchema.safeParse(label);
        if (parsed.success) turnLabels.push({ turn: Number(turn), label: parsed.data });
      }
    }
    const completedShare = completedTargetShare(Object.values(targets));
    const { score, pass } = computeConversationScore(dimensions, completedShare);
    ratings.push({
      key: rows[0].key,
      rater: rows[0].rater,
      dimensions,
      targets,
      completedShare,
      turnLabels: turnLabels.sort((a, b) => a.turn - b.turn || a.label.localeCompare(b.label)),
      score,
      pass,
      note: latest.get('note')?.note ?? '',
    });
  }
  return ratings;
}
