import { z } from 'zod';

/**
 * The owner's-manual vocabulary of the GEAR method (reference-based evaluation of car-manual
 * assistants) as data: what a manual is made of once ingested, the question kinds and difficulties
 * of a test set, the seven metrics and their scale.
 */

/** The manual's own signal words. IBIKUS marks them as warning-type Warnung / Hinweis / Gefahr. */
export const WARNING_TYPES = ['Warning', 'Notice', 'Danger'] as const;
export const WarningTypeSchema = z.enum(WARNING_TYPES);
export type WarningType = z.infer<typeof WarningTypeSchema>;

export const MANUAL_FORMATS = ['ibikus', 'markdown', 'html', 'pdf'] as const;
export const ManualFormatSchema = z.enum(MANUAL_FORMATS);
export type ManualFormat = z.infer<typeof ManualFormatSchema>;

/** A block of a section as the readers produce it: running text, a procedure's numbered steps, or a warning block. */
export type ManualBlock =
  | { type: 'text'; text: string }
  | { type: 'steps'; steps: string[] }
  | {
      type: 'warning';
      /** the block's id attribute (IBIKUS: the id of the <background> around the <warning>), or a generated one */
      id: string;
      warningType: WarningType;
      /** the short overview line printed beside the block (IBIKUS <overview-text>), when there is one */
      summary: string;
      text: string;
      /** the section the warning is about (IBIKUS: the parent of the section holding it) */
      topicSectionId: string;
    };

/** A section of a parsed manual: heading, own blocks, subsections. */
export interface ManualSection {
  id: string;
  title: string;
  blocks: ManualBlock[];
  sections: ManualSection[];
}

/** One source file as a reader understood it. */
export interface ParsedManual {
  /** the file name the chunks name as their source */
  source: string;
  format: ManualFormat;
  sections: ManualSection[];
}

export const CHUNK_KINDS = ['section', 'procedure', 'warning'] as const;
export const ChunkKindSchema = z.enum(CHUNK_KINDS);
export type ChunkKind = z.infer<typeof ChunkKindSchema>;

/**
 * A retrievable unit of the manual. A section's running text, a procedure's numbered steps and a
 * Warning/Notice/Danger block are each kept whole, with their ids and the headings above them.
 */
export const ManualChunkSchema = z.object({
  /** section id (section), section id + "#steps" / "#steps-2" (procedure), the block id (warning) */
  id: z.string().min(1),
  kind: ChunkKindSchema,
  source: z.string(),
  /** the top heading of the file (a chapter of the manual) */
  chapter: z.string(),
  /** the section the chunk belongs to */
  sectionId: z.string(),
  /** headings from the chapter down to the chunk's section */
  headingPath: z.array(z.string()),
  /** the enclosing section's parent (null at the top) */
  parentSectionId: z.string().nullable(),
  text: z.string(),
  /** procedure: the steps in order */
  steps: z.array(z.string()).default([]),
  /** warning: its type and the section it is about */
  warningType: WarningTypeSchema.nullable().default(null),
  topicSectionId: z.string().nullable().default(null),
  /** warning: the overview line beside it */
  summary: z.string().default(''),
});
export type ManualChunk = z.infer<typeof ManualChunkSchema>;

export const MANUAL_INDEX_VERSION = 1;

export const ManualIndexSchema = z.object({
  version: z.literal(MANUAL_INDEX_VERSION),
  createdAt: z.string(),
  sources: z.array(z.object({ file: z.string(), format: ManualFormatSchema, sha256: z.string(), chunks: z.number().int() })),
  chunks: z.array(ManualChunkSchema),
});
export type ManualIndex = z.infer<typeof ManualIndexSchema>;

/** GEAR's five question kinds. */
export const QUESTION_KINDS = ['definition', 'procedure', 'troubleshooting', 'safety', 'maintenance'] as const;
export const QuestionKindSchema = z.enum(QUESTION_KINDS);
export type QuestionKind = z.infer<typeof QuestionKindSchema>;

export const DIFFICULTIES = ['beginner', 'expert'] as const;
export const DifficultySchema = z.enum(DIFFICULTIES);
export type Difficulty = z.infer<typeof DifficultySchema>;

/**
 * GEAR's seven metrics. Shares in [0, 1] for the first five, 0/1 for the last two.
 * completeness_hard = covered reference facts / all reference facts;
 * completeness_soft = covered essential facts / essential facts;
 * risk_awareness = covered safety-critical facts / safety-critical facts;
 * relevance = on-topic answer facts / answer facts;
 * correctness = accurate relevant answer facts / relevant answer facts;
 * confidence = 1 when the answer is clear, 0 when vague;
 * actionability = 1 when the answer gives usable steps, 0 when none.
 */
export const MANUAL_METRICS = ['completeness_hard', 'completeness_soft', 'risk_awareness', 'relevance', 'correctness', 'confidence', 'actionability'] as const;
export const ManualMetricSchema = z.enum(MANUAL_METRICS);
export type ManualMetric = z.infer<typeof ManualMetricSchema>;

export const METRIC_TITLES: Record<ManualMetric, string> = {
  completeness_hard: 'Completeness (hard)',
  completeness_soft: 'Completeness (soft)',
  risk_awareness: 'Risk awareness',
  relevance: 'Relevance',
  correctness: 'Correctness',
  confidence: 'Confidence',
  actionability: 'Actionability',
};

/** Binary metrics: 1 or 0. The others are shares. */
export const BINARY_METRICS: ReadonlySet<ManualMetric> = new Set(['confidence', 'actionability']);

/**
 * A metric's outcome on one answer. "not_judged": the tier cannot decide it (never counted as passed);
 * "not_applicable": the question gives nothing to measure (no safety-critical fact for risk awareness).
 */
export const MetricValueSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('judged'), value: z.number().min(0).max(1), reason: z.string() }),
  z.object({ status: z.literal('not_judged'), reason: z.string() }),
  z.object({ status: z.literal('not_applicable'), reason: z.string() }),
]);
export type MetricValue = z.infer<typeof MetricValueSchema>;

/** A metric flags a failure when it is judged and below its perfect value. */
export function metricFails(value: MetricValue | undefined): boolean {
  return value?.status === 'judged' && value.value < 1 - 1e-9;
}
