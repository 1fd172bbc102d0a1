import { z } from 'zod';
import { HHMM } from './context.ts';
import { CostLevelSchema, MEDIA_SOURCES, PoiCategorySchema } from '../../packages/bridge-sdk/src/protocol/context.ts';

/** the categories, cost levels and media sources are wire vocabulary (assistant_reply actions): the SDK holds them */
export { COST_LEVELS, CostLevelSchema, MEDIA_SOURCES, POI_CATEGORIES, PoiCategorySchema, type CostLevel, type PoiCategory } from '../../packages/bridge-sdk/src/protocol/context.ts';

/** One material requirement the user stated. Each kind is checkable against a structured reply. */
export const ConstraintSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('cuisine'), value: z.string() }),
  z.strictObject({ kind: z.literal('max_cost'), value: CostLevelSchema }),
  z.strictObject({ kind: z.literal('min_rating'), value: z.number().min(0).max(5) }),
  z.strictObject({ kind: z.literal('open_at'), value: HHMM }),
  z.strictObject({ kind: z.literal('district'), value: z.string() }),
  z.strictObject({ kind: z.literal('max_drive_min'), value: z.number().positive() }),
  z.strictObject({ kind: z.literal('avoid_tolls') }),
  z.strictObject({ kind: z.literal('avoid_highways') }),
  z.strictObject({ kind: z.literal('arrive_by'), value: HHMM }),
]);
export type Constraint = z.infer<typeof ConstraintSchema>;
export type ConstraintKind = Constraint['kind'];

export const PlanStopSchema = z.strictObject({
  category: PoiCategorySchema,
  constraints: z.array(ConstraintSchema).default([]),
  /** latest arrival time at this stop */
  arriveBy: HHMM.optional(),
});
export type PlanStop = z.infer<typeof PlanStopSchema>;

export const VEHICLE_INFO_FIELDS = ['range', 'state_of_charge', 'tire_pressure', 'outside_temperature', 'oil_level'] as const;
export type VehicleInfoField = (typeof VEHICLE_INFO_FIELDS)[number];

/** What the user wants done, independent of wording. */
export const RequestSchema = z.discriminatedUnion('intent', [
  z.strictObject({ intent: z.literal('find_poi'), category: PoiCategorySchema, constraints: z.array(ConstraintSchema).default([]) }),
  z.strictObject({
    intent: z.literal('navigate'),
    /** a district, or "poi" to navigate to the place chosen for another target */
    destination: z.string(),
    constraints: z.array(ConstraintSchema).default([]),
  }),
  z.strictObject({ intent: z.literal('plan_trip'), stops: z.array(PlanStopSchema).min(1) }),
  z.strictObject({ intent: z.literal('set_climate'), setpointC: z.number().min(16).max(30) }),
  z.strictObject({ intent: z.literal('play_media'), source: z.enum(MEDIA_SOURCES), item: z.string() }),
  z.strictObject({ intent: z.literal('vehicle_info'), field: z.enum(VEHICLE_INFO_FIELDS) }),
]);
export type Request = z.infer<typeof RequestSchema>;
export type Intent = Request['intent'];

export const INTENT_DOMAIN: Record<Intent, string> = {
  find_poi: 'poi',
  navigate: 'navigation',
  plan_trip: 'planning',
  set_climate: 'climate',
  play_media: 'media',
  vehicle_info: 'vehicle',
};

/** g_k of the paper: -1 dropped, 0 incomplete, 1 completed. */
export const TargetStatusSchema = z.union([z.literal(-1), z.literal(0), z.literal(1)]);
export type TargetStatus = z.infer<typeof TargetStatusSchema>;

/**
 * What the simulator, knowing the world, expects of a target: `none_exists` when no place of the world meets
 * its stated constraints (a truthful "not found" completes it; any place offered as a match is a failure).
 */
export const ExpectedOutcomeSchema = z.enum(['none_exists']);
export type ExpectedOutcome = z.infer<typeof ExpectedOutcomeSchema>;

export const TargetSchema = z.object({
  id: z.string(),
  request: RequestSchema,
  status: TargetStatusSchema,
  /** absent: the target can be met (or the bench does not know the unit's world) */
  expectedOutcome: ExpectedOutcomeSchema.optional(),
  introducedTurn: z.number().int().nullable(),
  completedTurn: z.number().int().nullable(),
});
export type Target = z.infer<typeof TargetSchema>;

export function constraintsOf(request: Request): Constraint[] {
  if (request.intent === 'find_poi' || request.intent === 'navigate') return request.constraints;
  if (request.intent === 'plan_trip') return request.stops.flatMap((s) => s.constraints);
  return [];
}

export function describeConstraint(c: Constraint): string {
  switch (c.kind) {
    case 'cuisine':
      return `${c.value} cuisine`;
    case 'max_cost':
      return `cost at most ${c.value}`;
    case 'min_rating':
      return `rating at least ${c.value}`;
    case 'open_at':
      return `open at ${c.value}`;
    case 'district':
      return `in ${c.value}`;
    case 'max_drive_min':
      return `within ${c.value} min drive`;
    case 'avoid_tolls':
      return 'no tolls';
    case 'avoid_highways':
      return 'no highways';
    case 'arrive_by':
      return `arrive by ${c.value}`;
  }
}
