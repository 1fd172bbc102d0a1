import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { SerialPort } from 'serialport';
import { z } from 'zod';
import { CANDUMP } from '../../system/programs.ts';
import { hexToBytes, type CanFrame } from '../frames.ts';
import { MAX_LINE_CHARS, parseCandumpLine, streamCandumpLog } from '../transports/candump.ts';
import { parseTransportSpec } from '../transports/index.ts';
import { canInterfaceProblem } from '../transports/socketcan.ts';

/** An observe transport in its parsed form. */
const ParsedObserveTransportSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('replay'), path: z.string().min(1) }),
  z.strictObject({ kind: z.literal('candump'), path: z.string().min(1) }),
  z.strictObject({ kind: z.literal('slcan'), path: z.string().min(1) }),
  z.strictObject({ kind: z.literal('socketcan'), iface: z.string().regex(/^[A-Za-z0-9_.-]{1,15}$/) }),
]);

/**
 * Where the bench listens for the frames a head unit sends (listen-only: nothing is written to the bus):
 * a candump log file that grows as a logger appends to it, a candump -L text stream on a serial line or
 * pseudo-terminal, an SLCAN adapter opened listen-only, a SocketCAN interface through can-utils' candump, or a
 * candump trace recorded earlier and played back (replay:FILE, observation only: nothing can be sent to a recording).
 */
export const ObserveTransportSchema = z.union([z.string(), ParsedObserveTransportSchema]).transform((text, ctx) => {
  // already parsed: a config loaded once whose paths were made absolute (src/run/path-fields.ts), or one that travels as JSON
  if (typeof text !== 'string') return text;
  const replay = /^replay:(.+)$/.exec(text);
  if (replay) return { kind: 'replay' as const, path: replay[1] };
  const spec = parseTransportSpec(text);
  if (!spec || spec.kind === 'bridge' || (spec.kind === 'candump' && !spec.path)) {
    ctx.addIssue({ code: 'custom', message: `expected candump:FILE_OR_TTY, slcan:/dev/ttyX, socketcan:IFACE or replay:FILE (the bridge carries nothing from the unit's bus), got "${text}"` });
    return z.NEVER;
  }
  return spec;
});
export type ObserveTransport = z.output<typeof ObserveTransportSchema>;

export interface FrameSource {
  readonly describe: string;
  /** Frames are handed over as they arrive, in order; problems (junk lines) are counted by the caller. */
  start(onFrame: (frame: CanFrame) => void, onProblem: (problem: string) => void): Promise<void>;
  /** A turn's window has just opened (a recorded trace starts its playback at the first). */
  turnOpened?(): void;
  close(): Promise<void>;
}

/** Splits a text stream into lines (LF or CR), a line kept up to MAX_LINE_CHARS: memory stays bounded whatever arrives. */
export class LineSplitter {
  private pending = '';
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: string): void {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.pending + chunk.slice(start, i);
      this.pending = '';
      start = i + 1;
      if (line.length > 0) this.onLine(line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line);
    }
    this.pending += chunk.slice(start);
    if (this.pending.length > MAX_LINE_CHARS) this.pending = this.pending.slice(0, MAX_LINE_CHARS);
  }
}

/** A candump line as a frame, or the reason it is none. */
function candumpFrame(line: string): CanFrame | string {
  const parsed = parseCandumpLine(line.trim(), 0);
  return 'reason' in parsed ? `"${line.slice(0, 80)}": ${parsed.reason}` : parsed.frame;
}

const SLCAN_FRAME = /^([tT])([0-9A-Fa-f]+)$/;

/**
 * An SLCAN receive line (the adapter's report of a frame on the bus): t<iii><len><data>[tttt] or T<iiiiiiii><len><data>[tttt].
 * Acknowledgements (an empty line, BEL) and other replies carry no frame: null.
 */
export function slcanFrame(line: string): CanFrame | string | null {
  const text = line.replace(/\x07/g, '');
  const m = SLCAN_FRAME.exec(text);
  // acknowledgements and the adapter commands another host wrote to a shared line (C, O, L, Sn) carry no frame
  if (!m) return text === '' || /^(?:[zZCOL]|S\d)$/.test(text) ? null : `"${text.slice(0, 80)}": not an SLCAN frame (t/T line)`;
  const extended = m[1] === 'T';
  const idDigits = extended ? 8 : 3;
  const body = m[2];
  const length = Number.parseInt(body[idDigits] ?? '', 16);
  if (!(length >= 0 && length <= 8)) return `"${text.slice(0, 80)}": bad SLCAN length`;
  const dataHex = body.slice(idDigits + 1, idDigits + 1 + length * 2);
  const rest = body.length - (idDigits + 1 + length * 2);
  const data = hexToBytes(dataHex);
  if (!data || data.length !== length || (rest !== 0 && rest !== 4)) return `"${text.slice(0, 80)}": SLCAN frame of ${length} bytes has ${dataHex.length / 2}`;
  return { id: Number.parseInt(body.slice(0, idDigits), 16), extended, data };
}

async function openSerial(path: string, purpose: string): Promise<SerialPort> {
  // loaded on first use: the native bindings cost every CLI start otherwise
  const { SerialPort } = await import('serialport');
  const port = new SerialPort({ path, baudRate: 115_200, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(new Error(`cannot open ${path} to observe the bus (${purpose}): ${error.message}`)) : resolve())));
  return port;
}

function closeSerial(port: SerialPort | null): Promise<void> {
  return new Promise((resolve) => (port?.isOpen ? port.close(() => resolve()) : resolve()));
}

/** SLCAN bit-rate commands by bit rate (as the sink's). */
const SLCAN_BITRATE: Record<number, string> = { 125_000: 'S4', 250_000: 'S5', 500_000: 'S6', 1_000_000: 'S8' };

/** An SLCAN adapter opened listen-only (L): it reports every frame on the bus and never acknowledges or sends one. */
class SlcanSource implements FrameSource {
  readonly describe: string;
  private port: SerialPort | null = null;
  constructor(private readonly path: string, private readonly bitrate: number) {
    this.describe = `SLCAN ${path} listen-only @ ${bitrate} bit/s`;
  }

  async start(onFrame: (frame: CanFrame) => void, onProblem: (problem: string) => void): Promise<void> {
    const code = SLCAN_BITRATE[this.bitrate];
    if (!code) throw new Error(`SLCAN bit rate ${this.bitrate} is not one of ${Object.keys(SLCAN_BITRATE).join(', ')}`);
    const port = (this.port = await openSerial(this.path, 'SLCAN'));
    const lines = new LineSplitter((line) => {
      const read = slcanFrame(line);
      if (typeof read === 'string') onProblem(read);
      else if (read) onFrame(read);
    });
    port.on('data', (chunk: Buffer) => lines.push(chunk.toString('latin1')));
    port.write(`C\r${code}\rL\r`, 'ascii');
  }

  async close(): Promise<void> {
    if (this.port?.isOpen) this.port.write('C\r', 'ascii');
    await closeSerial(this.port);
  }
}

/** candump -L text on a serial line or pseudo-terminal (a logger on the rig piping `candump -L can0` over). */
class CandumpStreamSource implements FrameSource {
  readonly describe: string;
  private port: SerialPort | null = null;
  constructor(private readonly path: string) {
    this.describe = `candump stream ${path}`;
  }

  async start(onFrame: (frame: CanFrame) => void, onProblem: (problem: string) => void): Promise<void> {
    const port = (this.port = await openSerial(this.path, 'candump stream'));
    const lines = new LineSplitter((line) => {
      const read = candumpFrame(line);
      if (typeof read === 'string') onProblem(read);
      else onFrame(read);
    });
    port.on('data', (chunk: Buffer) => lines.push(chunk.toString('latin1')));
  }

  close(): Promise<void> {
    return closeSerial(this.port);
  }
}

/** How often a growing candump log is read for new lines. */
const TAIL_POLL_MS = 10;

/** A candump log file as a logger appends to it: read from its end at start, new lines as they are written. */
class CandumpFileSource implements FrameSource {
  readonly describe: string;
  private timer: NodeJS.Timeout | null = null;
  private fd: number | null = null;
  constructor(private readonly path: string) {
    this.describe = `candump log ${path} (followed)`;
  }

  async start(onFrame: (frame: CanFrame) => void, onProblem: (problem: string) => void): Promise<void> {
    let fd: number;
    try {
      fd = this.fd = openSync(this.path, 'r');
    } catch (error) {
      throw new Error(`cannot open candump log ${this.path} to observe the bus: ${(error as Error).message}`);
    }
    let offset = statSync(this.path).size;
    const buffer = Buffer.alloc(1 << 16);
    const lines = new LineSplitter((line) => {
      const read = candumpFrame(line);
      if (typeof read === 'string') onProblem(read);
      else onFrame(read);
    });
    const poll = () => {
      for (let n = readSync(fd, buffer, 0, buffer.length, offset); n > 0; n = readSync(fd, buffer, 0, buffer.length, offset)) {
        offset += n;
        lines.push(buffer.toString('latin1', 0, n));
      }
    };
    this.timer = setInterval(poll, TAIL_POLL_MS);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.fd !== null) closeSync(this.fd);
    this.timer = null;
    this.fd = null;
  }
}

/** A SocketCAN interface read through can-utils' candump -L (Node has no CAN sockets); fails clearly where the kernel has none. */
class SocketCanSource implements FrameSource {
  readonly describe: string;
  private child: ChildProcess | null = null;
  constructor(private readonly iface: string) {
    this.describe = `SocketCAN ${iface} (candump)`;
  }

  async start(onFrame: (frame: CanFrame) => void, onProblem: (problem: string) => void): Promise<void> {
    const problem = canInterfaceProblem(this.iface);
    if (problem) throw problem;
    const child = (this.child = spawn(CANDUMP.binary, ['-L', this.iface], { stdio: ['ignore', 'pipe', 'pipe'] }));
    await new Promise<void>((resolve, reject) => {
      child.once('error', (error) => reject(new Error(`cannot start ${CANDUMP.binary} to observe SocketCAN ${this.iface} (install Debian package ${CANDUMP.debianPackage}): ${error.message}`)));
      child.once('spawn', () => resolve());
    });
    const lines = new LineSplitter((line) => {
      const read = candumpFrame(line);
      if (typeof read === 'string') onProblem(read);
      else onFrame(read);
    });
    child.stdout!.setEncoding('latin1').on('data', (chunk: string) => lines.push(chunk));
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

/**
 * A candump trace recorded earlier (absolute or relative timestamps), played back in real time: its first frame is
 * delivered when the first turn's window opens, every later one at its recorded distance from the first. Turns are
 * not re-aligned after that (docs/bus-observation.md, "Replaying a recorded trace").
 */
class ReplaySource implements FrameSource {
  readonly describe: string;
  private frames: Array<{ offsetMs: number; frame: CanFrame }> = [];
  private next = 0;
  private playingSince: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private deliver: (frame: CanFrame) => void = () => undefined;
  constructor(private readonly path: string) {
    this.describe = `replay of ${path}`;
  }

  async start(onFrame: (frame: CanFrame) => void, onProblem: (problem: string) => void): Promise<void> {
    let first: number | null = null;
    try {
      await streamCandumpLog(this.path, {
        entry: ({ frame }) => {
          first ??= frame.t;
          this.frames.push({ offsetMs: (frame.t - first) * 1000, frame: { id: frame.id, extended: frame.extended, data: frame.data } });
        },
        problem: (p) => onProblem(`${this.path}:${p.line}: "${p.text}": ${p.reason}`),
      });
    } catch (error) {
      throw new Error(`cannot replay the recorded trace ${this.path}: ${(error as Error).message}`);
    }
    if (this.frames.length === 0) throw new Error(`cannot replay the recorded trace ${this.path}: it holds no candump frame ("(seconds.micros) iface ID#HEXDATA" lines)`);
    this.deliver = onFrame;
  }

  turnOpened(): void {
    if (this.playingSince !== null) return;
    this.playingSince = performance.now();
    this.play();
  }

  /** Delivers every frame that is due, then sleeps until the next one. */
  private play(): void {
    const elapsed = performance.now() - this.playingSince!;
    while (this.next < this.frames.length && this.frames[this.next].offsetMs <= elapsed) this.deliver(this.frames[this.next++].frame);
    if (this.next < this.frames.length) this.timer = setTimeout(() => this.play(), this.frames[this.next].offsetMs - elapsed);
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** The source a transport names: a regular file is followed as a log, a character device read as a stream. */
export function openFrameSource(spec: ObserveTransport, options: { bitrate?: number } = {}): FrameSource {
  switch (spec.kind) {
    case 'candump': {
      const path = spec.path!;
      let isFile = false;
      try {
        isFile = statSync(path).isFile();
      } catch (error) {
        throw new Error(`cannot observe the bus on ${path}: ${(error as Error).message}`);
      }
      return isFile ? new CandumpFileSource(path) : new CandumpStreamSource(path);
    }
    case 'slcan':
      return new SlcanSource(spec.path, options.bitrate ?? 500_000);
    case 'socketcan':
      return new SocketCanSource(spec.iface);
    case 'replay':
      return new ReplaySource(spec.path);
  }
}
