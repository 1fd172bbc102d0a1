import type { MockData } from './mockdata.ts';
import type { NavigationDb, Poi, PoiCategory } from './navdb.ts';
import type { DynamicState, FixedContext } from './state.ts';
import { evaluateArithmetic } from './math.ts';

/**
 * The 57 CAR-bench tools implemented against the dynamic state, the fixed context, the vendored mock data and the
 * synthetic navigation db. A tool rejects a call with a ToolRejection (a CAR-bench tool execution error, code
 * `<ClassName>_NNN`), optionally also a policy error (rules 016-019, 023, 024 are recorded by tools at runtime).
 */

export class ToolRejection extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** the AUT policy rule this rejection also records, e.g. "017" */
    readonly policyRule?: string,
    /** false for "nothing found" answers that CAR-bench does not count as execution errors */
    readonly counted = true,
  ) {
    super(message);
    this.name = 'ToolRejection';
  }
}

export interface Plan {
  plan_id: string;
  title: string;
  steps: Array<{ step_description: string; step_dependent_on: number[]; step_status: string; step_notes: string }>;
}

export interface ToolContext {
  state: DynamicState;
  readonly fixed: FixedContext;
  readonly calendarId: string | null;
  readonly mock: MockData;
  readonly nav: NavigationDb;
  readonly plans: Map<string, Plan>;
  activePlan: string | null;
  /** records an AUT policy error that is not a rejection (rule 016) */
  policyError(rule: string, message: string): void;
  /** tool class name, for error codes */
  readonly className: string;
}

type Args = Record<string, any>;
export type ToolImpl = (args: Args, ctx: ToolContext) => Record<string, unknown>;

const reject = (ctx: ToolContext, n: number, message: string, rule?: string): never => {
  throw new ToolRejection(`${ctx.className}_${String(n).padStart(3, '0')}`, message, rule);
};
const notFound = (ctx: ToolContext, message: string): never => {
  throw new ToolRejection(`${ctx.className}_404`, message, undefined, false);
};

const WINDOW_FIELDS = {
  DRIVER: ['window_driver_position'],
  PASSENGER: ['window_passenger_position'],
  DRIVER_REAR: ['window_driver_rear_position'],
  PASSENGER_REAR: ['window_passenger_rear_position'],
  LEFT_REAR: ['window_driver_rear_position'],
  RIGHT_REAR: ['window_passenger_rear_position'],
  ALL: ['window_driver_position', 'window_passenger_position', 'window_driver_rear_position', 'window_passenger_rear_position'],
} as const;
const READING_FIELDS = {
  DRIVER: ['reading_light_driver'],
  PASSENGER: ['reading_light_passenger'],
  DRIVER_REAR: ['reading_light_driver_rear'],
  PASSENGER_REAR: ['reading_light_passenger_rear'],
  LEFT_REAR: ['reading_light_driver_rear'],
  RIGHT_REAR: ['reading_light_passenger_rear'],
  ALL: ['reading_light_driver', 'reading_light_passenger', 'reading_light_driver_rear', 'reading_light_passenger_rear'],
} as const;

function checkToday(ctx: ToolContext, month: number, day: number, what: string, rule: string): void {
  const now = ctx.fixed.current_datetime;
  if (month !== now.month || day !== now.day)
    reject(ctx, 1, `AUT-POL:${rule}: ${what} can only be requested for the current day (${now.day}.${now.month}.), not ${day}.${month}.`, rule);
}

function hm(minutes: number): string {
  const m = Math.max(0, Math.round(minutes));
  return `${Math.floor(m / 60)}h ${m % 60}min`;
}
function isOpen(hours: string, time: { hour: number; minute: number }): boolean {
  const m = /^(\d\d):(\d\d)-(\d\d):(\d\d)$/.exec(hours);
  if (!m) return false;
  const now = time.hour * 60 + time.minute;
  return now >= Number(m[1]) * 60 + Number(m[2]) && now < Number(m[3]) * 60 + Number(m[4]);
}

function usableKwh(ctx: ToolContext): number {
  return (ctx.fixed.battery_capacity_kwh * ctx.fixed.useable_battery_percentage) / 100;
}
function rangeKm(ctx: ToolContext, fromSoc: number, toSoc: number): number {
  return Math.round((((fromSoc - toSoc) / 100) * usableKwh(ctx) * 100) / ctx.fixed.energy_consumption);
}

/** Minutes to charge from `from` to `to` % with the charging curve (power % of the max per SoC band). */
function chargeMinutes(ctx: ToolContext, maxKw: number, from: number, to: number): number {
  const curve = ctx.fixed.charging_curve_parameters;
  let minutes = 0;
  for (let soc = from; soc < to; soc += 1) {
    const band = curve.soc_tresholds.findIndex((t) => soc < t);
    const pct = curve.power_percentages[band < 0 ? curve.power_percentages.length - 1 : band];
    const kw = (maxKw * pct) / 100;
    minutes += ((ctx.fixed.battery_capacity_kwh / 100) / kw) * 60;
  }
  return minutes;
}
function plugPower(ctx: ToolContext, stationId: string, plugId: string): number {
  const station = ctx.nav.pois.get(stationId);
  if (!station || station.category !== 'charging_stations') return reject(ctx, 1, `charging station ${stationId} not found`);
  const plug = station.charging_plugs?.find((p) => p.plug_id === plugId);
  if (!plug) return reject(ctx, 2, `plug ${plugId} not found at charging station ${stationId}`);
  const carMax = plug.power_type === 'DC' ? ctx.fixed.max_charging_power_dc : ctx.fixed.max_charging_power_ac;
  return Math.min(carMax, plug.power_kw);
}

function navRoute(ctx: ToolContext, routeId: string, n: number) {
  const route = ctx.nav.routes.get(routeId);
  if (!route) reject(ctx, n, `route ${routeId} not found`);
  return route!;
}
function requireActive(ctx: ToolContext): void {
  if (!ctx.state.navigation_active) reject(ctx, 1, 'AUT-POL:017: navigation is not active; set a new navigation first', '017');
}
function writeWaypoints(ctx: ToolContext, waypoints: string[], routes: string[]): void {
  ctx.state.waypoints_id = waypoints;
  ctx.state.routes_to_final_destination_id = routes;
  if (waypoints.length && waypoints[0] !== ctx.fixed.current_location.id)
    ctx.policyError('016', `TECH-AUT-POL:016: the route must start at the current car location ${ctx.fixed.current_location.id}, not ${waypoints[0]}`);
}
function checkLeg(ctx: ToolContext, routeId: string, start: string, dest: string, n: number): void {
  const route = navRoute(ctx, routeId, n);
  if (route.start_id !== start || route.destination_id !== dest) reject(ctx, n, `route ${routeId} leads from ${route.start_id} to ${route.destination_id}, not from ${start} to ${dest}`);
}
function routeView(ctx: ToolContext, routeId: string) {
  const r = ctx.nav.routes.get(routeId);
  return r ? { ...r, alias: undefined } : { route_id: routeId };
}

export const TOOL_IMPLEMENTATIONS: Record<string, ToolImpl> = {
  // ---- helpers
  get_user_preferences: ({ preference_categories }, ctx) => {
    const prefs = ctx.fixed.user_preferences as unknown as Record<string, Record<string, string[]>>;
    const out: Record<string, Record<string, string[]>> = {};
    for (const [category, subs] of Object.entries(preference_categories as Record<string, Record<string, boolean>>)) {
      if (!prefs[category]) reject(ctx, 1, `unknown preference category ${category}`);
      for (const [sub, wanted] of Object.entries(subs ?? {})) if (wanted) (out[category] ??= {})[sub] = prefs[category][sub] ?? [];
    }
    return { user_preferences: out };
  },
  calculate_math: ({ expression }, ctx) => {
    try {
      return { result: evaluateArithmetic(String(expression)) };
    } catch (error) {
      return reject(ctx, 1, `cannot evaluate "${expression}": ${(error as Error).message}`);
    }
  },
  calculate_datetime: ({ original_datetime, times_to_add }, ctx) => {
    const o = original_datetime;
    const date = new Date(Date.UTC(o.year, o.month - 1, o.day, o.hour, o.minute));
    if (Number.isNaN(date.getTime())) reject(ctx, 1, 'invalid original_datetime');
    const add = (times_to_add as Array<{ hours: number; minutes: number }>).reduce((m, t) => m + t.hours * 60 + t.minutes, 0);
    const d = new Date(date.getTime() + add * 60000);
    return { new_datetime: { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes() } };
  },
  think: () => ({ thought_logged: true }),
  planning_tool: (args, ctx) => {
    const id = args.plan_id as string | undefined;
    const need = (): Plan => {
      const plan = ctx.plans.get(id ?? ctx.activePlan ?? '');
      if (!plan) return reject(ctx, 1, `plan ${id ?? '(active)'} not found`);
      return plan;
    };
    switch (args.command) {
      case 'create': {
        if (!id || !args.steps) return reject(ctx, 2, 'create needs plan_id and steps');
        const plan: Plan = { plan_id: id, title: args.title ?? id, steps: args.steps.map((s: Plan['steps'][number]) => ({ ...s, step_status: 'not_started', step_notes: '' })) };
        ctx.plans.set(id, plan);
        ctx.activePlan = id;
        return { plan };
      }
      case 'update': {
        const plan = need();
        if (args.title) plan.title = args.title;
        if (args.steps) plan.steps = args.steps.map((s: Plan['steps'][number]) => ({ ...s, step_status: 'not_started', step_notes: '' }));
        return { plan };
      }
      case 'list':
        return { plans: [...ctx.plans.values()].map((p) => ({ plan_id: p.plan_id, title: p.title })) };
      case 'get':
        return { plan: need() };
      case 'set_active':
        ctx.activePlan = need().plan_id;
        return { active_plan: ctx.activePlan };
      case 'mark_steps': {
        const plan = need();
        for (const u of args.step_updates ?? []) {
          const step = plan.steps[u.step_index];
          if (!step) return reject(ctx, 3, `plan ${plan.plan_id} has no step ${u.step_index}`);
          if (u.step_status) step.step_status = u.step_status;
          if (u.step_notes) step.step_notes = u.step_notes;
        }
        return { plan };
      }
      case 'delete': {
        const plan = need();
        ctx.plans.delete(plan.plan_id);
        if (ctx.activePlan === plan.plan_id) ctx.activePlan = null;
        return { deleted: plan.plan_id };
      }
      default:
        return reject(ctx, 4, `unknown command ${args.command}`);
    }
  },

  // ---- vehicle set
  open_close_sunroof: ({ percentage }, ctx) => {
    ctx.state.sunroof_position = percentage;
    return { percentage };
  },
  open_close_sunshade: ({ percentage }, ctx) => {
    ctx.state.sunshade_position = percentage;
    return { percentage };
  },
  open_close_trunk_door: ({ action }, ctx) => {
    ctx.state.trunk_door_position = action === 'OPEN' ? 'open' : 'closed';
    return { action };
  },
  open_close_window: ({ window, percentage }, ctx) => {
    for (const field of WINDOW_FIELDS[window as keyof typeof WINDOW_FIELDS]) ctx.state[field] = percentage;
    return { window, percentage };
  },
  set_air_circulation: ({ mode }, ctx) => ((ctx.state.air_circulation = mode), { mode }),
  set_air_conditioning: ({ on }, ctx) => ((ctx.state.air_conditioning = on), { on }),
  set_ambient_lights: ({ on, lightcolor }, ctx) => {
    if (on && (lightcolor === 'NONE' || lightcolor === undefined)) reject(ctx, 1, 'a light colour is needed to turn the ambient light on');
    ctx.state.ambient_light = on ? lightcolor : 'OFF';
    return { on, lightcolor: on ? lightcolor : 'NONE' };
  },
  set_climate_temperature: ({ temperature, seat_zone }, ctx) => {
    if (seat_zone !== 'PASSENGER') ctx.state.climate_temperature_driver = temperature;
    if (seat_zone !== 'DRIVER') ctx.state.climate_temperature_passenger = temperature;
    return { temperature, seat_zone };
  },
  set_fan_airflow_direction: ({ direction }, ctx) => ((ctx.state.fan_airflow_direction = direction), { direction }),
  set_fan_speed: ({ level }, ctx) => ((ctx.state.fan_speed = level), { level }),
  set_fog_lights: ({ on }, ctx) => ((ctx.state.fog_lights = on), { on }),
  set_head_lights_high_beams: ({ on }, ctx) => ((ctx.state.head_lights_high_beams = on), { on }),
  set_head_lights_low_beams: ({ on }, ctx) => ((ctx.state.head_lights_low_beams = on), { on }),
  set_reading_light: ({ position, on }, ctx) => {
    for (const field of READING_FIELDS[position as keyof typeof READING_FIELDS]) ctx.state[field] = on;
    return { position };
  },
  set_seat_heating: ({ level, seat_zone }, ctx) => {
    if (seat_zone !== 'PASSENGER') ctx.state.seat_heating_driver = level;
    if (seat_zone !== 'DRIVER') ctx.state.seat_heating_passenger = level;
    return { level, seat_zone };
  },
  set_steering_wheel_heating: ({ level }, ctx) => ((ctx.state.steering_wheel_heating = level), { level }),
  set_window_defrost: ({ on, defrost_window }, ctx) => {
    if (defrost_window !== 'REAR') ctx.state.window_front_defrost = on;
    if (defrost_window !== 'FRONT') ctx.state.window_rear_defrost = on;
    return { on, defrost_window };
  },

  // ---- vehicle get
  get_ambient_light_status_and_color: (_a, ctx) => ({ ambient_light: ctx.state.ambient_light }),
  get_car_color: (_a, ctx) => ({ car_color: ctx.fixed.car_color }),
  get_climate_settings: (_a, { state: s }) => ({
    fan_speed: s.fan_speed,
    fan_airflow_direction: s.fan_airflow_direction,
    air_conditioning: s.air_conditioning,
    air_circulation: s.air_circulation,
    window_front_defrost: s.window_front_defrost,
    window_rear_defrost: s.window_rear_defrost,
  }),
  get_exterior_lights_status: (_a, { state: s }) => ({ fog_lights: s.fog_lights, head_lights_low_beams: s.head_lights_low_beams, head_lights_high_beams: s.head_lights_high_beams }),
  get_reading_lights_status: (_a, { state: s }) => ({
    reading_light_driver: s.reading_light_driver,
    reading_light_passenger: s.reading_light_passenger,
    reading_light_driver_rear: s.reading_light_driver_rear,
    reading_light_passenger_rear: s.reading_light_passenger_rear,
  }),
  get_seat_heating_level: (_a, { state: s }) => ({ seat_heating_driver: s.seat_heating_driver, seat_heating_passenger: s.seat_heating_passenger }),
  get_seats_occupancy: (_a, ctx) => ({ seats_occupied: ctx.fixed.seats_occupied }),
  get_steering_wheel_heating_level: (_a, ctx) => ({ steering_wheel_heating: ctx.state.steering_wheel_heating }),
  get_sunroof_and_sunshade_position: (_a, { state: s }) => ({
    description: 'positions in percent: 0 closed, 100 fully open',
    sunroof_position: s.sunroof_position,
    sunshade_position: s.sunshade_position,
  }),
  get_temperature_inside_car: (_a, { state: s }) => ({ climate_temperature_driver: s.climate_temperature_driver, climate_temperature_passenger: s.climate_temperature_passenger, temperature_unit: 'celsius' }),
  get_trunk_door_position: (_a, ctx) => ({ trunk_door_position: ctx.state.trunk_door_position }),
  get_vehicle_window_positions: (_a, { state: s }) => ({
    description: 'positions in percent: 0 closed, 100 fully open',
    window_driver_position: s.window_driver_position,
    window_passenger_position: s.window_passenger_position,
    window_driver_rear_position: s.window_driver_rear_position,
    window_passenger_rear_position: s.window_passenger_rear_position,
  }),

  // ---- weather
  get_weather: ({ location_or_poi_id, month, day, time_hour_24hformat }, ctx) => {
    checkToday(ctx, month, day, 'the weather', '024');
    const id = String(location_or_poi_id);
    const locationId = id.startsWith('poi_') ? ctx.nav.pois.get(id)?.corresponding_location_id : id;
    const row = locationId ? ctx.mock.weather.get(locationId) : undefined;
    if (!row) return reject(ctx, 2, `no weather for ${id}: unknown location or POI id`);
    const slot = Math.floor(time_hour_24hformat / 3);
    return { location_id: row.location_id, location_name: row.location_name, current_slot: row.weather[slot] ?? null, next_slot: row.weather[slot + 1] ?? null };
  },

  // ---- navigation get
  search_poi_at_location: ({ location_id, category_poi, filters }, ctx) => {
    if (!ctx.nav.location(location_id)) reject(ctx, 1, `location ${location_id} not found (search_poi_at_location takes a location id, see get_location_id_by_location_name)`);
    if (!category_poi) reject(ctx, 2, 'a POI category is needed');
    const origin = ctx.nav.location(location_id)!.position;
    let pois = ctx.nav.poisAtLocation(location_id, category_poi as PoiCategory);
    pois = applyPoiFilters(pois, filters, ctx);
    return {
      pois_found: pois.map((p) => {
        const km = Math.hypot((p.position.latitude - origin.latitude) * 111, (p.position.longitude - origin.longitude) * 73);
        return { ...p, distance_from_location_km: Number(km.toFixed(1)), duration_from_location: { hour: 0, minutes: Math.max(1, Math.round(km * 2)) } };
      }),
    };
  },
  search_poi_along_the_route: ({ route_id, category_poi, at_kilometer, filters }, ctx) => {
    navRoute(ctx, route_id, 1);
    if (!category_poi) reject(ctx, 2, 'a POI category is needed');
    let found = ctx.nav.poisAlongRoute(route_id, category_poi as PoiCategory, at_kilometer);
    const byDistance = (filters ?? []).includes('any::sort_by_distance');
    const kept = new Set(applyPoiFilters(found.map((f) => f.poi), filters, ctx).map((p) => p.id));
    found = found.filter((f) => kept.has(f.poi.id)).sort((a, b) => (byDistance ? a.detour_km - b.detour_km : a.detour_minutes - b.detour_minutes)).slice(0, 3);
    return {
      pois_found_along_route: found.map((f) => ({
        ...f.poi,
        at_route_kilometer: f.at_route_kilometer,
        detour_from_route_km: { detour: f.detour_km, unit: 'km' },
        detour_from_route_time: { hour: Math.floor(f.detour_minutes / 60), minutes: f.detour_minutes % 60 },
      })),
    };
  },
  get_routes_from_start_to_destination: ({ start_id, destination_id }, ctx) => {
    const routes = ctx.nav.routesBetween(start_id, destination_id);
    if (!routes) return reject(ctx, 1, `no route from ${start_id} to ${destination_id}: unknown id or same place`);
    return { routes };
  },
  get_location_id_by_location_name: ({ location }, ctx) => {
    const id = ctx.nav.locationIdByName(String(location));
    if (!id) return notFound(ctx, `no location named "${location}" in the navigation database`);
    return { id };
  },
  get_current_navigation_state: ({ detailed_information }, ctx) => {
    const s = ctx.state;
    const out: Record<string, unknown> = { navigation_active: s.navigation_active, waypoints_id: [...s.waypoints_id], routes_to_final_destination_id: [...s.routes_to_final_destination_id] };
    if (detailed_information && s.navigation_active)
      out.details = { waypoints: s.waypoints_id.map((id) => ctx.nav.place(id) ?? { id }), routes: s.routes_to_final_destination_id.map((id) => routeView(ctx, id)) };
    return out;
  },
  convert_route_distance_and_time: ({ route_id, time_minutes, distance_km }, ctx) => {
    const r = navRoute(ctx, route_id, 1);
    const kmPerMin = r.distance_km / (r.duration_hours * 60 + r.duration_minutes);
    if (time_minutes === undefined && distance_km === undefined) reject(ctx, 2, 'give time_minutes or distance_km');
    return {
      ...(time_minutes !== undefined ? { distance_km: Number((time_minutes * kmPerMin).toFixed(1)) } : {}),
      ...(distance_km !== undefined ? { time_minutes: Math.round(distance_km / kmPerMin) } : {}),
    };
  },

  // ---- navigation set
  set_new_navigation: ({ route_ids }, ctx) => {
    if (ctx.state.navigation_active) reject(ctx, 1, 'AUT-POL:018: navigation is already active; edit it with the waypoint/destination tools or delete it first', '018');
    if (!route_ids?.length) reject(ctx, 2, 'at least one route id is needed');
    const routes = (route_ids as string[]).map((id) => navRoute(ctx, id, 3));
    for (let i = 1; i < routes.length; i++) if (routes[i].start_id !== routes[i - 1].destination_id) reject(ctx, 4, `route ${routes[i].route_id} does not start where ${routes[i - 1].route_id} ends`);
    const waypoints = [routes[0].start_id, ...routes.map((r) => r.destination_id)];
    ctx.state.navigation_active = true;
    writeWaypoints(ctx, waypoints, [...route_ids]);
    return { navigation_set: true, start_id: waypoints[0], waypoints: waypoints.slice(1, -1), destination_id: waypoints.at(-1) };
  },
  navigation_add_one_waypoint: (a, ctx) => {
    requireActive(ctx);
    const wps = [...ctx.state.waypoints_id];
    const routes = [...ctx.state.routes_to_final_destination_id];
    const before = wps.indexOf(a.waypoint_id_before_new_waypoint);
    if (before < 0) reject(ctx, 2, `waypoint ${a.waypoint_id_before_new_waypoint} is not in the current route`);
    const atEnd = before === wps.length - 1;
    if (!atEnd) {
      if (a.waypoint_id_after_new_waypoint !== wps[before + 1]) reject(ctx, 3, `the waypoint after ${wps[before]} is ${wps[before + 1]}, not ${a.waypoint_id_after_new_waypoint}`);
      if (!a.route_id_leading_away_from_new_waypoint) reject(ctx, 4, 'route_id_leading_away_from_new_waypoint is needed for a stop before another waypoint');
    }
    checkLeg(ctx, a.route_id_leading_to_new_waypoint, wps[before], a.waypoint_id_to_add, 5);
    if (!atEnd) checkLeg(ctx, a.route_id_leading_away_from_new_waypoint, a.waypoint_id_to_add, wps[before + 1], 6);
    wps.splice(before + 1, 0, a.waypoint_id_to_add);
    routes.splice(before, atEnd ? 0 : 1, ...(atEnd ? [a.route_id_leading_to_new_waypoint] : [a.route_id_leading_to_new_waypoint, a.route_id_leading_away_from_new_waypoint]));
    writeWaypoints(ctx, wps, routes);
    return { waypoint_added: true, new_waypoints_id: wps, new_routes_id: routes };
  },
  navigation_replace_one_waypoint: (a, ctx) => {
    requireActive(ctx);
    const wps = [...ctx.state.waypoints_id];
    const routes = [...ctx.state.routes_to_final_destination_id];
    const i = wps.indexOf(a.waypoint_id_to_replace);
    if (i <= 0 || i >= wps.length - 1) reject(ctx, 2, `${a.waypoint_id_to_replace} is not an intermediate stop of the current route`);
    checkLeg(ctx, a.route_id_leading_to_new_waypoint, wps[i - 1], a.new_waypoint_id, 3);
    checkLeg(ctx, a.route_id_leading_away_from_new_waypoint, a.new_waypoint_id, wps[i + 1], 4);
    wps[i] = a.new_waypoint_id;
    routes.splice(i - 1, 2, a.route_id_leading_to_new_waypoint, a.route_id_leading_away_from_new_waypoint);
    writeWaypoints(ctx, wps, routes);
    return { waypoint_replaced: true, new_waypoints: wps, new_routes: routes };
  },
  navigation_replace_final_destination: (a, ctx) => {
    requireActive(ctx);
    const wps = [...ctx.state.waypoints_id];
    const routes = [...ctx.state.routes_to_final_destination_id];
    checkLeg(ctx, a.route_id_leading_to_new_destination, wps[wps.length - 2], a.new_destination_id, 2);
    wps[wps.length - 1] = a.new_destination_id;
    routes[routes.length - 1] = a.route_id_leading_to_new_destination;
    writeWaypoints(ctx, wps, routes);
    return { destination_replaced: true, new_waypoints: wps, new_routes: routes };
  },
  navigation_delete_waypoint: (a, ctx) => {
    requireActive(ctx);
    const wps = [...ctx.state.waypoints_id];
    const routes = [...ctx.state.routes_to_final_destination_id];
    const i = wps.indexOf(a.waypoint_id_to_delete);
    if (i <= 0 || i >= wps.length - 1) reject(ctx, 2, `${a.waypoint_id_to_delete} is not an intermediate stop of the current route`);
    checkLeg(ctx, a.route_id_without_waypoint, wps[i - 1], wps[i + 1], 3);
    wps.splice(i, 1);
    routes.splice(i - 1, 2, a.route_id_without_waypoint);
    writeWaypoints(ctx, wps, routes);
    return { waypoint_deleted: true, new_waypoints: wps, new_routes: routes };
  },
  navigation_delete_destination: (a, ctx) => {
    requireActive(ctx);
    const wps = [...ctx.state.waypoints_id];
    const routes = [...ctx.state.routes_to_final_destination_id];
    if (wps.length < 3) reject(ctx, 2, 'AUT-POL:019: the route has no intermediate stop, so its destination cannot be deleted', '019');
    if (wps.at(-1) !== a.destination_id_to_delete) reject(ctx, 3, `${a.destination_id_to_delete} is not the final destination (${wps.at(-1)})`);
    wps.pop();
    routes.pop();
    writeWaypoints(ctx, wps, routes);
    return { destination_deleted: true, new_waypoints: wps, new_routes: routes };
  },
  delete_current_navigation: (_a, ctx) => {
    ctx.state.navigation_active = false;
    ctx.state.waypoints_id = [];
    ctx.state.routes_to_final_destination_id = [];
    return { navigation_active: false, new_waypoints: [], new_routes: [] };
  },

  // ---- charging
  get_charging_specs_and_status: (_a, ctx) => ({
    battery_capacity_kwh: ctx.fixed.battery_capacity_kwh,
    max_charging_power_ac: ctx.fixed.max_charging_power_ac,
    max_charging_power_dc: ctx.fixed.max_charging_power_dc,
    state_of_charge: ctx.fixed.state_of_charge,
    remaining_range: `${rangeKm(ctx, ctx.fixed.state_of_charge, 0)} km`,
  }),
  get_distance_by_soc: ({ initial_state_of_charge, final_state_of_charge }, ctx) => {
    const final = final_state_of_charge ?? 0;
    if (final > initial_state_of_charge) reject(ctx, 1, 'the final state of charge must not exceed the initial one');
    return { distance_km_for_initial_until_final_percent_soc: `${rangeKm(ctx, initial_state_of_charge, final)} km` };
  },
  calculate_charging_time_by_soc: (a, ctx) => {
    const kw = plugPower(ctx, a.charging_station_id, a.charging_station_plug_id);
    const start = a.start_state_of_charge;
    const out: Record<string, string> = {
      time_from_start_state_of_charge_until_80_percent_soc: hm(chargeMinutes(ctx, kw, start, Math.max(start, 80))),
      time_from_start_state_of_charge_until_100_percent_soc: hm(chargeMinutes(ctx, kw, start, 100)),
    };
    if (a.target_state_of_charge !== undefined) {
      if (a.target_state_of_charge < start) reject(ctx, 3, 'the target state of charge is below the start');
      out.time_from_start_state_of_charge_until_target_state_of_charge_percent_soc = hm(chargeMinutes(ctx, kw, start, a.target_state_of_charge));
    }
    return out;
  },
  calculate_charging_soc_by_time: (a, ctx) => {
    const kw = plugPower(ctx, a.charging_station_id, a.charging_station_plug_id);
    let soc = a.start_state_of_charge;
    while (soc < 100 && chargeMinutes(ctx, kw, a.start_state_of_charge, soc + 1) <= a.charging_time) soc += 1;
    return { soc_in_percent_after_charging_for_time_minutes: `${soc}%` };
  },

  // ---- productivity and communication
  get_contact_id_by_contact_name: ({ contact_first_name, contact_last_name }, ctx) => {
    if (!contact_first_name && !contact_last_name) reject(ctx, 1, 'give a first name, a last name or both');
    const first = contact_first_name?.toLowerCase();
    const last = contact_last_name?.toLowerCase();
    const hits = [...ctx.mock.contacts.values()].filter((c) => (!first || c.name.first_name.toLowerCase() === first) && (!last || c.name.last_name.toLowerCase() === last));
    if (!hits.length) return notFound(ctx, `no contact named ${[contact_first_name, contact_last_name].filter(Boolean).join(' ')}`);
    if (hits.length === 1) return { id: hits[0].id, name: `${hits[0].name.first_name} ${hits[0].name.last_name}` };
    return { matches: Object.fromEntries(hits.map((c) => [c.id, `${c.name.first_name} ${c.name.last_name}`])) };
  },
  get_entries_from_calendar: ({ month, day }, ctx) => {
    checkToday(ctx, month, day, 'calendar entries', '023');
    const cal = ctx.calendarId ? ctx.mock.calendars.get(ctx.calendarId) : undefined;
    const now = ctx.fixed.current_datetime;
    return { date: { year: now.year, month: now.month, day: now.day }, meetings: cal?.meetings ?? [] };
  },
  get_contact_information: ({ contact_ids }, ctx) => {
    const result: Record<string, unknown> = {};
    for (const id of contact_ids as string[]) {
      const c = ctx.mock.contacts.get(id);
      if (!c) return reject(ctx, 1, `contact id ${id} not found`);
      result[id] = { name: c.name, phone_number: c.phone_number, email: c.email };
    }
    return { result };
  },
  call_phone_by_number: ({ phone_number }, ctx) => {
    if (!/^\+?[\d ]{6,}$/.test(String(phone_number))) reject(ctx, 1, `"${phone_number}" is not a phone number`);
    ctx.state.phone_numbers_called = [...ctx.state.phone_numbers_called, phone_number];
    return { phone_number_called: true };
  },
  send_email: ({ email_addresses }, ctx) => {
    const known = new Set([...ctx.mock.contacts.values()].map((c) => c.email));
    for (const address of email_addresses as string[]) if (!known.has(address)) reject(ctx, 1, `unknown email address ${address}`);
    if (!(email_addresses as string[]).length) reject(ctx, 2, 'at least one email address is needed');
    ctx.state.email_addresses_sent_mail_to = [...ctx.state.email_addresses_sent_mail_to, ...email_addresses];
    return { email_sent: true };
  },
};

function applyPoiFilters<T extends Poi>(pois: T[], filters: string[] | undefined, ctx: ToolContext): T[] {
  let out = pois;
  for (const filter of filters ?? []) {
    if (filter === 'any::currently_open') out = out.filter((p) => isOpen(p.opening_hours, ctx.fixed.current_datetime));
    else if (filter === 'charging_stations::has_available_plug') out = out.filter((p) => p.charging_plugs?.some((c) => c.availability === 'available'));
    else if (filter === 'charging_stations::has_dc_plug') out = out.filter((p) => p.charging_plugs?.some((c) => c.power_type === 'DC'));
  }
  return out;
}

