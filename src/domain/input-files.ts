import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { z } from 'zod';

/**
 * Reading the files a user hands the bench (configs, seed pools, manuals, task files, test sets, transcripts,
 * ratings, DBC files, …), never more than the size cap of the file's kind. A regular file is refused by its size
 * before a byte of it is read; `/dev/zero`, a pipe or a device is read up to the cap and refused then. Line-based
 * files are read a chunk at a time (readBoundedLines), so their text is never one string. Every cap can be
 * raised for one command by an environment variable the refusal names (docs/configuration.md, "Limits").
 */

/** A configuration or input error: one line `file[:line]: what was wrong`, plus the problems it lists. */
export class ConfigError extends Error {
  constructor(
    message: string,
    /** the problems, one per entry (message lists at most a bounded number of them) */
    readonly problems: readonly ConfigProblem[] = [],
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** One problem in a YAML text: the field path (or "(yaml)" for the text itself), its line and what is wrong. */
export interface ConfigProblem {
  path: string;
  line: number | null;
  message: string;
}

/** The size cap of one kind of input file, and the environment variable that raises it. */
export interface FileLimit {
  readonly defaultMiB: number;
  readonly env: string;
}

const MiB = 1024 * 1024;
/** Files that are not read whole are read this much at a time. */
const LINE_CHUNK_BYTES = 64 * 1024;
const limit = (defaultMiB: number, name: string): FileLimit => ({ defaultMiB, env: `ICABENCH_MAX_${name}_MIB` });

/**
 * Every kind of input file and its cap, in one place (docs/configuration.md, "Limits", has the table and why).
 * Files read whole and parsed as one document (JSON, XML, PDF, YAML) are capped low enough that parsing at the cap
 * stays a small multiple of it; line-based files (JSON lines, CSV, Markdown test sets) are streamed.
 */
export const FILE_LIMITS = {
  /** campaign, suite, scenario, mapping, manifest, judge-bench and manual-QA configs: a page or two of YAML */
  config: limit(1, 'CONFIG'),
  /** a seed pool is indexed by a scan of its bytes, a seed parsed when the sampling reaches it */
  seedPool: limit(64, 'SEED_POOL'),
  /** an owner's-manual file (Markdown, HTML, XML, PDF): a whole manual is a few MB of text */
  manual: limit(16, 'MANUAL'),
  /** a stored manual index (manual-index.json, written by `manual index`): about 5 × its manuals */
  manualIndex: limit(128, 'MANUAL_INDEX'),
  /** a manual-QA test set (JSON lines, streamed) */
  testSet: limit(16, 'TEST_SET'),
  /** a CAR-bench task file (one JSON array; CAR-bench's largest split is under 1 MB) */
  taskFile: limit(16, 'TASK_FILE'),
  /** a transcript file for `suite import` (CSV and JSON lines streamed, KVRET JSON whole) */
  transcript: limit(16, 'TRANSCRIPT'),
  /** a judge-bench dataset (JSON lines, streamed) */
  judgeBenchDataset: limit(16, 'JUDGE_BENCH_DATASET'),
  /** human or judge ratings for `judge-bench --ratings` (CSV streamed, a JSON array whole) */
  ratings: limit(16, 'RATINGS'),
  /** a CAN database (.dbc) */
  dbc: limit(16, 'DBC'),
  /** a voice library's manifest.json, a recogniser vocabulary */
  voiceList: limit(16, 'VOICE_LIST'),
  /** a WAV file to transcribe or check (16 kHz mono: about 35 minutes) */
  wav: limit(64, 'WAV'),
  /** a stored run's summary.json (compare) */
  runSummary: limit(64, 'RUN_SUMMARY'),
} as const satisfies Record<string, FileLimit>;

const MiBSchema = z.coerce.number().finite().positive();

/** The cap in bytes: the environment variable's MiB when it is set (a clear error when it is not a size), else the default. */
export function limitBytes(limit: FileLimit, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[limit.env];
  if (raw === undefined || raw.trim() === '') return limit.defaultMiB * MiB;
  const parsed = MiBSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`${limit.env}: expected a size in MiB above 0 (e.g. ${limit.defaultMiB * 4}), got ${JSON.stringify(raw)}`);
  return Math.floor(parsed.data * MiB);
}

/** 16777217 → "16,777,217" (by hand: toLocaleString would load the locale data, megabytes, on a refusal's path). */
const thousands = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ',');

export function formatBytes(bytes: number): string {
  if (bytes < MiB) return `${thousands(bytes)} bytes`;
  const mib = bytes / MiB;
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
}

/** The refusal of an oversized file: the file, its size (`null`: a stream read past the cap), the cap and how to raise it. */
function tooLarge(path: string, what: string, limit: FileLimit, cap: number, size: number | null): ConfigError {
  const measured = size === null ? `more than ${formatBytes(cap)} (read up to the cap and stopped)` : size < MiB ? formatBytes(size) : `${formatBytes(size)} (${thousands(size)} bytes)`;
  const raiseTo = size === null ? `a larger number of MiB` : String(Math.ceil(size / MiB));
  return new ConfigError(`${path}: the ${what} is ${measured}, larger than the limit of ${formatBytes(cap)} (docs/configuration.md, "Limits"); to read it anyway set ${limit.env}=${raiseTo}`);
}

function openInput(path: string, what: string): number {
  try {
    return openSync(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`${path}: cannot read the ${what}${code === 'ENOENT' ? ' (no such file)' : `: ${(error as Error).message}`}`);
  }
}

function readInto(fd: number, buffer: Buffer, offset: number, path: string, what: string): number {
  try {
    return readSync(fd, buffer, offset, buffer.length - offset, null);
  } catch (error) {
    throw new ConfigError(`${path}: cannot read the ${what}: ${(error as Error).message}`);
  }
}

/** Opens a file and refuses it by its size when it is a regular file over the cap; the caller closes the descriptor. */
function openBounded(path: string, what: string, limit: FileLimit): { fd: number; cap: number; size: number | null } {
  const cap = limitBytes(limit);
  const fd = openInput(path, what);
  const stat = fstatSync(fd);
  if (stat.isFile() && stat.size > cap) {
    closeSync(fd);
    throw tooLarge(path, what, limit, cap, stat.size);
  }
  return { fd, cap, size: stat.isFile() ? stat.size : null };
}

/**
 * Reads a whole file, never more than its kind's cap: a regular file larger than that fails before reading (its
 * size is known); anything else is read up to the cap + 1 byte and fails then. Errors name the file and `what` it is.
 */
export function readBoundedBytes(path: string, what: string, limit: FileLimit): Buffer {
  const { fd, cap, size } = openBounded(path, what, limit);
  try {
    return size !== null ? readRegularFile(fd, size, cap, path, what, limit) : readStream(fd, cap, path, what, limit);
  } finally {
    closeSync(fd);
  }
}

/** A regular file into one buffer of its size (+1 byte, to notice a file that grew past the cap while it was read). */
function readRegularFile(fd: number, size: number, cap: number, path: string, what: string, limit: FileLimit): Buffer {
  const buffer = Buffer.allocUnsafe(size + 1);
  let total = 0;
  while (total < buffer.length) {
    const read = readInto(fd, buffer, total, path, what);
    if (read === 0) return buffer.subarray(0, total);
    total += read;
  }
  throw total > cap ? tooLarge(path, what, limit, cap, null) : new ConfigError(`${path}: the ${what} grew while it was read; read it again once it is written`);
}

/** A stream (a pipe, a device) in chunks kept apart until it ends, so refusing one holds at most the cap, copied never. */
function readStream(fd: number, cap: number, path: string, what: string, limit: FileLimit): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(LINE_CHUNK_BYTES);
    const read = readInto(fd, chunk, 0, path, what);
    if (read === 0) return Buffer.concat(chunks, total);
    total += read;
    if (total > cap) throw tooLarge(path, what, limit, cap, null);
    chunks.push(chunk.subarray(0, read));
  }
}

/** A UTF-16 text (a byte-order mark, or NUL bytes between characters, as Windows editors save "Unicode") is refused by name. */
function refuseUtf16(bytes: Uint8Array, path: string, what: string): void {
  const bom = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
  const littleEndian = bytes.length >= 4 && bytes[0] !== 0 && bytes[1] === 0 && bytes[2] !== 0 && bytes[3] === 0;
  const bigEndian = bytes.length >= 4 && bytes[0] === 0 && bytes[1] !== 0 && bytes[2] === 0 && bytes[3] !== 0;
  if (bom || littleEndian || bigEndian) throw new ConfigError(`${path}: the ${what} is UTF-16 text; icabench reads UTF-8 (save the file as UTF-8)`);
}

function notUtf8(bytes: Uint8Array, from: number, path: string, what: string): ConfigError {
  const offset = firstInvalidUtf8(bytes);
  return new ConfigError(`${path}: the ${what} is not UTF-8 text (invalid byte 0x${bytes[offset].toString(16).padStart(2, '0')} at byte ${from + offset}); save it as UTF-8`);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The UTF-8 text of a file's bytes (a leading byte-order mark dropped); UTF-16 and bytes that are not UTF-8 are errors naming the file. */
export function decodeUtf8(bytes: Uint8Array, path: string, what: string): string {
  refuseUtf16(bytes, path, what);
  try {
    return UTF8.decode(bytes);
  } catch {
    throw notUtf8(bytes, 0, path, what);
  }
}

/** Offset of the first byte that breaks UTF-8 (the decoder only says that one does). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let at = 0; at < bytes.length; ) {
    const byte = bytes[at];
    const length = byte < 0x80 ? 1 : byte >= 0xc2 && byte < 0xe0 ? 2 : byte >= 0xe0 && byte < 0xf0 ? 3 : byte >= 0xf0 && byte < 0xf5 ? 4 : 0;
    if (length === 0) return at;
    for (let k = 1; k < length; k++) if (at + k >= bytes.length || (bytes[at + k] & 0xc0) !== 0x80) return at;
    at += length;
  }
  return 0;
}

/** readBoundedBytes as UTF-8 text (UTF-16 and other encodings are refused by name). */
export function readBoundedText(path: string, what: string, limit: FileLimit): string {
  return decodeUtf8(readBoundedBytes(path, what, limit), path, what);
}

/** One line of a text file, without its line break, and its number from 1. */
export interface NumberedLine {
  text: string;
  number: number;
}


/** A text already in memory as numbered lines, the way readBoundedLines yields a file's. */
export function textLines(text: string): NumberedLine[] {
  return text.split('\n').map((line, i) => ({ text: line.endsWith('\r') ? line.slice(0, -1) : line, number: i + 1 }));
}

/**
 * The first non-blank line of `lines` (which decides a file's format: JSON lines or CSV, an array or rows) and all
 * the lines again, from the first, without reading the file twice.
 */
export function withFirstLine(lines: Iterator<NumberedLine>): { first: string | undefined; lines: Generator<NumberedLine> } {
  const head: NumberedLine[] = [];
  for (let next = lines.next(); !next.done; next = lines.next()) {
    head.push(next.value);
    if (next.value.text.trim()) break;
  }
  const all = function* () {
    yield* head;
    for (let next = lines.next(); !next.done; next = lines.next()) yield next.value;
  };
  return { first: head.at(-1)?.text.trim() || undefined, lines: all() };
}

/**
 * The lines of a UTF-8 file, read a chunk at a time within its kind's cap (refused like readBoundedBytes), so the
 * file is never held whole: the caller keeps what it parses from each line and nothing else. A line ends at "\n"
 * ("\r\n" alike); a final line without a break is a line too.
 */
export function* readBoundedLines(path: string, what: string, limit: FileLimit): Generator<NumberedLine> {
  const { fd, cap } = openBounded(path, what, limit);
  try {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const chunk = Buffer.allocUnsafe(LINE_CHUNK_BYTES);
    let total = 0;
    let pending = '';
    let number = 0;
    for (;;) {
      const read = readInto(fd, chunk, 0, path, what);
      const bytes = chunk.subarray(0, read);
      if (total === 0) refuseUtf16(bytes, path, what);
      total += read;
      if (total > cap) throw tooLarge(path, what, limit, cap, null);
      let text: string;
      try {
        text = decoder.decode(bytes, { stream: read > 0 });
      } catch {
        throw notUtf8(bytes, total - read, path, what);
      }
      // a chunk without a line break only lengthens the line (no copy of what came before)
      if (read > 0 && !text.includes('\n')) {
        pending += text;
        continue;
      }
      const lines = (pending + text).split('\n');
      pending = lines.pop()!;
      if (read === 0 && pending !== '') lines.push(pending);
      for (const line of lines) yield { text: line.endsWith('\r') ? line.slice(0, -1) : line, number: ++number };
      if (read === 0) return;
    }
  } finally {
    closeSync(fd);
  }
}
