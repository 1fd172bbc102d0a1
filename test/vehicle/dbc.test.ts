import { describe, expect, it } from 'vitest';
import { DbcParseError, loadDbc, parseDbc, signalBitPositions } from '../../src/vehicle/dbc/parser.ts';
import { DbcCodec, EncodeError, rawRange, representableRange } from '../../src/vehicle/dbc/codec.ts';
import type { DbcSignal } from '../../src/vehicle/dbc/types.ts';
import { OPENDBC_FILES, opendbcPath } from './helpers.ts';
import { createRng } from '../../src/domain/rng.ts';

const bytes = (...values: number[]) => Uint8Array.from(values);
const codecOf = (file: string) => new DbcCodec(loadDbc(opendbcPath(file)));

describe('DBC parser on the opendbc files', () => {
  it('parses all four files with every message and signal', () => {
    const counts = Object.fromEntries(
      OPENDBC_FILES.map((file) => {
        const db = loadDbc(opendbcPath(file));
        return [file, [db.messages.length, db.messages.reduce((n, m) => n + m.signals.length, 0)]];
      }),
    );
    // signal totals cross-checked with `grep -c ' SG_ '` on each file
    expect(counts).toEqual({
      'toyota_prius_2010_pt.dbc': [26, 78],
      'hyundai_2015_ccan.dbc': [113, 1154],
      'tesla_can.dbc': [44, 572],
      'gm_global_a_high_voltage_management.dbc': [12, 125],
    });
  });

  it('reads units, factor/offset, ranges, value tables, comments, receivers and multiplexing', () => {
    const prius = loadDbc(opendbcPath('toyota_prius_2010_pt.dbc'));
    const speed = prius.messages.find((m) => m.name === 'SPEED')!;
    expect(speed.id).toBe(180);
    expect(speed.length).toBe(8);
    const speedSignal = speed.signals.find((s) => s.name === 'SPEED')!;
    expect(speedSignal).toMatchObject({ startBit: 47, length: 16, byteOrder: 'big_endian', signed: false, factor: 0.0062, offset: 0, minimum: 0, maximum: 115, unit: 'mph', receivers: ['XXX'] });
    const gear = prius.messages.find((m) => m.name === 'GEAR_PACKET')!.signals.find((s) => s.name === 'GEAR')!;
    expect([...gear.valueTable]).toEqual([[0, 'P'], [1, 'R'], [2, 'N'], [3, 'D'], [4, 'B']]);
    const accelY = prius.messages.find((m) => m.name === 'KINEMATICS')!.signals.find((s) => s.name === 'ACCEL_Y')!;
    expect(accelY.comment).toBe('unit is tbd');

    const gm = loadDbc(opendbcPath('gm_global_a_high_voltage_management.dbc'));
    const module1 = gm.messages.find((m) => m.id === 512)!;
    expect(module1.signals.find((s) => s.name === 'Cell_Bank_Number_1')!.multiplex).toBe('multiplexer');
    expect(module1.signals.find((s) => s.name === 'Voltage_1_2_A')!.multiplex).toBe(2);

    const tesla = loadDbc(opendbcPath('tesla_can.dbc'));
    expect(tesla.nodes).toContain('DAS'); // BU_ spread over indented lines
    const torque = tesla.messages.find((m) => m.name === 'DI_torque2')!.signals.find((s) => s.name === 'DI_torqueEstimate')!;
    expect(torque).toMatchObject({ byteOrder: 'little_endian', signed: true, factor: 0.5, minimum: -750, maximum: 750, unit: 'Nm' });
    // tesla_can.dbc has a VAL_ for a signal its message lacks: kept as a warning with file:line, not a failure
    expect(tesla.warnings.some((w) => /tesla_can\.dbc:783: .*UI_mapSpeedLimit/.test(w))).toBe(true);
  });

  it("skips Vector's VECTOR__INDEPENDENT_SIG_MSG pseudo-message with a warning", () => {
    const db = parseDbc(
      ['BO_ 3221225472 VECTOR__INDEPENDENT_SIG_MSG: 0 Vector__XXX', ' SG_ Orphan : 0|8@1+ (1,0) [0|0] "" Vector__XXX', 'BO_ 5 REAL: 1 ECU', ' SG_ A : 0|8@1+ (1,0) [0|0] "" ECU', 'CM_ SG_ 3221225472 Orphan "unplaced";'].join('\n'),
      'vector.dbc',
    );
    expect(db.messages.map((m) => m.name)).toEqual(['REAL']);
    expect(db.warnings).toEqual([
      'vector.dbc:1: VECTOR__INDEPENDENT_SIG_MSG (id 3221225472) holds unplaced signals; not a frame, ignored',
      'vector.dbc:5: no message with id 3221225472; statement ignored',
    ]);
  });

  it('takes cycle times from BA_ "GenMsgCycleTime" and its BA_DEF_DEF_ default', () => {
    const db = parseDbc(
      [
        'VERSION ""',
        'BU_: ECU',
        'BO_ 100 FAST: 2 ECU',
        ' SG_ A : 0|8@1+ (1,0) [0|0] "" ECU',
        'BO_ 101 DEFAULTED: 1 ECU',
        ' SG_ B : 0|8@1+ (1,0) [0|0] "" ECU',
        'BA_DEF_ BO_ "GenMsgCycleTime" INT 0 10000;',
        'BA_DEF_DEF_ "GenMsgCycleTime" 250;',
        'BA_ "GenMsgCycleTime" BO_ 100 20;',
      ].join('\n'),
      'cycle.dbc',
    );
    expect(db.messages.map((m) => [m.name, m.cycleTimeMs])).toEqual([['FAST', 20], ['DEFAULTED', 250]]);
  });
});

describe('bit numbering', () => {
  it('walks Motorola signals from the MSB in sawtooth order and Intel signals upward from the LSB', () => {
    expect(signalBitPositions(47, 16, 'big_endian')).toEqual([47, 46, 45, 44, 43, 42, 41, 40, 55, 54, 53, 52, 51, 50, 49, 48]);
    expect(signalBitPositions(4, 12, 'big_endian')).toEqual([4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9]);
    expect(signalBitPositions(12, 3, 'little_endian')).toEqual([14, 13, 12]);
  });
});

describe('decoding known frames (values computed by hand)', () => {
  it('Motorola unsigned: Prius SPEED.SPEED in bytes 5-6', () => {
    const result = codecOf('toyota_prius_2010_pt.dbc').decode({ id: 180, extended: false, data: bytes(0, 0, 0, 0, 0, 0x3f, 0x01, 0) });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    // 0x3F01 = 16129; 16129 * 0.0062 = 99.9998 mph
    expect(result.frame.signals.SPEED).toBeCloseTo(99.9998, 10);
    expect(result.frame.signals.ENCODER).toBe(0);
  });

  it('Motorola signed across a byte boundary: Prius STEER_ANGLE and STEER_TORQUE_DRIVER', () => {
    const codec = codecOf('toyota_prius_2010_pt.dbc');
    // STEER_ANGLE 3|12@0-: high nibble in byte 0 bits 3..0, rest in byte 1: 0xFFE = -2; * 1.5 = -3 deg
    const angle = codec.decode({ id: 37, extended: false, data: bytes(0x0f, 0xfe, 0, 0, 0, 0, 0, 0) });
    expect(angle.ok && angle.frame.signals.STEER_ANGLE).toBe(-3);
    // STEER_TORQUE_DRIVER 15|16@0-: bytes 1-2 = 0xFF38 = -200
    const torque = codec.decode({ id: 608, extended: false, data: bytes(0, 0xff, 0x38, 0, 0, 0, 0, 0) });
    expect(torque.ok && torque.frame.signals.STEER_TORQUE_DRIVER).toBe(-200);
  });

  it('Intel signed, unsigned with offset and a value-table label: Tesla DI_torque2', () => {
    const codec = codecOf('tesla_can.dbc');
    // DI_torqueEstimate 0|12@1- (0.5): byte0 0x38 + low nibble of byte1 0xF = 0xF38 = -200 -> -100 Nm
    // DI_gear 12|3@1+: byte1 bits 4..6 = 0b100 = 4 = "DI_GEAR_D"
    // DI_vehicleSpeed 16|12@1+ (0.05,-25): byte2 0xE8 + low nibble of byte3 3 = 1000 -> 25 MPH
    const result = codec.decode({ id: 280, extended: false, data: bytes(0x38, 0x4f, 0xe8, 0x03, 0, 0) });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.frame.signals.DI_torqueEstimate).toBe(-100);
    expect(result.frame.signals.DI_gear).toBe(4);
    expect(result.frame.labels.DI_gear).toBe('DI_GEAR_D');
    expect(result.frame.signals.DI_vehicleSpeed).toBeCloseTo(25, 10);
  });

  it('multiplexed: GM Battery_Module_1 decodes only the signals of the active bank', () => {
    const codec = codecOf('gm_global_a_high_voltage_management.dbc');
    // mux Cell_Bank_Number_1 55|3@0+ = byte6 bits 7..5 = 0b010 -> bank 2
    // Voltage_1_2_A 4|12@0+: 0xABC = 0b10101 | 0b0111100 -> byte0 0x15, byte1 0x78; 2748 * 0.00125 = 3.435 V
    const result = codec.decode({ id: 512, extended: false, data: bytes(0x15, 0x78, 0, 0, 0, 0, 0x40, 0) });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.frame.signals.Cell_Bank_Number_1).toBe(2);
    expect(result.frame.signals.Voltage_1_2_A).toBeCloseTo(3.435, 10);
    expect(Object.keys(result.frame.signals).sort()).toEqual(['Cell_Bank_Number_1', 'Voltage_1_2_A', 'Voltage_1_2_B', 'Voltage_1_2_C']);
  });

  it('encodes the same known frames bit for bit', () => {
    const tesla = codecOf('tesla_can.dbc');
    expect(tesla.encode('DI_torque2', { DI_torqueEstimate: -100, DI_gear: 'DI_GEAR_D', DI_vehicleSpeed: 25 })).toEqual(bytes(0x38, 0x4f, 0xe8, 0x03, 0, 0));
    const gm = codecOf('gm_global_a_high_voltage_management.dbc');
    expect(gm.encode('Battery_Module_1', { Cell_Bank_Number_1: 2, Voltage_1_2_A: 3.435 })).toEqual(bytes(0x15, 0x78, 0, 0, 0, 0, 0x40, 0));
    const prius = codecOf('toyota_prius_2010_pt.dbc');
    expect(prius.encode('STEER_ANGLE_SENSOR', { STEER_ANGLE: -3 })).toEqual(bytes(0x0f, 0xfe, 0, 0, 0, 0, 0, 0));
  });
});

describe('bad frames and values are reported, never clipped', () => {
  const prius = codecOf('toyota_prius_2010_pt.dbc');
  it('rejects unknown ids and length mismatches with a reason', () => {
    expect(prius.decode({ id: 0x7ff, extended: false, data: bytes(1) })).toMatchObject({ ok: false, problem: 'unknown_id' });
    const short = prius.decode({ id: 180, extended: false, data: bytes(0, 0, 0) });
    expect(short).toMatchObject({ ok: false, problem: 'length_mismatch' });
    expect(!short.ok && short.detail).toMatch(/SPEED .* has 8 bytes .* frame has 3/);
    // the same id as an extended frame is a different message
    expect(prius.decode({ id: 180, extended: true, data: new Uint8Array(8) })).toMatchObject({ ok: false, problem: 'unknown_id' });
  });

  it('reports out-of-range decoded values with the value kept as decoded', () => {
    // SPEED 0xFFFF * 0.0062 = 406.317 mph, declared [0|115]
    const result = prius.decode({ id: 180, extended: false, data: bytes(0, 0, 0, 0, 0, 0xff, 0xff, 0) });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.frame.signals.SPEED).toBeCloseTo(406.317, 3);
    expect(result.frame.outOfRange).toEqual([{ signal: 'SPEED', value: result.frame.signals.SPEED, minimum: 0, maximum: 115 }]);
  });

  it('refuses to encode values outside the declared or representable range, unknown labels and signals', () => {
    expect(() => prius.encode('SPEED', { SPEED: 120 })).toThrow(/SPEED\.SPEED: value 120 is outside its declared range \[0\|115\]/);
    // ACCEL_Y: 10 bits, offset -512, declared [0|65535]: 600 is declared-valid but not representable
    expect(() => prius.encode('KINEMATICS', { ACCEL_Y: 600 })).toThrow(EncodeError);
    expect(() => prius.encode('GEAR_PACKET', { GEAR: 'X' })).toThrow(/label "X" is not in its value table/);
    expect(() => prius.encode('SPEED', { NOPE: 1 })).toThrow(/SPEED\.NOPE: no such signal/);
    const gm = codecOf('gm_global_a_high_voltage_management.dbc');
    expect(() => gm.encode('Battery_Module_1', { Cell_Bank_Number_1: 1, Voltage_1_2_A: 3 })).toThrow(/present only when Cell_Bank_Number_1 = 2, but it is 1/);
  });
});

describe('malformed DBC files name file, line and what was expected', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['BO_ 100 M: 8 ECU\n SG_ S : 0|8@2+ (1,0) [0|0] "" ECU', 'byte order', /^bad\.dbc:2: expected the byte order and sign '@0\+', '@0-', '@1\+' or '@1-', found/],
    ['BO_ 100 M: 8 ECU\n SG_ S : 60|8@1+ (1,0) [0|0] "" ECU', 'signal beyond the frame', /^bad\.dbc:2: expected a signal within the 8 bytes of M \(S reaches bit 67\)/],
    ['BO_ 100 M: 8 ECU\n SG_ S : 0|8@1+ (1 0) [0|0] "" ECU', 'missing comma', /^bad\.dbc:2: expected ',' between factor and offset, found '0'/],
    ['VERSION ""\n\nBO_ 100 M 8 ECU', 'missing colon', /^bad\.dbc:3: expected ':' after the message name, found '8'/],
    ['BO_ 100 M: 8 ECU\nBO_ 100 N: 8 ECU', 'duplicate id', /^bad\.dbc:2: expected a message id not defined before \(100 is already M\)/],
    ['CM_ "unterminated;\n', 'open string', /^bad\.dbc:1: expected a closing " for the string opened here, found end of file/],
    ['BO_ 100 M: 8 ECU\n SG_ S m1 : 0|8@1+ (1,0) [0|0] "" ECU', 'mux without switch', /^bad\.dbc:2: expected a multiplexer signal 'M' in M/],
    ['BO_ 2048 M: 8 ECU', 'standard id too large', /^bad\.dbc:1: expected a standard id up to 0x7FF/],
    ['HELLO', 'unknown keyword', /^bad\.dbc:1: expected a DBC keyword/],
    ['BO_ 100 M: 8 ECU\n SG_ S : 0|8@1+ (0,0) [0|0] "" ECU', 'zero factor', /^bad\.dbc:2: expected a non-zero factor/],
    ['', 'empty file', /^bad\.dbc:1: expected at least one message \(BO_ .*the file defines none, found end of file/],
    ['VERSION ""\nBU_: ECU\n', 'nodes but no message', /^bad\.dbc:3: expected at least one message/],
  ];
  for (const [text, label, pattern] of cases) {
    it(label, () => {
      let error: unknown;
      try {
        parseDbc(text, 'bad.dbc');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DbcParseError);
      expect((error as Error).message).toMatch(pattern);
    });
  }
});

describe('float signals (SIG_VALTYPE_)', () => {
  it('encodes and decodes IEEE float32 bit-exactly', () => {
    const codec = new DbcCodec(
      parseDbc('BO_ 1 F: 4 ECU\n SG_ X : 0|32@1- (1,0) [0|0] "" ECU\nSIG_VALTYPE_ 1 X : 1;', 'float.dbc'),
    );
    const data = codec.encode('F', { X: 1.5 });
    expect(data).toEqual(bytes(0x00, 0x00, 0xc0, 0x3f)); // 1.5f = 0x3FC00000, little-endian
    const result = codec.decode({ id: 1, extended: false, data });
    expect(result.ok && result.frame.signals.X).toBe(1.5);
  });
});

/** the physical values a signal can be encoded with: declared range within the representable one */
function encodableRange(signal: DbcSignal): { min: number; max: number } {
  const representable = representableRange(signal);
  if (signal.minimum === undefined || signal.maximum === undefined) return representable;
  return { min: Math.max(signal.minimum, representable.min), max: Math.min(signal.maximum, representable.max) };
}

describe('property: encode then decode every signal of the four opendbc files', () => {
  for (const file of OPENDBC_FILES) {
    it(`${file}: random in-range values come back within one scaling step, touching only the signal's bits`, () => {
      const codec = codecOf(file);
      const random = createRng(file.length * 7919).next;
      let checked = 0;
      const emptyRanges: string[] = [];
      for (const message of codec.db.messages) {
        const switchSignal = message.signals.find((s) => s.multiplex === 'multiplexer');
        for (const signal of message.signals) {
          const range = encodableRange(signal);
          if (range.min > range.max) {
            emptyRanges.push(`${message.name}.${signal.name}`);
            continue;
          }
          const step = Math.abs(signal.factor);
          const ownBits = new Set(signal.bitPositions);
          if (switchSignal && switchSignal !== signal) switchSignal.bitPositions.forEach((p) => ownBits.add(p));
          for (let i = 0; i < 25; i++) {
            const value = i === 0 ? range.min : i === 1 ? range.max : range.min + random() * (range.max - range.min);
            const values: Record<string, number> = { [signal.name]: value };
            if (switchSignal && typeof signal.multiplex === 'number') values[switchSignal.name] = signal.multiplex;
            const data = codec.encode(message.name, values);
            for (let bit = 0; bit < data.length * 8; bit++) {
              if ((data[bit >> 3] >> (bit & 7)) & 1) expect(ownBits.has(bit), `${message.name}.${signal.name} set bit ${bit}`).toBe(true);
            }
            const result = codec.decode({ id: message.id, extended: message.extended, data });
            expect(result.ok).toBe(true);
            if (!result.ok) return;
            const decoded = result.frame.signals[signal.name];
            expect(Math.abs(Number(decoded) - value), `${message.name}.${signal.name} = ${value}`).toBeLessThanOrEqual(step * (1 + 1e-9));
            checked++;
          }
        }
      }
      expect(emptyRanges).toEqual([]);
      expect(checked).toBe(codec.db.messages.reduce((n, m) => n + m.signals.length, 0) * 25);
    });
  }

  it('raw extremes round-trip exactly for every integer signal', () => {
    for (const file of OPENDBC_FILES) {
      const codec = codecOf(file);
      for (const message of codec.db.messages) {
        const switchSignal = message.signals.find((s) => s.multiplex === 'multiplexer');
        for (const signal of message.signals) {
          const { min, max } = rawRange(signal);
          for (const raw of [min, max, 0]) {
            // wide signals: exact bigint physical values when factor and offset are integers (all of them in these files)
            const physical = typeof raw === 'bigint' ? raw * BigInt(signal.factor) + BigInt(signal.offset) : raw * signal.factor + signal.offset;
            if (signal.minimum !== undefined && signal.maximum !== undefined && (physical < signal.minimum || physical > signal.maximum)) continue;
            const values: Record<string, number | bigint> = { [signal.name]: physical };
            if (switchSignal && typeof signal.multiplex === 'number') values[switchSignal.name] = signal.multiplex;
            const result = codec.decode({ id: message.id, extended: message.extended, data: codec.encode(message.name, values) });
            if (!result.ok) throw new Error(result.detail);
            const decoded = result.frame.signals[signal.name];
            if (typeof raw === 'bigint') expect(decoded).toBe(physical);
            else expect(Math.round((Number(decoded) - signal.offset) / signal.factor)).toBe(raw);
          }
        }
      }
    }
  });
});

describe('integer signals wider than 53 bits are exact (BigInt)', () => {
  const codec = codecOf('hyundai_2015_ccan.dbc');
  const serial = 6263398323264770332n;
  const serialBytes = () => {
    const data = new Uint8Array(8);
    new DataView(data.buffer).setBigUint64(0, serial, true); // 0|64@1+: Intel, LSB at bit 0
    return data;
  };

  it('decodes ACU12.CR_Acu_SN (0|64@1+) raw 6263398323264770332 exactly', () => {
    const result = codec.decode({ id: 1441, extended: false, data: serialBytes() });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.frame.signals.CR_Acu_SN).toBe(serial);
    // a double would have printed 6263398323264770000
    expect(String(result.frame.signals.CR_Acu_SN)).toBe('6263398323264770332');
  });

  it('encodes the exact bigint back to the same bytes, and the extremes round-trip', () => {
    expect(codec.encode('ACU12', { CR_Acu_SN: serial })).toEqual(serialBytes());
    for (const value of [0n, 1n, 2n ** 53n + 1n, 2n ** 64n - 1n]) {
      const result = codec.decode({ id: 1441, extended: false, data: codec.encode('ACU12', { CR_Acu_SN: value }) });
      expect(result.ok && result.frame.signals.CR_Acu_SN).toBe(value);
    }
    expect(() => codec.encode('ACU12', { CR_Acu_SN: 2n ** 64n })).toThrow(/does not fit 64 unsigned bits/);
    expect(() => codec.encode('ACU12', { CR_Acu_SN: -1n })).toThrow(/does not fit 64 unsigned bits/);
  });

  it('signed, scaled and offset wide signals: exact when factor and offset are integers, a number otherwise', () => {
    const db = parseDbc(
      ['BO_ 1 W: 8 ECU', ' SG_ S : 0|64@1- (1,0) [0|0] "" ECU', 'BO_ 2 F: 8 ECU', ' SG_ K : 0|60@1+ (2,-10) [0|0] "" ECU', 'BO_ 3 G: 8 ECU', ' SG_ D : 0|56@1+ (0.5,0) [0|0] "" ECU'].join('\n'),
      'wide.dbc',
    );
    const wide = new DbcCodec(db);
    const roundTrip = (message: string, signal: string, value: number | bigint) => {
      const result = wide.decode({ id: wide.message(message).id, extended: false, data: wide.encode(message, { [signal]: value }) });
      if (!result.ok) throw new Error(result.detail);
      return result.frame.signals[signal];
    };
    expect(roundTrip('W', 'S', -(2n ** 63n))).toBe(-(2n ** 63n));
    expect(roundTrip('W', 'S', -1234567890123456789n)).toBe(-1234567890123456789n);
    expect(roundTrip('F', 'K', 2n * (2n ** 59n + 3n) - 10n)).toBe(2n * (2n ** 59n + 3n) - 10n);
    expect(() => wide.encode('F', { K: 1n })).toThrow(/minus offset -10 is not a multiple of factor 2/);
    expect(roundTrip('G', 'D', 1.5)).toBe(1.5);
    expect(() => wide.encode('G', { D: 3n })).toThrow(/factor 0.5 and offset 0 are not both integers/);
  });
});

/**
 * An independent decoder, for cross-checking: the whole frame as one BigInt, each signal cut out by shift and mask
 * (Intel from the little-endian frame, Motorola from the big-endian one), scaled exactly when factor and offset
 * are integers. It shares no code with the codec's bit-position walk.
 */
function independentDecode(signal: DbcSignal, data: Uint8Array): number | bigint {
  const n = BigInt(data.length * 8);
  const len = BigInt(signal.length);
  const mask = (1n << len) - 1n;
  let raw: bigint;
  if (signal.byteOrder === 'little_endian') {
    const frame = data.reduceRight((v, byte) => (v << 8n) | BigInt(byte), 0n);
    raw = (frame >> BigInt(signal.startBit)) & mask;
  } else {
    const frame = data.reduce((v, byte) => (v << 8n) | BigInt(byte), 0n);
    const msbFromLeft = BigInt((signal.startBit >> 3) * 8 + (7 - (signal.startBit & 7)));
    raw = (frame >> (n - msbFromLeft - len)) & mask;
  }
  if (signal.signed && raw >> (len - 1n)) raw -= 1n << len;
  if (signal.length > 53 && Number.isSafeInteger(signal.factor) && Number.isSafeInteger(signal.offset)) return raw * BigInt(signal.factor) + BigInt(signal.offset);
  return Number(raw) * signal.factor + signal.offset;
}

describe('cross-check against an independent BigInt decoder', () => {
  it('random frames of the four opendbc files: every integer signal value is identical, the 64-bit one included', () => {
    const random = createRng(20261125).next;
    let compared = 0;
    let wide = 0;
    const mismatches: string[] = [];
    for (const file of OPENDBC_FILES) {
      const codec = codecOf(file);
      for (const message of codec.db.messages) {
        for (let k = 0; k < 40; k++) {
          const data = Uint8Array.from({ length: message.length }, () => Math.floor(random() * 256));
          const result = codec.decode({ id: message.id, extended: message.extended, data });
          if (!result.ok) throw new Error(result.detail);
          for (const signal of message.signals) {
            if (signal.valueType !== 'integer' || !(signal.name in result.frame.signals)) continue;
            const expected = independentDecode(signal, data);
            const actual = result.frame.signals[signal.name];
            if (actual !== expected) mismatches.push(`${file} ${message.name}.${signal.name}: ${actual} != ${expected}`);
            compared++;
            if (signal.length > 53) wide++;
          }
        }
      }
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
    expect(compared).toBe(72_127); // every integer signal present in 40 random frames of every message
    expect(wide).toBe(40); // ACU12.CR_Acu_SN, the only signal wider than 53 bits in the four files
  });
});
