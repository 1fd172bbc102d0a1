import { z } from 'zod';

/**
 * The context a turn happens in, as it travels on the wire (session_start, user_turn): the context vector
 * c = (location, date, time) plus the vehicle state when the bench knows it. The bench builds its own
 * vocabulary on these schemas (src/domain/context.ts re-exports them).
 */
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

/** Vocabulary the structured actions of assistant_reply use (src/domain/targets.ts re-exports it). */
export const COST_LEVELS = ['low', 'medium', 'high'] as const;
export const CostLevelSchema = z.enum(COST_LEVELS);
export type CostLevel = z.infer<typeof CostLevelSchema>;

export const POI_CATEGORIES = ['restaurant', 'charger', 'pharmacy', 'park', 'cafe', 'parking'] as const;
export const PoiCategorySchema = z.enum(POI_CATEGORIES);
export type PoiCategory = z.infer<typeof PoiCategorySchema>;

export const MEDIA_SOURCES = ['radio', 'music', 'podcast', 'video'] as const;
