import { z } from 'zod';
import { GeoPointSchema, HHMM, ISODate, VehicleStateSchema } from './context.ts';

/**
 * What a car's context can physically be, in one place: every way a context enters the bench (a live session's
 * commands and its app API, suite files, drive scenarios) checks it against these, so an impossible state (a car
 * in P at 1e308 km/h) is refused with the value, the field and the accepted range instead of being judged. The
 * wire schemas (src/domain/context.ts, from the bridge SDK) stay as they are: what the bench sends already passed
 * these.
 */
interface PhysicalRange {
  /** the quantity as a person names it in a refusal */
  what: string;
  min: number;
  max: number;
  unit: string;
}

export const PHYSICAL_RANGES = {
  speedKmh: { what: 'speed', min: 0, max: 300, unit: 'km/h' },
  stateOfChargePct: { what: 'state of charge', min: 0, max: 100, unit: '%' },
  rangeKm: { what: 'range', min: 0, max: 5000, unit: 'km' },
  outsideTempC: { what: 'outside temperature', min: -50, max: 60, unit: '°C' },
  hvacSetpointC: { what: 'climate setpoint', min: 10, max: 35, unit: '°C' },
  headingDeg: { what: 'heading', min: 0, max: 360, unit: '°' },
  lat: { what: 'latitude', min: -90, max: 90, unit: '°' },
  lon: { what: 'longitude', min: -180, max: 180, unit: '°' },
  batteryCapacityKwh: { what: 'battery capacity', min: 1, max: 250, unit: 'kWh' },
  // a scenario's range (charge × capacity / consumption) stays within `rangeKm`
  consumptionKwhPer100Km: { what: 'consumption', min: 5, max: 100, unit: 'kWh/100 km' },
  chargePowerKw: { what: 'charging power', min: 0, max: 1000, unit: 'kW' },
} as const satisfies Record<string, PhysicalRange>;
export type PhysicalQuantity = keyof typeof PHYSICAL_RANGES;

/** The gears a car can be in. */
export const GEARS = VehicleStateSchema.shape.gear.options;

/** "0–300 km/h", "-50 to 60 °C" */
export function describeRange(quantity: PhysicalQuantity): string {
  const { min, max, unit } = PHYSICAL_RANGES[quantity];
  return `${min < 0 ? `${min} to ${max}` : `${min}–${max}`} ${unit}`;
}

/** A value as the person typed it, as near as a number allows: 1e308, not 1e+308. */
function shown(value: unknown): string {
  return typeof value === 'number' ? String(value).replace('e+', 'e') : JSON.stringify(value) ?? String(value);
}

/** A number of `quantity` within its range; a refusal reads "speed 1e308 km/h is out of range 0–300 km/h". */
export function physical(quantity: PhysicalQuantity) {
  const { what, min, max, unit } = PHYSICAL_RANGES[quantity];
  return z
    .number({ error: (issue) => `${what} ${shown(issue.input)} is not a number: expected ${describeRange(quantity)}` })
    .superRefine((value, ctx) => {
      if (value < min || value > max) ctx.addIssue({ code: 'custom', input: value, message: `${what} ${shown(value)} ${unit} is out of range ${describeRange(quantity)}` });
    });
}

export const GearSchema = z.enum(GEARS, { error: (issue) => `gear ${shown(issue.input)} is not a gear: expected one of ${GEARS.join(', ')}` });

/** A time of day, HH:MM. */
export const TimeOfDaySchema = z.string().superRefine((value, ctx) => {
  if (!HHMM.safeParse(value).success) ctx.addIssue({ code: 'custom', input: value, message: `time ${shown(value)} is not a time of day: expected HH:MM from 00:00 to 23:59` });
});

/** A date that exists on the calendar, YYYY-MM-DD (2026-02-30 does not). */
export const CalendarDateSchema = z.string().superRefine((value, ctx) => {
  const ms = ISODate.safeParse(value).success ? Date.parse(`${value}T00:00:00Z`) : NaN;
  const exists = !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === value;
  if (!exists) ctx.addIssue({ code: 'custom', input: value, message: `date ${shown(value)} is not a calendar date: expected a date as YYYY-MM-DD` });
});

export const PhysicalPositionSchema = GeoPointSchema.extend({ lat: physical('lat'), lon: physical('lon') });

/** The vehicle state as it may be set (a session command, a suite turn, the app): every quantity in its range. */
export const PhysicalVehicleStateSchema = VehicleStateSchema.extend({
  speedKmh: physical('speedKmh'),
  gear: GearSchema,
  stateOfChargePct: physical('stateOfChargePct').optional(),
  rangeKm: physical('rangeKm').optional(),
  outsideTempC: physical('outsideTempC').optional(),
  hvacSetpointC: physical('hvacSetpointC').optional(),
  headingDeg: physical('headingDeg').optional(),
});
