import { z } from 'zod';
import { ConversationStatusSchema } from '../domain/conversation.ts';
import { FailureLabelSchema } from '../domain/taxonomy.ts';

/** unit_unreachable: the run ended without any conversation reaching the head unit (src/run/unit-reach.ts) */
export const RunStatusSchema = z.enum(['running', 'interrupted', 'completed', 'budget_exhausted', 'unit_unreachable']);
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** A run holds guided or baseline conversations, or both when a campaign mixes them; an item-based run (manual-QA, …) holds items. */
/** guided / baseline dialogue campaigns, mixed, item-based kinds, scripted suites (kind: suite) and live sessions (a technician's turns) */
export const RunModeSchema = z.enum(['guided', 'baseline', 'mixed', 'items', 'scripted', 'live']);
export type RunMode = z.infer<typeof RunModeSchema>;

export const RunRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  mode: RunModeSchema,
  /** the campaign kind (src/kinds/registry.ts): dialogue, or an item-based kind such as manual-qa */
  kind: z.string().min(1),
  /** the campaign config as loaded (JSON-serialisable) */
  config: z.unknown(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  status: RunStatusSchema,
  meta: z.record(z.string(), z.unknown()),
  planned: z.number().int().min(0),
  stored: z.number().int().min(0),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

export const CombinedOutcomeSchema = z.enum(['pass', 'fail', 'inconclusive', 'error']);

/** One row of a conversation list, for UIs and reports: no turns. */
export const ConversationRowSchema = z.object({
  key: z.string(),
  status: ConversationStatusSchema,
  outcome: CombinedOutcomeSchema,
  score: z.number().nullable(),
  pass: z.boolean().nullable(),
  error: z.string().nullable(),
  turns: z.number().int().min(0),
  /** distinct failure labels of the conversation (deciding tier per turn) */
  labels: z.array(FailureLabelSchema),
  startedAt: z.string(),
  durationMs: z.number(),
});
export type ConversationRow = z.infer<typeof ConversationRowSchema>;

export interface ConversationFilter {
  status?: z.infer<typeof ConversationStatusSchema>;
  outcome?: z.infer<typeof CombinedOutcomeSchema>;
  /** only conversations with this failure label */
  label?: z.infer<typeof FailureLabelSchema>;
  /** substring of the key */
  keyContains?: string;
}

export const ArtifactSchema = z.object({
  name: z.string().min(1),
  mime: z.string().min(1),
  /** stored inline, or null when only a path is recorded */
  bytes: z.instanceof(Uint8Array).nullable(),
  path: z.string().nullable(),
  createdAt: z.string(),
});
export type Artifact = z.infer<typeof ArtifactSchema>;

export const AnnotationInputSchema = z.object({
  key: z.string().min(1),
  rater: z.string().min(1),
  /** a rubric dimension, "overall", or any rating scale the annotation tool defines */
  dimension: z.string().min(1),
  score: z.number().finite(),
  note: z.string().default(''),
});
export type AnnotationInput = z.input<typeof AnnotationInputSchema>;

export const AnnotationSchema = AnnotationInputSchema.extend({ createdAt: z.string() });
export type Annotation = z.infer<typeof AnnotationSchema>;

/** One item of an item-based run (a manual-QA question, …): the planned item and, once done, its result. */
export interface ItemRecord {
  key: string;
  ordinal: number;
  /** the planned item as stored; the campaign kind validates it */
  item: unknown;
  /** null until the item's result is stored */
  outcome: string | null;
  result: unknown;
  finishedAt: string | null;
}

/** A rater's annotation of one item of an item-based run; the campaign kind defines and validates `data`. */
export interface ItemAnnotation {
  key: string;
  rater: string;
  data: unknown;
  createdAt: string;
}
