import { z } from 'zod';

export const HHMM = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected a time as HH:MM (00:00–23:59)');
export const ISODate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date as YYYY-MM-DD');

export const GeoPointSchema = z.object({
  lat: z.number().min(-90).max(90),
  lon: z.number().min(-180).max(180),
});
export type GeoPoint = z.infer<typeof GeoPointSchema>;

/** Live vehicle state as the bench knows it at a turn (from a drive scenario / CAN). */
export const VehicleStateSchema = z.object({
  speedKmh: z.number().min(0),
  gear: z.enum(['P', 'R', 'N', 'D']),
  /** engaged or released; absent when the source does not carry it */
  parkingBrake: z.boolean().optional(),
  stateOfChargePct: z.number().min(0).max(100).optional(),
  rangeKm: z.number().min(0).optional(),
  outsideTempC: z.number().optional(),
  hvacSetpointC: z.number().optional(),
  headingDeg: z.number().min(0).max(360).optional(),
});
export type VehicleState = z.infer<typeof VehicleStateSchema>;

/**
 * The context vector c = (location, date, time) of the paper, plus the vehicle
 * state when a scenario or CAN feed supplies it.
 */
export const ContextVectorSchema = z.object({
  location: z.object({
    city: z.string(),
    district: z.string(),
    position: GeoPointSchema,
  }),
  date: ISODate,
  time: HHMM,
  vehicle: VehicleStateSchema.optional(),
});
export type ContextVector = z.infer<typeof ContextVectorSchema>;

export function minutesOfDay(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h * 60 + m;
}

export function formatMinutes(total: number): string {
  const wrapped = ((Math.round(total) % 1440) + 1440) % 1440;
  const h = Math.floor(wrapped / 60);
  const m = wrapped % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
}
