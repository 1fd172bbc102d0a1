import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import type { TimedFrame } from '../frames.ts';
import { bytesToHex, hexToBytes, MAX_EXTENDED_ID, MAX_FRAME_BYTES, MAX_STANDARD_ID } from '../frames.ts';
import type { FrameSink } from './sink.ts';
import { escapeExcerpt } from '../logSummary.ts';

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

/** Reads a candump log; corrupt lines are returned as problems with their line number, the rest is kept. */
export function parseCandumpLog(text: string): { entries: CandumpEntry[]; problems: CandumpProblem[] } {
  const entries: CandumpEntry[] = [];
  const problems: CandumpProblem[] = [];
  text.split('\n').forEach((raw, index) => {
    const lineText = raw.replace(/\r$/, '');
    if (lineText.trim() === '') return;
    const parsed = parseCandumpLine(lineText, index + 1);
    if ('reason' in parsed) problems.push({ line: index + 1, text: escapeExcerpt(lineText), reason: parsed.reason });
    else entries.push(parsed);
  });
  return { entries, problems };
}

export function readCandumpLog(path: string): { entries: CandumpEntry[]; problems: CandumpProblem[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read candump log ${path}: ${(error as Error).message}`);
  }
  return parseCandumpLog(text);
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
