/** What a parsed DBC file contains. Produced only by parseDbc, which validates every field. */

export type ByteOrder = 'little_endian' | 'big_endian';
export type SignalValueType = 'integer' | 'float32' | 'float64';

export interface DbcSignal {
  name: string;
  /** the start bit exactly as written in the file (LSB for Intel, MSB in sawtooth numbering for Motorola) */
  startBit: number;
  length: number;
  byteOrder: ByteOrder;
  signed: boolean;
  valueType: SignalValueType;
  factor: number;
  offset: number;
  /** declared physical range; undefined unless minimum < maximum ([0|0] means none; inverted ranges occur in real files) */
  minimum: number | undefined;
  maximum: number | undefined;
  unit: string;
  receivers: string[];
  /** 'multiplexer' is the M switch; a number means "present only when the switch has this value" */
  multiplex: 'multiplexer' | number | undefined;
  valueTable: Map<number, string>;
  comment: string | undefined;
  /** frame bit positions (byte*8 + bit, bit 0 = LSB of the byte) from the signal's MSB to its LSB */
  bitPositions: number[];
  /** source line, for error messages */
  line: number;
}

export interface DbcMessage {
  /** identifier without the extended flag */
  id: number;
  extended: boolean;
  name: string;
  length: number;
  transmitter: string;
  signals: DbcSignal[];
  /** from BA_ "GenMsgCycleTime" (or its BA_DEF_DEF_ default); undefined when the file has none */
  cycleTimeMs: number | undefined;
  comment: string | undefined;
  line: number;
}

export interface DbcDatabase {
  /** file name (or label) the database was parsed from; used in messages */
  source: string;
  version: string;
  nodes: string[];
  messages: DbcMessage[];
  comment: string | undefined;
  /** file:line notes on statements that refer to a message or signal the file does not define (they are ignored) */
  warnings: string[];
}

/** key for message lookup by identifier: extended identifiers are tagged like in the DBC file (bit 31) */
export function frameKey(id: number, extended: boolean): number {
  return extended ? id + 0x80000000 : id;
}
