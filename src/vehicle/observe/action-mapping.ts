import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { loadYamlDocument, PATH_LIKE } from '../../config/yaml.ts';
import { carriedKey, ObservedActionKindSchema, type ObservedAction, type ObservedActionKind, type ObservedFrame } from '../../domain/bus-observation.ts';
import { DbcCodec, type DecodedFrame } from '../dbc/codec.ts';
import { loadDbc } from '../dbc/parser.ts';
import { frameKey, type DbcMessage, type DbcSignal } from '../dbc/types.ts';
import { bytesToHex, type CanFrame, type TimedFrame } from '../frames.ts';
import { MAPPINGS_DIR } from '../mapping.ts';

/**
 * One action the bus carries: which message and signal of the DBC hold it. `trigger: frame` reads every frame of
 * the message as a command (messages a unit sends only when it acts); `change` (default) reads a frame as an
 * action only when the value differs from the one before (cyclic state messages).
 */
const ActionEntrySchema = z
  .strictObject({
    kind: ObservedActionKindSchema,
    /** the seat or window; for vehicle_control the control's name as announced (lane_keeping_assist, show_full_text, cruise_control_kmh) */
    target: z.string().min(1).optional(),
    message: z.string().min(1),
    signal: z.string().min(1).optional(),
    /** navigation_destination: the latitude and longitude signals */
    latitude: z.string().min(1).optional(),
    longitude: z.string().min(1).optional(),
    trigger: z.enum(['change', 'frame']).default('change'),
    /** DBC value = bench value * scale + offset (e.g. a unit that sends °F: scale 1.8, offset 32) */
    scale: z.number().refine((v) => v !== 0, 'expected a non-zero scale').default(1),
    offset: z.number().default(0),
    /** media_source: the DBC value (raw number or VAL_ label) of each source */
    values: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
  })
  .superRefine((entry, ctx) => {
    const nav = entry.kind === 'navigation_destination';
    if (nav && (!entry.latitude || !entry.longitude)) ctx.addIssue({ code: 'custom', path: ['latitude'], message: 'navigation_destination needs latitude and longitude signals' });
    if (!nav && !entry.signal) ctx.addIssue({ code: 'custom', path: ['signal'], message: `${entry.kind} needs a signal` });
    if (entry.kind === 'media_source' && !entry.values) ctx.addIssue({ code: 'custom', path: ['values'], message: 'media_source needs values: the DBC value of each source' });
    if (entry.kind === 'vehicle_control' && !entry.target) ctx.addIssue({ code: 'custom', path: ['target'], message: 'vehicle_control needs a target: the control it switches' });
  });
type ActionEntry = z.infer<typeof ActionEntrySchema>;

export const ActionMappingSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  /** path of the DBC, relative to the mapping file */
  dbc: z.string().min(1),
  actions: z.array(ActionEntrySchema).min(1),
});
export type ActionMappingConfig = z.infer<typeof ActionMappingSchema>;

interface BoundEntry {
  index: number;
  entry: ActionEntry;
  message: DbcMessage;
  /** the signals read: one, or latitude then longitude */
  signals: DbcSignal[];
  /** media_source: source by DBC value (raw number and label both as strings) */
  sourceOf: Map<string, string>;
}

/** An action the mapping decoded from one frame, before the channel places it in a turn. */
export interface DecodedAction {
  entry: number;
  trigger: 'change' | 'frame';
  kind: ObservedActionKind;
  target?: string;
  value: ObservedAction['value'];
}

/** Unit-sent messages of a DBC read as actions (and, for the reference unit, actions written as frames). */
export class ActionMapping {
  readonly codec: DbcCodec;
  private readonly byKey = new Map<number, BoundEntry[]>();
  private readonly entries: BoundEntry[] = [];
  /** the action kinds (vehicle_control per control) this mapping reads off the bus */
  readonly carries: string[];

  constructor(
    readonly config: ActionMappingConfig,
    dbcPath: string,
    at: (field: string) => string,
  ) {
    this.codec = new DbcCodec(loadDbc(dbcPath));
    config.actions.forEach((entry, index) => {
      const field = `actions.${index}`;
      const message = this.codec.db.messages.find((m) => m.name === entry.message);
      if (!message) throw new Error(`${at(`${field}.message`)}: ${field}.message: ${entry.message} is not a message of ${dbcPath}`);
      const names = entry.kind === 'navigation_destination' ? [entry.latitude!, entry.longitude!] : [entry.signal!];
      const signals = names.map((name) => {
        const signal = message.signals.find((s) => s.name === name);
        if (!signal) throw new Error(`${at(field)}: ${field}: ${name} is not a signal of ${entry.message}`);
        return signal;
      });
      const sourceOf = new Map<string, string>();
      for (const [source, dbcValue] of Object.entries(entry.values ?? {})) {
        if (typeof dbcValue === 'string' && ![...signals[0].valueTable.values()].includes(dbcValue)) {
          throw new Error(`${at(`${field}.values.${source}`)}: ${field}.values.${source}: "${dbcValue}" is not a label of ${signals[0].name}`);
        }
        sourceOf.set(String(dbcValue), source);
      }
      const bound = { index, entry, message, signals, sourceOf };
      this.entries.push(bound);
      const key = frameKey(message.id, message.extended);
      this.byKey.set(key, [...(this.byKey.get(key) ?? []), bound]);
    });
    this.carries = [...new Set(config.actions.map((a) => carriedKey(a.kind, a.target)))];
  }

  get name(): string {
    return this.config.name;
  }

  /** How many entries the mapping has (the size of a reader's state). */
  get size(): number {
    return this.entries.length;
  }

  /** Whether a frame belongs to a message this mapping reads (one map lookup: most bus traffic is not the unit's). */
  reads(frame: CanFrame): boolean {
    return this.byKey.has(frameKey(frame.id, frame.extended));
  }

  /** The actions a frame of a mapped message carries, with the decoded frame as evidence; null when it does not decode. */
  decode(frame: CanFrame): { actions: DecodedAction[]; evidence: Omit<ObservedFrame, 'atMs'> } | { problem: string } | null {
    const bound = this.byKey.get(frameKey(frame.id, frame.extended));
    if (!bound) return null;
    const result = this.codec.decode(frame);
    if (!result.ok) return { problem: result.detail };
    const decoded = result.frame;
    const actions: DecodedAction[] = [];
    for (const b of bound) {
      const value = this.valueOf(b, decoded);
      if (value === undefined) continue;
      actions.push({ entry: b.index, trigger: b.entry.trigger, kind: b.entry.kind, ...(b.entry.target ? { target: b.entry.target } : {}), value });
    }
    return { actions, evidence: { id: frame.id, extended: frame.extended, message: decoded.message.name, data: bytesToHex(frame.data), signals: evidenceSignals(decoded) } };
  }

  private valueOf(b: BoundEntry, decoded: DecodedFrame): DecodedAction['value'] | undefined {
    const bench = (signal: DbcSignal) => {
      const raw = decoded.signals[signal.name];
      return raw === undefined ? undefined : round((Number(raw) - b.entry.offset) / b.entry.scale);
    };
    switch (b.entry.kind) {
      case 'media_source': {
        const signal = b.signals[0];
        const label = decoded.labels[signal.name];
        return b.sourceOf.get(String(decoded.signals[signal.name])) ?? (label !== undefined ? b.sourceOf.get(label) : undefined) ?? `unmapped ${label ?? String(decoded.signals[signal.name])}`;
      }
      case 'vehicle_control':
        return bench(b.signals[0]) !== 0;
      case 'navigation_destination':
        return `${bench(b.signals[0])},${bench(b.signals[1])}`;
      default:
        return bench(b.signals[0]);
    }
  }

  /**
   * The frame that carries an action (the reference unit's side), or null when the mapping has no entry for it.
   * Only the entry's own signal is set; the message's other signals are raw 0.
   */
  encode(kind: ObservedActionKind, value: ObservedAction['value'], target?: string, t = 0): TimedFrame | null {
    const b = this.entries.find((e) => e.entry.kind === kind && (target === undefined || e.entry.target === target));
    if (!b) return null;
    const scaled = (v: number) => v * b.entry.scale + b.entry.offset;
    const values: Record<string, number | string> = {};
    if (kind === 'media_source') {
      const dbcValue = b.entry.values?.[String(value)];
      if (dbcValue === undefined) return null;
      values[b.signals[0].name] = dbcValue;
    } else if (kind === 'navigation_destination') {
      const [lat, lon] = String(value).split(',').map(Number);
      values[b.signals[0].name] = scaled(lat);
      values[b.signals[1].name] = scaled(lon);
    } else {
      values[b.signals[0].name] = scaled(Number(value));
    }
    return { t, id: b.message.id, extended: b.message.extended, data: this.codec.encode(b.message.name, values) };
  }
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

function evidenceSignals(decoded: DecodedFrame): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const [name, value] of Object.entries(decoded.signals)) out[name] = decoded.labels[name] ?? (typeof value === 'bigint' ? Number(value) : round(value));
  return out;
}

/** Loads an action mapping by name (hardware/mappings/<name>.yaml) or path; errors name the file and field. */
export function loadActionMapping(nameOrPath: string): ActionMapping {
  const path = PATH_LIKE.test(nameOrPath) ? resolve(nameOrPath) : resolve(MAPPINGS_DIR, `${nameOrPath}.yaml`);
  const { data: config, at } = loadYamlDocument(ActionMappingSchema, path, 'bus action mapping');
  return new ActionMapping(config, resolve(dirname(path), config.dbc), at);
}
