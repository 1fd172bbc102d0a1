import type { CanFrame } from '../frames.ts';
import { bytesToHex } from '../frames.ts';
import type { DbcDatabase, DbcMessage, DbcSignal } from './types.ts';
import { frameKey } from './types.ts';

/** A value that cannot be put into a frame as asked; never clipped silently. */
export class EncodeError extends Error {
  constructor(
    readonly messageName: string,
    readonly signal: string | undefined,
    detail: string,
  ) {
    super(`${messageName}${signal ? `.${signal}` : ''}: ${detail}`);
    this.name = 'EncodeError';
  }
}

export interface OutOfRangeValue {
  signal: string;
  value: number;
  minimum: number;
  maximum: number;
}

export interface DecodedFrame {
  message: DbcMessage;
  /** physical values (raw * factor + offset) of every signal present in this frame */
  signals: Record<string, number>;
  /** value-table labels (VAL_) of the signals whose raw value has one */
  labels: Record<string, string>;
  /** signals decoded outside their declared [minimum|maximum]; reported, their values kept as decoded */
  outOfRange: OutOfRangeValue[];
}

export type FrameProblem = 'unknown_id' | 'length_mismatch';
export type DecodeOutcome = { ok: true; frame: DecodedFrame } | { ok: false; problem: FrameProblem; detail: string };

const POW2: number[] = Array.from({ length: 54 }, (_, i) => 2 ** i);
/** above this many bits a raw value no longer fits a double exactly */
const MAX_NUMBER_BITS = 53;

/** 2^bits - 1, or the largest double below 2^bits when that is not exact (signals wider than 53 bits) */
function maxBelowPowerOfTwo(bits: number): number {
  return bits <= MAX_NUMBER_BITS ? 2 ** bits - 1 : 2 ** bits - 2 ** (bits - MAX_NUMBER_BITS);
}

/** The raw integer range a signal can carry, as JavaScript numbers hold it exactly. */
export function rawRange(signal: DbcSignal): { min: number; max: number } {
  if (signal.valueType !== 'integer') return { min: -Infinity, max: Infinity };
  return signal.signed
    ? { min: -(2 ** (signal.length - 1)), max: maxBelowPowerOfTwo(signal.length - 1) }
    : { min: 0, max: maxBelowPowerOfTwo(signal.length) };
}

/** The physical range a signal can carry (raw range scaled), whatever the declared range says. */
export function representableRange(signal: DbcSignal): { min: number; max: number } {
  const raw = rawRange(signal);
  const a = raw.min * signal.factor + signal.offset;
  const b = raw.max * signal.factor + signal.offset;
  return { min: Math.min(a, b), max: Math.max(a, b) };
}

function readRaw(data: Uint8Array, signal: DbcSignal): number | bigint {
  const positions = signal.bitPositions;
  if (signal.length <= MAX_NUMBER_BITS) {
    let raw = 0;
    for (const p of positions) raw = raw * 2 + ((data[p >> 3] >> (p & 7)) & 1);
    return raw;
  }
  let raw = 0n;
  for (const p of positions) raw = (raw << 1n) | BigInt((data[p >> 3] >> (p & 7)) & 1);
  return raw;
}

function writeRaw(data: Uint8Array, signal: DbcSignal, unsigned: number | bigint): void {
  const positions = signal.bitPositions;
  const n = signal.length;
  for (let k = 0; k < n; k++) {
    // positions run MSB first, so bit k of the value sits at positions[n - 1 - k]
    const bit = typeof unsigned === 'bigint' ? Number((unsigned >> BigInt(k)) & 1n) : Math.floor(unsigned / POW2[k]) % 2;
    const p = positions[n - 1 - k];
    if (bit) data[p >> 3] |= 1 << (p & 7);
    else data[p >> 3] &= ~(1 << (p & 7));
  }
}

function rawToPhysical(signal: DbcSignal, unsigned: number | bigint): number {
  if (signal.valueType === 'float32') {
    const view = new DataView(new ArrayBuffer(4));
    view.setUint32(0, Number(unsigned));
    return view.getFloat32(0) * signal.factor + signal.offset;
  }
  if (signal.valueType === 'float64') {
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, BigInt(unsigned));
    return view.getFloat64(0) * signal.factor + signal.offset;
  }
  let raw: number;
  if (typeof unsigned === 'bigint') {
    const signedRaw = signal.signed && unsigned >> BigInt(signal.length - 1) ? unsigned - (1n << BigInt(signal.length)) : unsigned;
    raw = Number(signedRaw);
  } else {
    raw = signal.signed && unsigned >= POW2[signal.length - 1] ? unsigned - POW2[signal.length] : unsigned;
  }
  return raw * signal.factor + signal.offset;
}

/** The integer raw value of a signal from its physical value (may be a VAL_ label); throws EncodeError instead of clipping. */
export function physicalToRaw(message: DbcMessage, signal: DbcSignal, value: number | string): number | bigint {
  if (typeof value === 'string') {
    const entry = [...signal.valueTable].find(([, label]) => label === value);
    if (!entry) {
      throw new EncodeError(message.name, signal.name, `label "${value}" is not in its value table (${[...signal.valueTable.values()].join(', ') || 'none'})`);
    }
    const raw = entry[0];
    return signal.signed && raw < 0 ? (signal.length <= MAX_NUMBER_BITS ? raw + POW2[signal.length] : BigInt(raw) + (1n << BigInt(signal.length))) : raw;
  }
  const physical = value;
  if (!Number.isFinite(physical)) throw new EncodeError(message.name, signal.name, `value ${physical} is not a finite number`);
  if (signal.minimum !== undefined && signal.maximum !== undefined && (physical < signal.minimum || physical > signal.maximum)) {
    throw new EncodeError(message.name, signal.name, `value ${physical} is outside its declared range [${signal.minimum}|${signal.maximum}]`);
  }
  const scaled = (physical - signal.offset) / signal.factor;
  if (signal.valueType === 'float32') {
    const view = new DataView(new ArrayBuffer(4));
    view.setFloat32(0, scaled);
    return view.getUint32(0);
  }
  if (signal.valueType === 'float64') {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, scaled);
    return view.getBigUint64(0);
  }
  const raw = Math.round(scaled);
  const range = rawRange(signal);
  if (raw < range.min || raw > range.max) {
    const phys = representableRange(signal);
    throw new EncodeError(message.name, signal.name, `value ${physical} does not fit ${signal.length} ${signal.signed ? 'signed' : 'unsigned'} bits (representable ${phys.min}..${phys.max})`);
  }
  if (signal.length > MAX_NUMBER_BITS) {
    const big = BigInt(raw);
    return big < 0n ? big + (1n << BigInt(signal.length)) : big;
  }
  return raw < 0 ? raw + POW2[signal.length] : raw;
}

/** Encodes and decodes frames of one DBC, bit-exactly. */
export class DbcCodec {
  private readonly byKey = new Map<number, DbcMessage>();
  private readonly byName = new Map<string, DbcMessage>();
  /** per message: signals by name and the multiplexer, built once (encoding runs thousands of times a second) */
  private readonly layouts = new Map<DbcMessage, { byName: Map<string, DbcSignal>; switchSignal: DbcSignal | undefined }>();

  constructor(readonly db: DbcDatabase) {
    for (const message of db.messages) {
      this.byKey.set(frameKey(message.id, message.extended), message);
      this.byName.set(message.name, message);
    }
  }

  /** A message by name or by id; throws naming the DBC when it has none. */
  message(nameOrId: string | number): DbcMessage {
    const message = typeof nameOrId === 'number' ? this.byKey.get(nameOrId) : this.byName.get(nameOrId);
    if (!message) throw new Error(`${this.db.source}: no message ${typeof nameOrId === 'number' ? `with id ${nameOrId}` : `named ${nameOrId}`}`);
    return message;
  }

  private layoutOf(message: DbcMessage): { byName: Map<string, DbcSignal>; switchSignal: DbcSignal | undefined } {
    let layout = this.layouts.get(message);
    if (!layout) {
      layout = { byName: new Map(message.signals.map((s) => [s.name, s])), switchSignal: message.signals.find((s) => s.multiplex === 'multiplexer') };
      this.layouts.set(message, layout);
    }
    return layout;
  }

  signal(messageName: string, signalName: string): DbcSignal {
    const message = this.message(messageName);
    const signal = message.signals.find((s) => s.name === signalName);
    if (!signal) throw new Error(`${this.db.source}: message ${messageName} has no signal ${signalName}`);
    return signal;
  }

  /**
   * Builds the data bytes of a message. Signals left out are sent as raw 0. In a multiplexed message only the
   * signals of the multiplexer value given are encoded; giving one of another value is an error.
   */
  encode(messageName: string, values: Record<string, number | string>): Uint8Array {
    const message = this.message(messageName);
    const layout = this.layoutOf(message);
    const data = new Uint8Array(message.length);
    let muxValue: number | undefined;
    if (layout.switchSignal) {
      const given = values[layout.switchSignal.name];
      muxValue = given === undefined ? 0 : Number(physicalToRaw(message, layout.switchSignal, given));
    }
    for (const name in values) {
      const signal = layout.byName.get(name);
      if (!signal) throw new EncodeError(message.name, name, `no such signal in ${this.db.source}`);
      const value = values[name];
      if (value === undefined) continue;
      if (typeof signal.multiplex === 'number' && signal.multiplex !== muxValue) {
        throw new EncodeError(message.name, signal.name, `present only when ${layout.switchSignal!.name} = ${signal.multiplex}, but it is ${muxValue}`);
      }
      writeRaw(data, signal, physicalToRaw(message, signal, value));
    }
    return data;
  }

  /** Decodes a frame; an unknown id or a length that differs from the DBC's is rejected, never guessed. */
  decode(frame: CanFrame): DecodeOutcome {
    const message = this.byKey.get(frameKey(frame.id, frame.extended));
    const idText = `0x${frame.id.toString(16).toUpperCase()}${frame.extended ? ' (extended)' : ''}`;
    if (!message) return { ok: false, problem: 'unknown_id', detail: `id ${idText} is not in ${this.db.source}` };
    if (frame.data.length !== message.length) {
      return {
        ok: false,
        problem: 'length_mismatch',
        detail: `${message.name} (id ${idText}) has ${message.length} bytes in ${this.db.source}, frame has ${frame.data.length} (${bytesToHex(frame.data)})`,
      };
    }
    const { switchSignal } = this.layoutOf(message);
    const muxValue = switchSignal ? Number(readRaw(frame.data, switchSignal)) : undefined;
    const decoded: DecodedFrame = { message, signals: {}, labels: {}, outOfRange: [] };
    for (const signal of message.signals) {
      if (typeof signal.multiplex === 'number' && signal.multiplex !== muxValue) continue;
      const unsigned = readRaw(frame.data, signal);
      const value = rawToPhysical(signal, unsigned);
      decoded.signals[signal.name] = value;
      if (signal.valueTable.size > 0 && signal.valueType === 'integer') {
        const rawInt = Math.round((value - signal.offset) / signal.factor);
        const label = signal.valueTable.get(rawInt);
        if (label !== undefined) decoded.labels[signal.name] = label;
      }
      if (signal.minimum !== undefined && signal.maximum !== undefined && (value < signal.minimum || value > signal.maximum)) {
        decoded.outOfRange.push({ signal: signal.name, value, minimum: signal.minimum, maximum: signal.maximum });
      }
    }
    return { ok: true, frame: decoded };
  }
}
