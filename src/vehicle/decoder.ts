import { VehicleStateSchema, type GeoPoint, type VehicleState } from '../domain/context.ts';
import { describeZodError } from '../domain/validation.ts';
import { VehicleContextMessageSchema, messageToFrames } from './bridge.ts';
import type { TimedFrame } from './frames.ts';
import type { VehicleMapping } from './mapping.ts';
import type { Gear, NumericContextSignal } from './model.ts';

/** What the head unit knows about the car from the frames received so far. */
export type DecodedVehicleContext = VehicleState & { position?: GeoPoint; date?: string; time?: string };

export interface VehicleDecoderCounts {
  framesAccepted: number;
  /** frames whose id is not in the DBC */
  unknownId: number;
  /** frames whose length differs from the DBC's */
  lengthMismatch: number;
  /** mapped values outside the DBC's declared range or not a valid vehicle state (negative speed, unknown gear, …) */
  valuesRejected: number;
  /** vehicle_context messages that failed validation or named another DBC (their frames are not counted above) */
  messagesRejected: number;
}

export interface IngestOutcome {
  accepted: number;
  rejected: number;
  problems: string[];
}

const VEHICLE_FIELDS = ['speedKmh', 'stateOfChargePct', 'rangeKm', 'outsideTempC', 'hvacSetpointC', 'headingDeg'] as const;
type VehicleField = (typeof VEHICLE_FIELDS)[number];
const MAX_KEPT_PROBLEMS = 50;

/**
 * Head-unit side of the vehicle context: ingests vehicle_context batches with a DBC + mapping and keeps the
 * latest value of every context signal. Bad frames and values are counted and described, never used.
 */
export class VehicleContextDecoder {
  private readonly values: Partial<Record<NumericContextSignal, number>> = {};
  private gear: Gear | undefined;
  private readonly tally: VehicleDecoderCounts = { framesAccepted: 0, unknownId: 0, lengthMismatch: 0, valuesRejected: 0, messagesRejected: 0 };
  /** the most recent problems, oldest first */
  readonly recentProblems: string[] = [];

  constructor(readonly mapping: VehicleMapping) {}

  private note(problem: string, into: string[]): void {
    into.push(problem);
    this.recentProblems.push(problem);
    if (this.recentProblems.length > MAX_KEPT_PROBLEMS) this.recentProblems.shift();
  }

  /** A vehicle_context payload as received over the bridge (validated here). */
  ingest(payload: unknown): IngestOutcome {
    const parsed = VehicleContextMessageSchema.safeParse(payload);
    const problems: string[] = [];
    if (!parsed.success) {
      this.tally.messagesRejected++;
      this.note(`vehicle_context: ${describeZodError(parsed.error)}`, problems);
      return { accepted: 0, rejected: 0, problems };
    }
    if (parsed.data.dbc !== this.mapping.dbcName) {
      this.tally.messagesRejected++;
      this.note(`vehicle_context: frames follow DBC "${parsed.data.dbc}", this head unit decodes "${this.mapping.dbcName}"`, problems);
      return { accepted: 0, rejected: parsed.data.frames.length, problems };
    }
    return this.ingestFrames(messageToFrames(parsed.data));
  }

  ingestFrames(frames: readonly TimedFrame[]): IngestOutcome {
    const outcome: IngestOutcome = { accepted: 0, rejected: 0, problems: [] };
    for (const frame of frames) {
      const result = this.mapping.codec.decode(frame);
      if (!result.ok) {
        if (result.problem === 'unknown_id') this.tally.unknownId++;
        else this.tally.lengthMismatch++;
        outcome.rejected++;
        this.note(`t=${frame.t}: ${result.detail}`, outcome.problems);
        continue;
      }
      outcome.accepted++;
      this.tally.framesAccepted++;
      const { values, rejected } = this.mapping.contextValues(result.frame);
      for (const problem of rejected) {
        this.tally.valuesRejected++;
        this.note(`t=${frame.t}: ${problem}`, outcome.problems);
      }
      if (values.gear) this.gear = values.gear;
      for (const [signal, value] of Object.entries(values) as Array<[NumericContextSignal | 'gear', number]>) {
        if (signal === 'gear') continue;
        const invalid = this.invalidReason(signal, value);
        if (invalid) {
          this.tally.valuesRejected++;
          this.note(`t=${frame.t}: ${signal} = ${value}: ${invalid}`, outcome.problems);
        } else {
          this.values[signal] = value;
        }
      }
    }
    return outcome;
  }

  /** why a decoded value cannot be a vehicle state (the shared VehicleState schema decides), or undefined */
  private invalidReason(signal: NumericContextSignal, value: number): string | undefined {
    if ((VEHICLE_FIELDS as readonly string[]).includes(signal)) {
      const result = VehicleStateSchema.shape[signal as VehicleField].safeParse(value);
      return result.success ? undefined : describeZodError(result.error);
    }
    if (signal === 'parkingBrake' && value !== 0 && value !== 1) return 'expected 1 (engaged) or 0 (released)';
    if (signal === 'latitudeDeg' && Math.abs(value) > 90) return 'expected a latitude within ±90';
    if (signal === 'longitudeDeg' && Math.abs(value) > 180) return 'expected a longitude within ±180';
    return undefined;
  }

  /** The current context; null until both speed and gear have been received. */
  state(): DecodedVehicleContext | null {
    const v = this.values;
    if (v.speedKmh === undefined || this.gear === undefined) return null;
    const state: DecodedVehicleContext = { speedKmh: v.speedKmh, gear: this.gear };
    for (const field of VEHICLE_FIELDS) if (field !== 'speedKmh' && v[field] !== undefined) state[field] = v[field];
    if (v.parkingBrake !== undefined) state.parkingBrake = v.parkingBrake === 1;
    if (v.latitudeDeg !== undefined && v.longitudeDeg !== undefined) state.position = { lat: v.latitudeDeg, lon: v.longitudeDeg };
    const pad = (n: number, width = 2) => String(Math.round(n)).padStart(width, '0');
    if (v.year !== undefined && v.month !== undefined && v.day !== undefined) state.date = `${pad(v.year, 4)}-${pad(v.month)}-${pad(v.day)}`;
    if (v.hour !== undefined && v.minute !== undefined) state.time = `${pad(v.hour)}:${pad(v.minute)}`;
    return state;
  }

  counts(): VehicleDecoderCounts {
    return { ...this.tally };
  }
}
