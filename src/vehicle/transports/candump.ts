import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import type { TimedFrame } from '../frames.ts';
import { bytesToHex, hexToBytes, MAX_EXTENDED_ID, MAX_FRAME_BYTES, MAX_STANDARD_ID } from '../frames.ts';
import type { FrameSink } from './sink.ts';
import { escapeExcerpt, MAX_EXCERPT_CHARS } from '../logSummary.ts';

/**
 * The can-utils log format (candump -l / -L, canplayer, log2asc):
 *   (1700000000.123456) can0 123#DEADBEEF        classic frame, 3 hex digits = standard id
 *   (1700000000.123456) can0 12345678#DEADBEEF   8 hex digits = extended id
 *   (1700000000.123456) can0 123##0DEADBEEF...   CAN FD (flags nibble after ##)
 */
export interface CandumpEntry {
  frame: TimedFrame;
  iface: string;
  line: number;
}

export interface CandumpProblem {
  line: number;
  /** the line as read, escaped and shortened for printing (see escapeExcerpt) */
  text: string;
  reason: string;
}

const LINE = /^\((\d+\.\d{6})\)\s+(\S+)\s+([0-9A-Fa-f]+)#(#[0-9A-Fa-f])?([0-9A-Fa-f]*)(?:\s+[RT])?\s*$/;

export function formatCandumpLine(frame: TimedFrame, iface = 'can0'): string {
  const id = frame.extended ? frame.id.toString(16).toUpperCase().padStart(8, '0') : frame.id.toString(16).toUpperCase().padStart(3, '0');
  const separator = frame.data.length > 8 ? '##0' : '#';
  return `(${frame.t.toFixed(6)}) ${iface} ${id}${separator}${bytesToHex(frame.data)}`;
}

/** Parses one log line; returns the reason when it is not a frame this bench understands. */
export function parseCandumpLine(text: string, line: number): CandumpEntry | { reason: string } {
  const m = LINE.exec(text);
  if (!m) return { reason: 'expected "(seconds.micros) iface ID#HEXDATA"' };
  const [, time, iface, idHex, fdFlags, dataHex] = m;
  if (idHex.length !== 3 && idHex.length !== 8) return { reason: `id "${idHex}" must have 3 (standard) or 8 (extended) hex digits` };
  const extended = idHex.length === 8;
  const id = parseInt(idHex, 16);
  if (id > (extended ? MAX_EXTENDED_ID : MAX_STANDARD_ID)) return { reason: `id 0x${idHex} is beyond the ${extended ? '29' : '11'}-bit range` };
  const data = hexToBytes(dataHex);
  if (!data) return { reason: `data "${dataHex}" is not whole bytes of hex` };
  if (data.length > (fdFlags ? MAX_FRAME_BYTES : 8)) return { reason: `${data.length} data bytes is more than a ${fdFlags ? 'CAN FD' : 'classic CAN'} frame holds` };
  return { frame: { t: Number(time), id, extended, data }, iface, line };
}

/** One line of a log file as read (without its newline): an entry, a problem, or nothing for a blank line. */
function readLogLine(raw: string, line: number): CandumpEntry | CandumpProblem | null {
  const lineText = raw.replace(/\r$/, '');
  if (lineText.trim() === '') return null;
  if (lineText.length > MAX_LINE_CHARS) return { line, text: escapeExcerpt(lineText), reason: `line longer than ${MAX_LINE_CHARS} characters` };
  const parsed = parseCandumpLine(lineText, line);
  return 'reason' in parsed ? { line, text: escapeExcerpt(lineText), reason: parsed.reason } : parsed;
}

/** No candump line comes near this; a longer one is junk, and the streaming reader stops buffering it here. */
export const MAX_LINE_CHARS = 4096;
/** A line this long is not a log at all: the streaming reader stops with an error instead of reading on. */
export const MAX_JUNK_LINE_CHARS = 1 << 20;

/**
 * Streams a candump log line by line to the handlers, in file order (blank lines skipped, CRLF accepted). Memory
 * stays bounded whatever the file holds: a line is buffered up to MAX_LINE_CHARS, beyond that only counted, and a
 * line longer than MAX_JUNK_LINE_CHARS stops the read with an error (an endless input such as /dev/zero ends).
 */
export async function streamCandumpLog(
  path: string,
  handlers: {
    entry(entry: CandumpEntry): void;
    problem(problem: CandumpProblem): void;
    /** called after each chunk of the file (about 64 KB), e.g. to write output and wait for the consumer */
    afterChunk?(): Promise<void>;
  },
): Promise<void> {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 16 });
  let pending = '';
  /** characters of the current line dropped because it passed MAX_LINE_CHARS */
  let dropped = 0;
  let line = 0;
  const emit = (raw: string) => {
    line++;
    if (dropped > 0) {
      handlers.problem({ line, text: escapeExcerpt(raw, MAX_EXCERPT_CHARS, dropped), reason: `line longer than ${MAX_LINE_CHARS} characters` });
      dropped = 0;
      return;
    }
    const read = readLogLine(raw, line);
    if (read && 'frame' in read) handlers.entry(read);
    else if (read) handlers.problem(read);
  };
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = 0;
      for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
        emit(pending + chunk.slice(start, nl));
        pending = '';
        start = nl + 1;
      }
      pending += chunk.slice(start);
      if (pending.length > MAX_LINE_CHARS) {
        dropped += pending.length - MAX_LINE_CHARS;
        pending = pending.slice(0, MAX_LINE_CHARS);
        // an endless line (/dev/zero, a binary blob) would be read forever: no candump log has one
        if (dropped > MAX_JUNK_LINE_CHARS) {
          stream.destroy();
          throw new Error(`${path}:${line + 1}: a line of more than ${MAX_JUNK_LINE_CHARS} characters without a newline: not a candump log (stopped reading)`);
        }
      }
      await handlers.afterChunk?.();
    }
  } catch (error) {
    // the file's own errors (missing, a directory, unreadable) name it; errors of the handlers pass as they are
    const syscall = (error as NodeJS.ErrnoException).syscall;
    if (syscall === 'open' || syscall === 'read') throw new Error(`cannot read candump log ${path}: ${(error as Error).message}`);
    throw error;
  }
  if (pending !== '' || dropped > 0) emit(pending);
}

/** Reads a whole candump log (streamed, so an endless or binary file fails early); problems come with line numbers. */
export async function readCandumpLog(path: string): Promise<{ entries: CandumpEntry[]; problems: CandumpProblem[] }> {
  const entries: CandumpEntry[] = [];
  const problems: CandumpProblem[] = [];
  await streamCandumpLog(path, { entry: (e) => entries.push(e), problem: (p) => problems.push(p) });
  return { entries, problems };
}

/** Writes frames as candump log lines to a file (or any writable stream, e.g. stdout). */
export class CandumpFileSink implements FrameSink {
  readonly describe: string;
  private readonly stream: NodeJS.WritableStream;
  private readonly ownsStream: boolean;

  constructor(target: string | NodeJS.WritableStream, private readonly iface = 'can0') {
    if (typeof target === 'string') {
      this.stream = createWriteStream(target, { encoding: 'utf8' });
      this.describe = `candump log ${target}`;
      this.ownsStream = true;
    } else {
      this.stream = target;
      this.describe = 'candump log (stream)';
      this.ownsStream = false;
    }
  }

  send(frames: readonly TimedFrame[]): Promise<void> {
    if (frames.length === 0) return Promise.resolve();
    let text = '';
    for (const frame of frames) text += formatCandumpLine(frame, this.iface) + '\n';
    return new Promise((resolve, reject) => {
      this.stream.write(text, (error) => (error ? reject(new Error(`${this.describe}: ${error.message}`)) : resolve()));
    });
  }

  close(): Promise<void> {
    if (!this.ownsStream) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const stream = this.stream as WriteStream;
      stream.once('error', reject);
      stream.end(() => resolve());
    });
  }
}
