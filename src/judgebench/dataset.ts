import { z } from 'zod';
import { HHMM, ISODate, minutesOfDay } from '../domain/context.ts';
import { CostLevelSchema } from '../domain/targets.ts';
import { FILE_LIMITS, readBoundedLines, textLines, type NumberedLine } from '../domain/input-files.ts';
import { describeZodError, ValidationError } from '../domain/validation.ts';

/**
 * The contextual-understanding benchmark's pair format (docs/judge-benchmark.md): one JSON object
 * per line. zod objects strip unknown keys, so extra fields in imported files are ignored.
 */

export const ERROR_CATEGORIES = ['none', 'location', 'time', 'cuisine', 'cost', 'rating'] as const;
export const ErrorCategorySchema = z.enum(ERROR_CATEGORIES);
export type ErrorCategory = z.infer<typeof ErrorCategorySchema>;
/** The five checked constraints (every category except "none"). */
export const RULE_CATEGORIES = ['location', 'time', 'cuisine', 'cost', 'rating'] as const;
export type RuleCategory = (typeof RULE_CATEGORIES)[number];

export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export const RATING_RELATIONS = ['at_least', 'above', 'around', 'at_most'] as const;
export const RatingRelationSchema = z.enum(RATING_RELATIONS);
export type RatingRelation = z.infer<typeof RatingRelationSchema>;

/** "around" in the paper's prompt: within ±0.2 of the stated value. */
export const AROUND_TOLERANCE = 0.2;
/** A recommendation more than this many minutes' drive away violates the location rule. */
export const MAX_DRIVE_MIN = 15;

const PlaceSchema = z.object({
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  description: z.string(),
});

const HoursSchema = z.string().regex(/^(closed|([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-4]):[0-5]\d)$/, 'expected "HH:MM-HH:MM" or "closed"');

export const OpeningHoursSchema = z.object({
  monday: HoursSchema,
  tuesday: HoursSchema,
  wednesday: HoursSchema,
  thursday: HoursSchema,
  friday: HoursSchema,
  saturday: HoursSchema,
  sunday: HoursSchema,
});
export type OpeningHours = z.infer<typeof OpeningHoursSchema>;

export const PreferencesSchema = z.object({
  cuisine: z.string().min(1),
  cost: CostLevelSchema,
  rating: z.object({ relation: RatingRelationSchema, value: z.number().min(0).max(5) }),
});
export type Preferences = z.infer<typeof PreferencesSchema>;

export const UserBlockSchema = z.object({
  location: PlaceSchema,
  date: ISODate,
  time: HHMM,
  utterance: z.string().min(1),
  preferences: PreferencesSchema.optional(),
});
export type UserBlock = z.infer<typeof UserBlockSchema>;

export const RecommendationSchema = z.object({
  name: z.string(),
  location: PlaceSchema,
  cuisine_type: z.string().min(1),
  menu: z.union([z.string(), z.array(z.string())]),
  cost: CostLevelSchema,
  rating: z.number().min(0).max(5),
  opening_hours: OpeningHoursSchema,
  distance_km: z.number().min(0),
  duration_min: z.number().min(0),
  /** what the assistant said along with the recommendation (the injection set appends instructions here) */
  note: z.string().max(2000).optional(),
});
export type Recommendation = z.infer<typeof RecommendationSchema>;

export const PairSchema = z
  .object({
    id: z.string().min(1),
    user: UserBlockSchema,
    system: RecommendationSchema,
    label: z.boolean(),
    error_category: ErrorCategorySchema,
  })
  .refine((pair) => pair.label === (pair.error_category === 'none'), {
    message: 'label must be true exactly when error_category is "none"',
    path: ['label'],
  });
export type Pair = z.infer<typeof PairSchema>;

/** Parses JSONL text; every error names `source:line` and the field. Blank lines are skipped. */
export function parseDatasetJsonl(text: string, source: string): Pair[] {
  return parseDatasetLines(textLines(text), source);
}

/** parseDatasetJsonl over lines as they are read (readDataset streams the file). */
function parseDatasetLines(lines: Iterable<NumberedLine>, source: string): Pair[] {
  const pairs: Pair[] = [];
  const seen = new Map<string, number>();
  for (const { text: line, number: lineNo } of lines) {
    if (!line.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (error) {
      throw new ValidationError(`${source}:${lineNo}`, `not valid JSON (${(error as Error).message})`);
    }
    const parsed = PairSchema.safeParse(raw);
    if (!parsed.success) throw new ValidationError(`${source}:${lineNo}`, describeZodError(parsed.error));
    const earlier = seen.get(parsed.data.id);
    if (earlier !== undefined) throw new ValidationError(`${source}:${lineNo}`, `id: "${parsed.data.id}" was already used on line ${earlier}`);
    seen.set(parsed.data.id, lineNo);
    pairs.push(parsed.data);
  }
  if (pairs.length === 0) throw new ValidationError(source, 'the dataset has no pairs');
  return pairs;
}

/** A dataset file, read a line at a time within FILE_LIMITS.judgeBenchDataset. */
export function readDataset(path: string): Pair[] {
  return parseDatasetLines(readBoundedLines(path, 'judge-bench dataset', FILE_LIMITS.judgeBenchDataset), path);
}

export function toJsonl(pairs: readonly Pair[]): string {
  return pairs.map((p) => JSON.stringify(p)).join('\n') + '\n';
}

/** Copies of the pairs without the structured preferences: what an utterance-only dataset looks like. */
export function withoutPreferences(pairs: readonly Pair[]): Pair[] {
  return pairs.map((p) => {
    const { preferences: _dropped, ...user } = p.user;
    return { ...p, user };
  });
}

export function weekdayOf(date: string): Weekday {
  return WEEKDAYS[new Date(`${date}T12:00:00Z`).getUTCDay()];
}

function previousWeekday(day: Weekday): Weekday {
  return WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7];
}

function span(hours: string): { open: number; close: number } | null {
  if (hours === 'closed') return null;
  const [from, to] = hours.split('-');
  return { open: minutesOfDay(from), close: to === '24:00' ? 1440 : minutesOfDay(to) };
}

/**
 * Whether the place is open on `date` at `time`. A span whose closing time is not after its
 * opening time runs past midnight, so it also covers the early hours of the next day.
 */
export function isOpenAt(hours: OpeningHours, date: string, time: string): boolean {
  const day = weekdayOf(date);
  const t = minutesOfDay(time);
  const today = span(hours[day]);
  if (today) {
    if (today.close > today.open ? t >= today.open && t < today.close : t >= today.open) return true;
  }
  const yesterday = span(hours[previousWeekday(day)]);
  return yesterday !== null && yesterday.close <= yesterday.open && t < yesterday.close;
}

/** Whether `rating` satisfies the stated relation; "around" allows ±0.2 (a small epsilon absorbs decimal rounding). */
export function ratingSatisfies(rating: number, relation: RatingRelation, value: number): boolean {
  const eps = 1e-9;
  switch (relation) {
    case 'at_least':
      return rating >= value - eps;
    case 'above':
      return rating > value + eps;
    case 'around':
      return Math.abs(rating - value) <= AROUND_TOLERANCE + eps;
    case 'at_most':
      return rating <= value + eps;
  }
}
