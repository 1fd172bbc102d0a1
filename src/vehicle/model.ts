import type { GeoPoint, VehicleState } from '../domain/context.ts';

/** Everything the bench knows about the car at one instant: what a scenario produces and CAN carries. */
export interface VehicleSnapshot {
  vehicle: VehicleState;
  position: GeoPoint;
  /** YYYY-MM-DD */
  date: string;
  /** HH:MM */
  time: string;
  /** seconds within the minute, 0-59 */
  second: number;
}

/** The context signals a mapping can place onto a DBC (units in the names: the bench's units, not the car's). */
export const CONTEXT_SIGNALS = [
  'speedKmh',
  'gear',
  'parkingBrake',
  'stateOfChargePct',
  'rangeKm',
  'outsideTempC',
  'hvacSetpointC',
  'latitudeDeg',
  'longitudeDeg',
  'headingDeg',
  'year',
  'month',
  'day',
  'hour',
  'minute',
  'second',
] as const;
export type ContextSignal = (typeof CONTEXT_SIGNALS)[number];
export type NumericContextSignal = Exclude<ContextSignal, 'gear'>;
export type Gear = VehicleState['gear'];

/** The value of a numeric context signal in a snapshot; undefined when the snapshot lacks it. */
export function numericSignalValue(snapshot: VehicleSnapshot, signal: NumericContextSignal): number | undefined {
  const v = snapshot.vehicle;
  switch (signal) {
    case 'speedKmh':
      return v.speedKmh;
    case 'parkingBrake':
      // 1 engaged, 0 released: the convention of the parking-brake status bits in the DBCs we map
      return v.parkingBrake === undefined ? undefined : Number(v.parkingBrake);
    case 'stateOfChargePct':
      return v.stateOfChargePct;
    case 'rangeKm':
      return v.rangeKm;
    case 'outsideTempC':
      return v.outsideTempC;
    case 'hvacSetpointC':
      return v.hvacSetpointC;
    case 'headingDeg':
      return v.headingDeg;
    case 'latitudeDeg':
      return snapshot.position.lat;
    case 'longitudeDeg':
      return snapshot.position.lon;
    case 'year':
      return Number(snapshot.date.slice(0, 4));
    case 'month':
      return Number(snapshot.date.slice(5, 7));
    case 'day':
      return Number(snapshot.date.slice(8, 10));
    case 'hour':
      return Number(snapshot.time.slice(0, 2));
    case 'minute':
      return Number(snapshot.time.slice(3, 5));
    case 'second':
      return snapshot.second;
  }
}
