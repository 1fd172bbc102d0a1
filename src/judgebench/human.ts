import { z } from 'zod';
import { agreementReport, type AgreementReport, type KappaWeights } from '../domain/stats.ts';
import { CsvError, csvRecords } from '../domain/csv.ts';
import { FILE_LIMITS, readBoundedLines, textLines, withFirstLine, type NumberedLine } from '../domain/input-files.ts';
import { describeZodError, ValidationError } from '../domain/validation.ts';

/**
 * Human-agreement study over files: ratings (rater, conversation, dimension, score, pass) from
 * CSV or JSON, judge scores in the same shape, and the multi-turn paper's Table III per dimension
 * (judge vs the human majority, and the human–human baseline). The store-backed view of the same
 * figures lives in the bench server (src/kinds/dialogue/agreement.ts).
 */

const PassSchema = z.union([z.boolean(), z.enum(['pass', 'fail', 'true', 'false', '1', '0', ''])]).transform((v) => (v === '' ? undefined : v === true || v === 'pass' || v === 'true' || v === '1'));

export const RatingRowSchema = z.object({
  rater: z.string().min(1).default('judge'),
  conversation: z.string().min(1),
  dimension: z.string().min(1),
  score: z.coerce.number().refine(Number.isFinite, 'expected a number'),
  pass: PassSchema.optional(),
});
export type RatingRow = z.infer<typeof RatingRowSchema>;

/** Reads ratings from .csv (header row with the column names) or .json (an array of objects); errors name the line or index. */
export function parseRatings(text: string, source: string): RatingRow[] {
  return ratingsOf(textLines(text)[Symbol.iterator](), source);
}

/** A ratings file: CSV read a line at a time within FILE_LIMITS.ratings (a JSON array is parsed whole, within the same cap). */
export function readRatings(path: string): RatingRow[] {
  return ratingsOf(readBoundedLines(path, 'ratings file', FILE_LIMITS.ratings), path);
}

function ratingsOf(read: Iterator<NumberedLine>, source: string): RatingRow[] {
  const { first, lines } = withFirstLine(read);
  if (source.toLowerCase().endsWith('.json') || first?.startsWith('[')) return jsonRatings([...lines].map((l) => l.text).join('\n'), source);
  const rows: RatingRow[] = [];
  let columns: string[] | null = null;
  for (const { line, fields } of csvOf(lines, source)) {
    if (!columns) {
      columns = fields.map((f) => f.trim().toLowerCase());
      for (const required of ['conversation', 'dimension', 'score']) {
        if (!columns.includes(required)) throw new ValidationError(`${source}:${line}`, `missing column "${required}" (columns: rater, conversation, dimension, score, pass)`);
      }
      continue;
    }
    const record = Object.fromEntries(columns.map((c, i) => [c, fields[i]?.trim() ?? '']).filter(([c, v]) => c !== 'rater' || v !== ''));
    const parsed = RatingRowSchema.safeParse(record);
    if (!parsed.success) throw new ValidationError(`${source}:${line}`, describeZodError(parsed.error));
    rows.push(parsed.data);
  }
  if (!columns) throw new ValidationError(source, 'empty ratings file');
  return rows;
}

function jsonRatings(text: string, source: string): RatingRow[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(source, `not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(raw)) throw new ValidationError(source, 'expected a JSON array of rating objects');
  return raw.map((item, index) => {
    const parsed = RatingRowSchema.safeParse(item);
    if (!parsed.success) throw new ValidationError(`${source}[${index}]`, describeZodError(parsed.error));
    return parsed.data;
  });
}

export interface DimensionAgreement extends AgreementReport {
  dimension: string;
  raters: number;
}

/**
 * Table III per dimension. Items are the conversations with a judge score and at least one human
 * rating; the human ratings of an item are ordered by rater name, and Light's κ is computed when
 * every item was rated by the same raters.
 */
export function humanAgreementStudy(
  humans: readonly RatingRow[],
  judge: readonly RatingRow[],
  options: { weights?: KappaWeights; scale?: readonly number[]; passThreshold?: number } = {},
): DimensionAgreement[] {
  const dimensions = [...new Set(judge.map((r) => r.dimension))].sort();
  const out: DimensionAgreement[] = [];
  for (const dimension of dimensions) {
    const judged = new Map(judge.filter((r) => r.dimension === dimension).map((r) => [r.conversation, r]));
    const byConversation = new Map<string, RatingRow[]>();
    for (const r of humans) {
      if (r.dimension !== dimension || !judged.has(r.conversation)) continue;
      const list = byConversation.get(r.conversation) ?? [];
      list.push(r);
      byConversation.set(r.conversation, list);
    }
    const conversations = [...byConversation.keys()].sort();
    if (conversations.length === 0) continue;
    const raters = [...new Set(conversations.flatMap((c) => byConversation.get(c)!.map((r) => r.rater)))].sort();
    const rows = conversations.map((c) => [...byConversation.get(c)!].sort((a, b) => a.rater.localeCompare(b.rater)));
    const aligned = rows.every((r) => r.length === raters.length && r.every((x, i) => x.rater === raters[i]));
    const judgeRows = conversations.map((c) => judged.get(c)!);
    const explicitPass = judgeRows.every((r) => r.pass !== undefined) && rows.every((r) => r.every((x) => x.pass !== undefined));
    const report = agreementReport(
      judgeRows.map((r) => r.score),
      rows.map((r) => r.map((x) => x.score)),
      {
        weights: options.weights,
        scale: options.scale,
        passThreshold: options.passThreshold,
        ratersAligned: aligned,
        ...(explicitPass ? { judgePass: judgeRows.map((r) => r.pass!), humanPass: rows.map((r) => r.map((x) => x.pass!)) } : {}),
      },
    );
    out.push({ dimension, raters: raters.length, ...report });
  }
  return out;
}

function* csvOf(lines: Iterable<NumberedLine>, source: string): Generator<{ line: number; fields: string[] }> {
  try {
    yield* csvRecords(lines);
  } catch (error) {
    if (error instanceof CsvError) throw new ValidationError(`${source}:${error.line}`, error.message);
    throw error;
  }
}
