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

/**
 * A decoded physical value. Integer signals wider than 53 bits whose factor and offset are integers (serial numbers,
 * counters, checksums) are exact bigints; every other signal is a number (a scaled or narrower value fits a double).
 */
export type SignalValue = number | bigint;

export interface OutOfRangeValue {
  signal: string;
  value: SignalValue;
  minimum: number;
  maximum: number;
}

export interface DecodedFrame {
  message: DbcMessage;
  /** physical values (raw * factor + offset) of every signal present in this frame; see SignalValue */
  signals: Record<string, SignalValue>;
  /** value-table labels (VAL_) of the signals whose raw value has one */
  labels: Record<string, string>;
  /** signals decoded outside their declared [minimum|maximum]; reported, their values kept as decoded */
  outOfRange: OutOfRangeValue[];
}

export type FrameProblem = 'unknown_id' | 'length_mismatch';
export type DecodeOutcome = { ok: true; frame: DecodedFrame } | { ok: false; problem: FrameProblem; detail: string };

const POW2: number[] = Array.from({ length: 54 }, (_, i) => 2 ** i);
/** above this many bits a raw value no longer fits a double exactly: such signals are read and written as bigints */
const MAX_NUMBER_BITS = 53;

function isWide(signal: DbcSignal): boolean {
  return signal.valueType === 'integer' && signal.length > MAX_NUMBER_BITS;
}

/** True when the signal's physical values are exact bigints: a wide integer signal with an integer factor and offset. */
export function isExactBigIntSignal(signal: DbcSignal): boolean {
  return isWide(signal) && Number.isSafeInteger(signal.factor) && Number.isSafeInteger(signal.offset);
}

/** The raw integer range a signal can carry: numbers up to 53 bits, bigints above (exact either way). */
export function rawRange(signal: DbcSignal): { min: number; max: number } | { min: bigint; max: bigint } {
  if (signal.valueType !== 'integer') return { min: -Infinity, max: Infinity };
  if (signal.length > MAX_NUMBER_BITS) {
    const bits = BigInt(signal.length);
    return signal.signed ? { min: -(1n << (bits - 1n)), max: (1n << (bits - 1n)) - 1n } : { min: 0n, max: (1n << bits) - 1n };
  }
  return signal.signed ? { min: -(2 ** (signal.length - 1)), max: 2 ** (signal.length - 1) - 1 } : { min: 0, max: 2 ** signal.length - 1 };
}

/**
 * The physical range a signal can carry (raw range scaled) as numbers, whatever the declared range says. Above 53 bits
 * the raw maximum 2^n - 1 is taken as the largest double below 2^n, so every number in the range can be encoded.
 */
export function representableRange(signal: DbcSignal): { min: number; max: number } {
  const raw = rawRange(signal);
  const bits = signal.signed ? signal.length - 1 : signal.length;
  const rawMax = typeof raw.max === 'bigint' ? 2 ** bits - 2 ** (bits - MAX_NUMBER_BITS) : raw.max;
  const a = Number(raw.min) * signal.factor + signal.offset;
  const b = rawMax * signal.factor + signal.offset;
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

/** The two's-complement reading of an integer signal's unsigned raw bits. */
function signedRaw(signal: DbcSignal, unsigned: number | bigint): number | bigint {
  if (typeof unsigned === 'bigint') {
    return signal.signed && unsigned >> BigInt(signal.length - 1) ? unsigned - (1n << BigInt(signal.length)) : unsigned;
  }
  return signal.signed && unsigned >= POW2[signal.length - 1] ? unsigned - POW2[signal.length] : unsigned;
}

function rawToPhysical(signal: DbcSignal, unsigned: number | bigint): SignalValue {
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
  const raw = signedRaw(signal, unsigned);
  if (typeof raw === 'bigint' && isExactBigIntSignal(signal)) return raw * BigInt(signal.factor) + BigInt(signal.offset);
  return Number(raw) * signal.factor + signal.offset;
}

/** The unsigned bit pattern of an integer raw value, after checking it fits the signal. */
function toUnsigned(message: DbcMessage, signal: DbcSignal, raw: number | bigint, physical: SignalValue | string): number | bigint {
  const range = rawRange(signal);
  if (raw < range.min || raw > range.max) {
    const phys = representableRange(signal);
    throw new EncodeError(message.name, signal.name, `value ${physical} does not fit ${signal.length} ${signal.signed ? 'signed' : 'unsigned'} bits (representable ${phys.min}..${phys.max})`);
  }
  if (signal.length > MAX_NUMBER_BITS) {
    const big = BigInt(raw);
    return big < 0n ? big + (1n << BigInt(signal.length)) : big;
  }
  const small = Number(raw);
  return small < 0 ? small + POW2[signal.length] : small;
}

/**
 * The integer raw value of a signal from its physical value (may be a VAL_ label); throws EncodeError instead of
 * clipping. A bigint value is taken exactly: it must be an integer signal and (value - offset) a multiple of the factor.
 */
export function physicalToRaw(message: DbcMessage, signal: DbcSignal, value: SignalValue | string): number | bigint {
  if (typeof value === 'string') {
    const entry = [...signal.valueTable].find(([, label]) => label === value);
    if (!entry) {
      throw new EncodeError(message.name, signal.name, `label "${value}" is not in its value table (${[...signal.valueTable.values()].join(', ') || 'none'})`);
    }
    return toUnsigned(message, signal, signal.length > MAX_NUMBER_BITS ? BigInt(entry[0]) : entry[0], value);
  }
  const declared = signal.minimum !== undefined && signal.maximum !== undefined;
  if (typeof value === 'bigint') {
    if (signal.valueType !== 'integer') throw new EncodeError(message.name, signal.name, `exact integer ${value} given for a ${signal.valueType} signal`);
    if (!Number.isSafeInteger(signal.factor) || !Number.isSafeInteger(signal.offset)) {
      throw new EncodeError(message.name, signal.name, `exact integer ${value} given, but factor ${signal.factor} and offset ${signal.offset} are not both integers`);
    }
    if (declared && (value < signal.minimum! || value > signal.maximum!)) {
      throw new EncodeError(message.name, signal.name, `value ${value} is outside its declared range [${signal.minimum}|${signal.maximum}]`);
    }
    const shifted = value - BigInt(signal.offset);
    const factor = BigInt(signal.factor);
    if (shifted % factor !== 0n) throw new EncodeError(message.name, signal.name, `value ${value} minus offset ${signal.offset} is not a multiple of factor ${signal.factor}`);
    const raw = shifted / factor;
    return toUnsigned(message, signal, signal.length > MAX_NUMBER_BITS ? raw : Number(raw), value);
  }
  const physical = value;
  if (!Number.isFinite(physical)) throw new EncodeError(message.name, signal.name, `value ${physical} is not a finite number`);
  if (declared && (physical < signal.minimum! || physical > signal.maximum!)) {
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
  return toUnsigned(message, signal, signal.length > MAX_NUMBER_BITS ? BigInt(raw) : raw, physical);
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
  encode(messageName: string, values: Record<string, SignalValue | string>): Uint8Array {
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
        const key = Number(signedRaw(signal, unsigned));
        const label = Number.isSafeInteger(key) ? signal.valueTable.get(key) : undefined;
        if (label !== undefined) decoded.labels[signal.name] = label;
      }
      if (signal.minimum !== undefined && signal.maximum !== undefined && (value < signal.minimum || value > signal.maximum)) {
        decoded.outOfRange.push({ signal: signal.name, value, minimum: signal.minimum, maximum: signal.maximum });
      }
    }
    return { ok: true, frame: decoded };
  }
}
