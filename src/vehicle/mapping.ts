import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { loadYamlDocument, PATH_LIKE } from '../config/yaml.ts';
import { DbcCodec, type DecodedFrame } from './dbc/codec.ts';
import { loadDbc } from './dbc/parser.ts';
import type { DbcMessage, DbcSignal } from './dbc/types.ts';
import type { PeriodicMessage } from './scheduler.ts';
import { numericSignalValue, type Gear, type NumericContextSignal, type VehicleSnapshot } from './model.ts';
import { packagePath } from '../domain/package-files.ts';

const SignalRefSchema = z.strictObject({
  message: z.string().min(1),
  signal: z.string().min(1),
  /** DBC value = context value * scale + offset (e.g. km/h -> mph: scale 0.621371) */
  scale: z.number().refine((v) => v !== 0, 'expected a non-zero scale').default(1),
  offset: z.number().default(0),
});
type SignalRef = z.infer<typeof SignalRefSchema>;

const GearRefSchema = z.strictObject({
  message: z.string().min(1),
  signal: z.string().min(1),
  /** the DBC value (raw number or VAL_ label) for each gear */
  values: z.strictObject({ P: z.union([z.number(), z.string()]), R: z.union([z.number(), z.string()]), N: z.union([z.number(), z.string()]), D: z.union([z.number(), z.string()]) }),
});
type GearRef = z.infer<typeof GearRefSchema>;

export const VehicleMappingSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  /** path of the DBC, relative to the mapping file */
  dbc: z.string().min(1),
  /** cycle times for messages whose DBC has no GenMsgCycleTime (or to override it), in ms */
  cycleMs: z.record(z.string(), z.number().positive()).default({}),
  signals: z.strictObject({
    speedKmh: SignalRefSchema,
    gear: GearRefSchema,
    /** 1 engaged, 0 released (scale/offset convert another convention) */
    parkingBrake: SignalRefSchema.optional(),
    stateOfChargePct: SignalRefSchema.optional(),
    rangeKm: SignalRefSchema.optional(),
    outsideTempC: SignalRefSchema.optional(),
    hvacSetpointC: SignalRefSchema.optional(),
    latitudeDeg: SignalRefSchema.optional(),
    longitudeDeg: SignalRefSchema.optional(),
    headingDeg: SignalRefSchema.optional(),
    year: SignalRefSchema.optional(),
    month: SignalRefSchema.optional(),
    day: SignalRefSchema.optional(),
    hour: SignalRefSchema.optional(),
    minute: SignalRefSchema.optional(),
    second: SignalRefSchema.optional(),
  }),
});
export type VehicleMappingConfig = z.infer<typeof VehicleMappingSchema>;

/** Mappings shipped with the bench, by name (hardware/mappings/<name>.yaml). */
export const MAPPINGS_DIR = packagePath('hardware', 'mappings');

interface BoundSignal {
  context: NumericContextSignal;
  ref: SignalRef;
  message: DbcMessage;
  signal: DbcSignal;
}

/** One numeric context value decoded from a frame. */
export type DecodedContextValues = Partial<Record<NumericContextSignal, number>> & { gear?: Gear };

/** The context signals of the bench placed onto one DBC: encodes snapshots into frames and decodes them back. */
export class VehicleMapping {
  readonly codec: DbcCodec;
  private readonly numeric: BoundSignal[] = [];
  private readonly gear: { ref: GearRef; message: DbcMessage; signal: DbcSignal; byDbcValue: Map<string, Gear> };
  /** messages the mapping drives, with their cycle times */
  readonly messages: Array<{ message: DbcMessage; cycleMs: number }>;

  constructor(
    readonly config: VehicleMappingConfig,
    dbcPath: string,
    /** "FILE:LINE" of a field of the mapping file, for errors */
    at: (field: string) => string,
  ) {
    this.codec = new DbcCodec(loadDbc(dbcPath));
    const bind = (field: string, ref: { message: string; signal: string }) => {
      const message = this.codec.db.messages.find((m) => m.name === ref.message);
      if (!message) throw new Error(`${at(`signals.${field}.message`)}: signals.${field}.message: ${ref.message} is not a message of ${dbcPath}`);
      const signal = message.signals.find((s) => s.name === ref.signal);
      if (!signal) throw new Error(`${at(`signals.${field}.signal`)}: signals.${field}.signal: ${ref.signal} is not a signal of ${ref.message}`);
      if (signal.multiplex !== undefined) throw new Error(`${at(`signals.${field}`)}: signals.${field}: ${ref.signal} is multiplexed; mappings use plain signals`);
      return { message, signal };
    };
    for (const [field, ref] of Object.entries(config.signals)) {
      if (!ref || field === 'gear') continue;
      this.numeric.push({ context: field as NumericContextSignal, ref: ref as SignalRef, ...bind(field, ref) });
    }
    const gearBound = bind('gear', config.signals.gear);
    const byDbcValue = new Map<string, Gear>();
    for (const [gear, value] of Object.entries(config.signals.gear.values) as Array<[Gear, number | string]>) {
      if (typeof value === 'string' && ![...gearBound.signal.valueTable.values()].includes(value)) {
        throw new Error(`${at(`signals.gear.values.${gear}`)}: signals.gear.values.${gear}: "${value}" is not a label of ${gearBound.signal.name}`);
      }
      byDbcValue.set(String(value), gear);
    }
    this.gear = { ref: config.signals.gear, ...gearBound, byDbcValue };

    const used = new Map<string, DbcMessage>();
    for (const bound of [...this.numeric, this.gear]) used.set(bound.message.name, bound.message);
    for (const name of Object.keys(config.cycleMs)) {
      if (!used.has(name)) throw new Error(`${at(`cycleMs.${name}`)}: cycleMs.${name}: not a message this mapping uses (${[...used.keys()].join(', ')})`);
    }
    this.messages = [...used.values()].map((message) => {
      const cycleMs = config.cycleMs[message.name] ?? message.cycleTimeMs;
      if (cycleMs === undefined) {
        throw new Error(`${at('cycleMs')}: cycleMs.${message.name}: required, the DBC gives ${message.name} no GenMsgCycleTime`);
      }
      return { message, cycleMs };
    });
  }

  get name(): string {
    return this.config.name;
  }

  /** DBC name carried in vehicle_context messages */
  get dbcName(): string {
    return this.codec.db.source.replace(/^.*[\\/]/, '').replace(/\.dbc$/i, '');
  }

  /** The data bytes of one mapped message for a snapshot. Signals the mapping does not drive are sent as raw 0. */
  encodeMessage(messageName: string, snapshot: VehicleSnapshot): Uint8Array {
    const values: Record<string, number | string> = {};
    for (const bound of this.numeric) {
      if (bound.message.name !== messageName) continue;
      const value = numericSignalValue(snapshot, bound.context);
      if (value !== undefined) values[bound.signal.name] = value * bound.ref.scale + bound.ref.offset;
    }
    if (this.gear.message.name === messageName) values[this.gear.signal.name] = this.gear.ref.values[snapshot.vehicle.gear];
    return this.codec.encode(messageName, values);
  }

  /** Periodic messages whose payload follows `snapshotAt(t)`, for the frame scheduler. */
  periodicMessages(snapshotAt: (tSeconds: number) => VehicleSnapshot): PeriodicMessage[] {
    return this.messages.map(({ message, cycleMs }) => ({
      id: message.id,
      extended: message.extended,
      cycleMs,
      payload: (t) => this.encodeMessage(message.name, snapshotAt(t)),
    }));
  }

  /**
   * The context values a decoded frame carries, plus the mapped signals that were out of their declared
   * range or had a gear value the mapping does not know (reported, not used).
   */
  contextValues(decoded: DecodedFrame): { values: DecodedContextValues; rejected: string[] } {
    const values: DecodedContextValues = {};
    const rejected: string[] = [];
    const outOfRange = new Set(decoded.outOfRange.map((o) => o.signal));
    for (const bound of this.numeric) {
      if (bound.message !== decoded.message) continue;
      const dbcValue = decoded.signals[bound.signal.name];
      if (outOfRange.has(bound.signal.name)) {
        rejected.push(`${bound.message.name}.${bound.signal.name} = ${dbcValue} is outside [${bound.signal.minimum}|${bound.signal.maximum}]`);
        continue;
      }
      values[bound.context] = (Number(dbcValue) - bound.ref.offset) / bound.ref.scale;
    }
    if (this.gear.message === decoded.message) {
      const raw = decoded.signals[this.gear.signal.name];
      const label = decoded.labels[this.gear.signal.name];
      const gear = this.gear.byDbcValue.get(String(raw)) ?? (label !== undefined ? this.gear.byDbcValue.get(label) : undefined);
      if (gear) values.gear = gear;
      else rejected.push(`${this.gear.message.name}.${this.gear.signal.name} = ${label ?? raw} is not a gear this mapping knows`);
    }
    return { values, rejected };
  }
}

/** Loads a mapping by name (from hardware/mappings/) or by path; errors name the file and field. */
export function loadMapping(nameOrPath: string): VehicleMapping {
  const path = PATH_LIKE.test(nameOrPath) ? resolve(nameOrPath) : resolve(MAPPINGS_DIR, `${nameOrPath}.yaml`);
  const { data: config, at } = loadYamlDocument(VehicleMappingSchema, path, 'vehicle mapping');
  return new VehicleMapping(config, resolve(dirname(path), config.dbc), at);
}
