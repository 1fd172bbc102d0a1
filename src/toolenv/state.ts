import { z } from 'zod';

/**
 * The in-car state of the CAR-bench tool environment (scoring.md §6): the 31 dynamic fields, in hash order, that the
 * final/intermediate state comparison uses, and the fixed context (car specs, seats, location, time, preferences)
 * that tools read but never write.
 */

export const AMBIENT_COLORS = ['RED', 'GREEN', 'BLUE', 'YELLOW', 'WHITE', 'PINK', 'ORANGE', 'PURPLE', 'CYAN'] as const;
export const AIRFLOW_DIRECTIONS = ['FEET', 'HEAD', 'HEAD_FEET', 'WINDSHIELD', 'WINDSHIELD_FEET', 'WINDSHIELD_HEAD', 'WINDSHIELD_HEAD_FEET'] as const;
export const AIR_CIRCULATION_MODES = ['FRESH_AIR', 'RECIRCULATION', 'AUTO'] as const;

const percent = z.number().int().min(0).max(100);
const level3 = z.number().int().min(0).max(3);
const temperature = z.number().min(16).max(28).multipleOf(0.5);

/** The 31 dynamic fields with their types; key order is the hash order of CAR-bench's ContextState. */
export const DynamicStateSchema = z.object({
  sunroof_position: percent,
  sunshade_position: percent,
  trunk_door_position: z.enum(['closed', 'open']),
  window_driver_position: percent,
  window_passenger_position: percent,
  window_driver_rear_position: percent,
  window_passenger_rear_position: percent,
  reading_light_driver: z.boolean(),
  reading_light_passenger: z.boolean(),
  reading_light_driver_rear: z.boolean(),
  reading_light_passenger_rear: z.boolean(),
  fog_lights: z.boolean(),
  head_lights_low_beams: z.boolean(),
  head_lights_high_beams: z.boolean(),
  ambient_light: z.enum(['OFF', ...AMBIENT_COLORS]),
  climate_temperature_driver: temperature,
  climate_temperature_passenger: temperature,
  steering_wheel_heating: level3,
  seat_heating_driver: level3,
  seat_heating_passenger: level3,
  fan_speed: z.number().int().min(0).max(5),
  window_front_defrost: z.boolean(),
  window_rear_defrost: z.boolean(),
  fan_airflow_direction: z.enum(AIRFLOW_DIRECTIONS),
  air_conditioning: z.boolean(),
  air_circulation: z.enum(AIR_CIRCULATION_MODES),
  navigation_active: z.boolean(),
  waypoints_id: z.array(z.string()),
  routes_to_final_destination_id: z.array(z.string()),
  email_addresses_sent_mail_to: z.array(z.string()),
  phone_numbers_called: z.array(z.string()),
});
export type DynamicState = z.infer<typeof DynamicStateSchema>;
export type StateField = keyof DynamicState;
export const STATE_FIELDS = Object.keys(DynamicStateSchema.shape) as StateField[];

export const PositionSchema = z.object({ longitude: z.number(), latitude: z.number() });
export const LocationSchema = z.object({ id: z.string().min(1), name: z.string().min(1), position: PositionSchema });
export type Location = z.infer<typeof LocationSchema>;

export const DateTimeSchema = z.object({
  year: z.number().int(),
  month: z.number().int().min(1).max(12),
  day: z.number().int().min(1).max(31),
  hour: z.number().int().min(0).max(23),
  minute: z.number().int().min(0).max(59),
});
export type DateTime = z.infer<typeof DateTimeSchema>;

const prefList = z.array(z.string());
export const UserPreferencesSchema = z.object({
  points_of_interest: z.object({
    airports: prefList,
    bakery: prefList,
    fast_food: prefList,
    parking: prefList,
    public_toilets: prefList,
    restaurants: prefList,
    supermarkets: prefList,
    charging_stations: prefList,
  }),
  navigation_and_routing: z.object({ route_selection: prefList }),
  vehicle_settings: z.object({ climate_control: prefList, vehicle_settings: prefList }),
  productivity_and_communication: z.object({ email: prefList, calendar: prefList }),
  weather: z.object({ weather: prefList }),
});
export type UserPreferences = z.infer<typeof UserPreferencesSchema>;

export const FixedContextSchema = z.object({
  car_color: z.string().min(1),
  battery_capacity_kwh: z.number().positive(),
  useable_battery_percentage: z.number().min(0).max(100),
  max_charging_power_ac: z.number().positive(),
  max_charging_power_dc: z.number().positive(),
  energy_consumption: z.number().positive(),
  charging_curve_parameters: z
    .object({ soc_tresholds: z.array(z.number()).min(1), power_percentages: z.array(z.number()).min(1) })
    .refine((c) => c.soc_tresholds.length === c.power_percentages.length, { message: 'soc_tresholds and power_percentages must have the same length' }),
  state_of_charge: z.number().min(0).max(100),
  seats_occupied: z.object({ driver: z.boolean(), passenger: z.boolean(), driver_rear: z.boolean(), passenger_rear: z.boolean() }),
  current_location: LocationSchema,
  current_datetime: DateTimeSchema,
  user_preferences: UserPreferencesSchema,
});
export type FixedContext = z.infer<typeof FixedContextSchema>;

export function pickDynamicState(config: Record<string, unknown>): DynamicState {
  const out: Record<string, unknown> = {};
  for (const field of STATE_FIELDS) out[field] = structuredClone(config[field]);
  return DynamicStateSchema.parse(out);
}

export function pickFixedContext(config: Record<string, unknown>): FixedContext {
  return FixedContextSchema.parse(config);
}

/**
 * The normalised state key: every field in hash order, `field=value` with JSON values, temperatures always written
 * as floats (CAR-bench's hash tells 20 from 20.0; every task sets them as floats, so this keeps the same equality).
 */
export function stateKey(state: DynamicState): string {
  return STATE_FIELDS.map((field) => {
    const value = state[field];
    const text = field.startsWith('climate_temperature_') ? (value as number).toFixed(1) : JSON.stringify(value);
    return `${field}=${text}`;
  }).join(' ');
}

export interface FieldDifference {
  field: StateField;
  expected: unknown;
  actual: unknown;
}

/** The fields whose values differ, in hash order: the diff a technician reads instead of a hash mismatch. */
export function diffStates(expected: DynamicState, actual: DynamicState): FieldDifference[] {
  const out: FieldDifference[] = [];
  for (const field of STATE_FIELDS) {
    if (JSON.stringify(expected[field]) !== JSON.stringify(actual[field])) out.push({ field, expected: expected[field], actual: actual[field] });
  }
  return out;
}

export function formatStateDiff(diff: FieldDifference[]): string {
  if (!diff.length) return 'states equal';
  return diff.map((d) => `${d.field}: expected ${JSON.stringify(d.expected)}, got ${JSON.stringify(d.actual)}`).join('; ');
}
