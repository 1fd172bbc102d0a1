import { z } from 'zod';
import { CsvError, csvRecords } from '../domain/csv.ts';
import { FILE_LIMITS, readBoundedLines, readBoundedText, withFirstLine, type NumberedLine } from '../domain/input-files.ts';
import { FailureLabelSchema } from '../domain/taxonomy.ts';
import { ACTION_TYPES, MAX_SUITE_TURNS, SuiteFileSchema, type SuiteContext, type SuiteConversation, type SuiteFile, type SuiteTurn } from './format.ts';

/**
 * Real dialogues as suites (docs/suites.md, "Importing transcripts"): the KVRET in-car dialogues (Eric et al.
 * 2017; the JSON of its public release) and a lab's own transcripts as CSV or JSON lines, one driver turn a
 * row. Every problem names the file and the line (or the dialogue's index) and what was expected.
 */

export class TranscriptError extends Error {
  constructor(where: string, message: string) {
    super(`${where}: ${message}`);
    this.name = 'TranscriptError';
  }
}

const KvretTurnSchema = z.object({
  turn: z.enum(['driver', 'assistant']),
  data: z.object({ utterance: z.string(), end_dialogue: z.boolean().optional() }),
});
const KvretDialogueSchema = z.object({
  dialogue: z.array(KvretTurnSchema),
  scenario: z.object({ task: z.object({ intent: z.string() }), uuid: z.string().min(1), kb: z.object({ kb_title: z.string().optional() }).optional() }),
});

/**
 * KVRET dialogues as a suite: each dialogue one conversation (id `kvret-<uuid>`), each driver utterance a
 * turn, the assistant's answer after it kept as `reference`. KVRET carries no vehicle state and no structured
 * expectations: the turns are read by the bench (src/simulator/reader.ts) and judged as typed turns are.
 * `intents` keeps only dialogues of those KVRET tasks (navigate, weather, schedule).
 */
export function importKvret(path: string, options: { name?: string; intents?: readonly string[]; limit?: number; truncateTurns?: boolean; warn?: (line: string) => void } = {}): SuiteFile {
  const raw = parseJson(path);
  if (!Array.isArray(raw)) throw new TranscriptError(path, 'expected the KVRET JSON: an array of {dialogue, scenario} objects');
  const conversations: SuiteConversation[] = [];
  raw.forEach((item, index) => {
    const parsed = KvretDialogueSchema.safeParse(item);
    if (!parsed.success) throw new TranscriptError(`${path}[${index}]`, `not a KVRET dialogue: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const { dialogue, scenario } = parsed.data;
    if (options.intents && !options.intents.includes(scenario.task.intent)) return;
    if (options.limit !== undefined && conversations.length >= options.limit) return;
    const turns: SuiteTurn[] = [];
    for (const entry of dialogue) {
      const text = entry.data.utterance.trim();
      if (entry.turn === 'driver' && text) turns.push({ user: text });
      else if (entry.turn === 'assistant' && turns.length > 0 && text) turns[turns.length - 1].reference = text;
    }
    // a dialogue with no driver words has nothing to replay
    if (turns.length === 0) return;
    if (turns.length > MAX_SUITE_TURNS) {
      // cutting a dialogue changes what is replayed: only when asked, and said
      const cut = `dialogue ${scenario.uuid} has ${turns.length} driver turns; a suite conversation has at most ${MAX_SUITE_TURNS}`;
      if (!options.truncateTurns) throw new TranscriptError(`${path}[${index}]`, `${cut} (split it, or import with --truncate-turns to keep its first ${MAX_SUITE_TURNS})`);
      options.warn?.(`${path}[${index}]: ${cut}: kept the first ${MAX_SUITE_TURNS}, dropped ${turns.length - MAX_SUITE_TURNS} (--truncate-turns)`);
    }
    conversations.push({
      id: `kvret-${scenario.uuid}`,
      description: `KVRET ${scenario.task.intent} dialogue ${scenario.uuid}`,
      from: { dataset: 'kvret', uuid: scenario.uuid, intent: scenario.task.intent, index },
      targets: [],
      turns: turns.slice(0, MAX_SUITE_TURNS),
    });
  });
  if (conversations.length === 0) throw new TranscriptError(path, 'no dialogue with driver turns was found (check --intent)');
  return checked({ suite: options.name ?? 'kvret', description: `KVRET in-car dialogues (Eric et al. 2017), imported from ${path}`, conversations }, path, (c) => `${path}[${String(conversations[c]?.from?.index ?? '?')}]`);
}

/** The columns of the transcript format (CSV header or JSON-lines keys); only conversation and user are required. */
export const TRANSCRIPT_COLUMNS = ['conversation', 'user', 'reference', 'date', 'time', 'district', 'city', 'lat', 'lon', 'speed_kmh', 'gear', 'soc_pct', 'expect_actions', 'forbid'] as const;

const optionalNumber = z
  .union([z.number(), z.string()])
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) {
      ctx.addIssue({ code: 'custom', message: `expected a number, got "${v}"` });
      return z.NEVER;
    }
    return n;
  });
/**
 * A list column: in CSV, items separated by ";" or "|"; in JSON lines, a JSON array (a string there is refused:
 * "a;b" would be read one way in CSV and another by whoever wrote the JSON).
 */
const listOf = <T extends z.ZodType<string, string>>(item: T, format: TranscriptFormat, accepted: string) =>
  (format === 'csv'
    ? z
        .string()
        .optional()
        .transform((v) => (v === undefined || v === '' ? [] : v.split(/[;|]/).map((s) => s.trim()).filter(Boolean)))
    : z.array(z.string(), { error: (issue) => (issue.input === undefined ? undefined : `expected a JSON array of ${accepted}`) }).optional().transform((v) => v ?? [])
  ).pipe(z.array(item));

type TranscriptFormat = 'csv' | 'jsonl';
const GEARS = ['P', 'R', 'N', 'D'] as const;
const ACTIONS_ACCEPTED = `action types among ${ACTION_TYPES.join(', ')}`;
const LABELS_ACCEPTED = `failure labels among ${FailureLabelSchema.options.join(', ')}`;

function transcriptRowSchema(format: TranscriptFormat) {
  return z.strictObject({
    conversation: z.union([z.string(), z.number()]).transform(String).pipe(z.string().min(1, 'expected the conversation id')),
    user: z.string().min(1, "expected the driver's words"),
    reference: z.string().optional(),
    date: z.string().optional(),
    time: z.string().optional(),
    district: z.string().optional(),
    city: z.string().optional(),
    lat: optionalNumber,
    lon: optionalNumber,
    speed_kmh: optionalNumber,
    gear: z.enum([...GEARS, ''], { error: (issue) => `expected one of ${GEARS.join(', ')} (or empty), got ${JSON.stringify(issue.input)}` }).optional(),
    soc_pct: optionalNumber,
    /** action types separated by ";" (CSV) or a list (JSON) */
    expect_actions: listOf(z.enum(ACTION_TYPES as [string, ...string[]], { error: (issue) => `expected ${ACTIONS_ACCEPTED}, got ${JSON.stringify(issue.input)}` }), format, ACTIONS_ACCEPTED),
    /** "all", or failure labels separated by ";" (CSV) or a list (JSON) */
    forbid: z
      .union([z.literal('all'), listOf(z.enum(FailureLabelSchema.options, { error: (issue) => `expected "all" or ${LABELS_ACCEPTED}, got ${JSON.stringify(issue.input)}` }), format, `${LABELS_ACCEPTED} (or "all")`)])
      .optional(),
  });
}
const TranscriptRowSchemas = { csv: transcriptRowSchema('csv'), jsonl: transcriptRowSchema('jsonl') };
type TranscriptRow = z.infer<(typeof TranscriptRowSchemas)['csv']>;

/**
 * A lab's transcripts as a suite: CSV with a header row, or JSON lines (one object a line), one driver turn a
 * row in order, rows grouped by `conversation`. Context columns apply from their row on (empty = unchanged).
 */
export function importTranscripts(path: string, options: { name?: string } = {}): SuiteFile {
  const rows = transcriptRows(path);
  const byId = new Map<string, SuiteConversation>();
  /** each turn's row (file:line), to name it in a problem the suite's own validation finds */
  const rowOf = new Map<string, string[]>();
  for (const { where, row } of rows) {
    const conversation = byId.get(row.conversation) ?? { id: row.conversation, description: '', from: { file: path }, targets: [], turns: [] };
    byId.set(row.conversation, conversation);
    rowOf.set(row.conversation, [...(rowOf.get(row.conversation) ?? []), where]);
    if (conversation.turns.length >= MAX_SUITE_TURNS) throw new TranscriptError(where, `conversation "${row.conversation}" has more than ${MAX_SUITE_TURNS} turns (the most a conversation may have)`);
    const context = contextOf(row);
    const expect = row.expect_actions.length > 0 || row.forbid ? { actions: row.expect_actions, forbid: row.forbid ?? [] } : undefined;
    conversation.turns.push({ user: row.user, ...(context ? { context } : {}), ...(expect ? { expect } : {}), ...(row.reference ? { reference: row.reference } : {}) });
  }
  if (byId.size === 0) throw new TranscriptError(path, 'no rows (expected a header row and one row per driver turn)');
  const conversations = [...byId.values()];
  return checked({ suite: options.name ?? 'transcripts', description: `transcripts imported from ${path}`, conversations }, path, (c, t) => {
    const rows = rowOf.get(conversations[c].id) ?? [path];
    return rows[t ?? 0] ?? rows[0];
  });
}

function contextOf(row: TranscriptRow): SuiteContext | undefined {
  const vehicle = {
    ...(row.speed_kmh !== undefined ? { speedKmh: row.speed_kmh } : {}),
    ...(row.gear ? { gear: row.gear } : {}),
    ...(row.soc_pct !== undefined ? { stateOfChargePct: row.soc_pct } : {}),
  };
  const context: SuiteContext = {
    ...(row.date ? { date: row.date } : {}),
    ...(row.time ? { time: row.time } : {}),
    ...(row.district ? { district: row.district } : {}),
    ...(row.city ? { city: row.city } : {}),
    ...(row.lat !== undefined && row.lon !== undefined ? { position: { lat: row.lat, lon: row.lon } } : {}),
    ...(Object.keys(vehicle).length > 0 ? { vehicle } : {}),
  };
  return Object.keys(context).length > 0 ? context : undefined;
}

function parseRow(value: unknown, where: string, format: TranscriptFormat): TranscriptRow {
  const parsed = TranscriptRowSchemas[format].safeParse(value);
  if (!parsed.success) {
    const issue = innermost(parsed.error.issues[0]);
    const field = issue.path.join('.');
    const message = issue.code === 'unrecognized_keys' ? `unknown column(s) ${issue.keys.join(', ')} (columns: ${TRANSCRIPT_COLUMNS.join(', ')})` : `${field ? `${field}: ` : ''}${issue.message}`;
    throw new TranscriptError(where, message);
  }
  return parsed.data;
}

/** The issue inside a union's (`forbid`: "all" or a list): that of the branch that got furthest, which names the accepted values. */
function innermost(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  const inner = issue.errors.flat().reduce((best, candidate) => (candidate.path.length >= best.path.length ? candidate : best));
  return innermost({ ...inner, path: [...issue.path, ...inner.path] });
}

/**
 * The rows of a transcript file as it is read, a line at a time: JSON lines (a .jsonl/.json name, or a first
 * non-blank line that opens an object), else CSV with a header row.
 */
function* transcriptRows(path: string): Generator<{ where: string; row: TranscriptRow }> {
  const { first, lines } = withFirstLine(readBoundedLines(path, 'transcript file', FILE_LIMITS.transcript));
  const jsonl = /\.jsonl?$/i.test(path) || Boolean(first?.startsWith('{'));
  yield* jsonl ? jsonLines(lines, path) : csvRows(lines, path);
}

function* jsonLines(lines: Iterable<NumberedLine>, path: string): Generator<{ where: string; row: TranscriptRow }> {
  for (const { text, number } of lines) {
    if (!text.trim()) continue;
    const where = `${path}:${number}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new TranscriptError(where, `not a JSON object (${(error as Error).message})`);
    }
    yield { where, row: parseRow(value, where, 'jsonl') };
  }
}

function* csvRows(lines: Iterable<NumberedLine>, path: string): Generator<{ where: string; row: TranscriptRow }> {
  let columns: string[] | null = null;
  try {
    for (const { line, fields } of csvRecords(lines)) {
      if (!columns) {
        columns = fields.map((f) => f.trim().toLowerCase());
        for (const required of ['conversation', 'user']) if (!columns.includes(required)) throw new TranscriptError(`${path}:${line}`, `missing column "${required}" (columns: ${TRANSCRIPT_COLUMNS.join(', ')})`);
        continue;
      }
      const where = `${path}:${line}`;
      // empty cells are absent values: a context column left empty keeps the previous turn's value
      const record = Object.fromEntries(columns.map((c, i) => [c, fields[i]?.trim() ?? '']).filter(([, v]) => v !== ''));
      yield { where, row: parseRow(record, where, 'csv') };
    }
  } catch (error) {
    if (error instanceof CsvError) throw new TranscriptError(`${path}:${error.line}`, error.message);
    throw error;
  }
  if (!columns) throw new TranscriptError(path, 'empty file');
}

function parseJson(path: string): unknown {
  const text = readBoundedText(path, 'transcript file', FILE_LIMITS.transcript);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TranscriptError(path, `not valid JSON (${(error as Error).message})`);
  }
}

/**
 * The imported suite validated like a suite file. A problem found here (a bad date, an unknown district) names
 * the row it came from: `whereOf(conversation, turn)` (the CSV or JSON-lines line, the KVRET dialogue).
 */
function checked(suite: z.input<typeof SuiteFileSchema>, path: string, whereOf: (conversation: number, turn: number | null) => string): SuiteFile {
  const parsed = SuiteFileSchema.safeParse(suite);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const [top, conversation, inner, turn] = issue.path;
    const where = top === 'conversations' && typeof conversation === 'number' ? whereOf(conversation, inner === 'turns' && typeof turn === 'number' ? turn : null) : path;
    throw new TranscriptError(where, `${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}
