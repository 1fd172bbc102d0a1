import { createHash } from 'node:crypto';
import type { Task } from './tasks.ts';
import type { MockData } from './mockdata.ts';
import type { Location } from './state.ts';

/**
 * A deterministic SYNTHETIC navigation database (POIs, charging plugs, routes). CAR-bench's real POI and route files
 * live only on HuggingFace (data/carbench/SOURCE.md, "Not included"), so this database is generated per task from
 * what the task references: every POI, plug and route id named in the task's ground-truth actions or its starting
 * navigation exists, bound to the locations/searches the task uses, plus plausible synthetic neighbours (other POIs
 * around a location, alternative routes between two places). Names, distances and durations are invented and are
 * NOT comparable with the paper's figures (docs/tool-agents.md).
 */

export const POI_CATEGORIES = ['airports', 'bakery', 'fast_food', 'parking', 'public_toilets', 'restaurants', 'supermarkets', 'charging_stations'] as const;
export type PoiCategory = (typeof POI_CATEGORIES)[number];
const CATEGORY_PREFIX: Record<string, PoiCategory> = {
  air: 'airports',
  bak: 'bakery',
  fas: 'fast_food',
  par: 'parking',
  pub: 'public_toilets',
  res: 'restaurants',
  sup: 'supermarkets',
  cha: 'charging_stations',
};
const CATEGORY_WORD: Record<PoiCategory, string> = {
  airports: 'Airport',
  bakery: 'Bakery',
  fast_food: 'Burger Stop',
  parking: 'Parking',
  public_toilets: 'Public Toilet',
  restaurants: 'Restaurant',
  supermarkets: 'Market',
  charging_stations: 'Charging Park',
};

export interface ChargingPlug {
  plug_id: string;
  power_type: 'AC' | 'DC';
  power_kw: number;
  availability: 'available' | 'occupied';
}
export interface Poi {
  id: string;
  name: string;
  category: PoiCategory;
  position: { latitude: number; longitude: number };
  opening_hours: string;
  phone_number: string;
  corresponding_location_id: string;
  charging_plugs?: ChargingPlug[];
}
export interface Route {
  route_id: string;
  start_id: string;
  destination_id: string;
  name_via: string;
  distance_km: number;
  duration_hours: number;
  duration_minutes: number;
  road_types: string[];
  includes_toll: boolean;
  alias: string[];
}
export interface RoutePoi {
  poiId: string;
  at_route_kilometer: number;
  detour_km: number;
  detour_minutes: number;
}

/** A stable pseudo-random number in [0, 1) for a key (sha256-based, no state). */
function unit(key: string): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) / 2 ** 32;
}
function digits(key: string, n = 6): string {
  return String(Math.floor(unit(key) * 10 ** n)).padStart(n, '0');
}
function haversineKm(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(h));
}
const prefixOf = (id: string): string => id.slice(4, 7);
const kindLetter = (id: string): string => (id.startsWith('poi_') ? 'p' : 'l');

export class UnresolvableEntityError extends Error {}

export class NavigationDb {
  readonly pois = new Map<string, Poi>();
  readonly routes = new Map<string, Route>();
  /** "start|destination" → route ids, referenced ones first */
  private readonly pairRoutes = new Map<string, string[]>();
  private readonly routePois = new Map<string, RoutePoi[]>();
  private readonly tollPreferred: boolean;

  private constructor(
    private readonly mock: MockData,
    preferNoToll: boolean,
  ) {
    this.tollPreferred = preferNoToll;
  }

  /** Builds the database for one task; throws UnresolvableEntityError naming an id it cannot place. */
  static forTask(task: Task, mock: MockData): NavigationDb {
    const prefs = task.context_init_config.user_preferences.navigation_and_routing.route_selection.join(' ');
    const db = new NavigationDb(mock, /toll/i.test(prefs));
    db.populate(task);
    return db;
  }

  location(id: string): Location | undefined {
    return this.mock.locations.get(id);
  }
  place(id: string): { id: string; name: string; position: { latitude: number; longitude: number } } | undefined {
    const loc = this.mock.locations.get(id);
    if (loc) return { id: loc.id, name: loc.name, position: { latitude: loc.position.latitude, longitude: loc.position.longitude } };
    const poi = this.pois.get(id);
    return poi ? { id: poi.id, name: poi.name, position: poi.position } : undefined;
  }
  private locationByPrefix(prefix: string): string | undefined {
    for (const id of this.mock.locations.keys()) if (prefixOf(id) === prefix) return id;
    return undefined;
  }

  private populate(task: Task): void {
    const actions = task.actions;
    const config = task.context_init_config;
    const referenced = new Set<string>();
    const visit = (value: unknown): void => {
      if (typeof value === 'string' && /^(poi|plg|r[lp][lp])_/.test(value)) referenced.add(value);
      else if (Array.isArray(value)) value.forEach(visit);
      else if (value && typeof value === 'object') Object.values(value).forEach(visit);
    };
    actions.forEach((a) => visit(a.kwargs));
    visit(config.waypoints_id);
    visit(config.routes_to_final_destination_id);

    // 1. POIs: bound to the last search of their category that precedes their first use, else to a route/location.
    const poiIds = [...referenced].filter((id) => id.startsWith('poi_'));
    for (const poiId of poiIds) {
      const category = CATEGORY_PREFIX[prefixOf(poiId)];
      if (!category) throw new UnresolvableEntityError(`POI ${poiId}: unknown category prefix "${prefixOf(poiId)}"`);
      const firstUse = actions.findIndex((a) => JSON.stringify(a.kwargs).includes(`"${poiId}"`));
      const searches = actions.slice(0, firstUse < 0 ? actions.length : firstUse).filter((a) => (a.name === 'search_poi_at_location' || a.name === 'search_poi_along_the_route') && a.kwargs.category_poi === category);
      const atLocation = searches.filter((a) => a.name === 'search_poi_at_location').at(-1);
      const alongRoutes = searches.filter((a) => a.name === 'search_poi_along_the_route');
      let locationId = atLocation ? String(atLocation.kwargs.location_id) : undefined;
      if (!locationId) {
        // near the start of a route leading to it, or the place a route from it leads to, or the current location
        const routeWithPoi = [...referenced].find((r) => /^r[lp][lp]_/.test(r) && r.split('_')[2] === prefixOf(poiId));
        const otherPrefix = routeWithPoi?.split('_')[1];
        locationId = (otherPrefix && this.locationByPrefix(otherPrefix)) || config.current_location.id;
      }
      const poi = this.makePoi(poiId, category, locationId, 0, true);
      this.pois.set(poiId, poi);
      for (const search of alongRoutes) {
        const routeId = String(search.kwargs.route_id);
        const at = typeof search.kwargs.at_kilometer === 'number' ? search.kwargs.at_kilometer : 100;
        this.addRoutePoi(routeId, { poiId, at_route_kilometer: at, detour_km: 0.8, detour_minutes: 2 });
      }
    }
    // plugs: bound to the station in the same call
    for (const action of actions) {
      const plugId = action.kwargs.charging_station_plug_id;
      const stationId = action.kwargs.charging_station_id;
      if (typeof plugId === 'string' && typeof stationId === 'string') {
        const station = this.pois.get(stationId);
        if (!station) throw new UnresolvableEntityError(`plug ${plugId}: station ${stationId} is not a known POI`);
        if (!station.charging_plugs?.some((p) => p.plug_id === plugId))
          station.charging_plugs = [{ plug_id: plugId, power_type: 'DC', power_kw: 150, availability: 'available' }, ...(station.charging_plugs ?? [])];
      }
    }

    // 2. Routes: from the starting navigation, then from the get_routes calls whose ends match the id's prefixes.
    config.routes_to_final_destination_id.forEach((routeId, i) => {
      const start = config.waypoints_id[i];
      const dest = config.waypoints_id[i + 1];
      if (!start || !dest) throw new UnresolvableEntityError(`route ${routeId}: the task's waypoints_id has no leg ${i}`);
      this.registerRoute(routeId, start, dest, 0);
    });
    const pairs = actions.filter((a) => a.name === 'get_routes_from_start_to_destination').map((a) => [String(a.kwargs.start_id), String(a.kwargs.destination_id)] as const);
    for (const routeId of [...referenced].filter((id) => /^r[lp][lp]_/.test(id))) {
      if (this.routes.has(routeId)) continue;
      const [head, sp, dp] = routeId.split('_');
      const match = pairs.filter(([s, d]) => `r${kindLetter(s)}${kindLetter(d)}` === head && prefixOf(s) === sp && prefixOf(d) === dp).at(-1);
      let start = match?.[0];
      let dest = match?.[1];
      if (!match) {
        const resolve = (letter: string, prefix: string): string | undefined => (letter === 'l' ? this.locationByPrefix(prefix) : poiIds.find((p) => prefixOf(p) === prefix));
        start = resolve(head[1], sp);
        dest = resolve(head[2], dp);
      }
      if (!start || !dest) throw new UnresolvableEntityError(`route ${routeId}: cannot tell its start and destination`);
      this.registerRoute(routeId, start, dest, 0);
    }
    for (const id of referenced) {
      if (id.startsWith('plg_')) continue;
      if (!this.pois.has(id) && !this.routes.has(id)) throw new UnresolvableEntityError(`${id}: referenced but not placed`);
    }
    this.applyInstructionHints(task.instruction, new Set(config.routes_to_final_destination_id));
  }

  /**
   * Route details the instruction names ("choose the second route option (the one via B432, B132)", "810km, 10h via
   * L135") are given to the referenced route they belong to: the sentence must name one end of exactly one
   * referenced route, or else the task's actions use one route only. Roads become its `name_via`, an ordinal its position
   * among the alternatives, kilometres and hours its distance and duration.
   */
  private applyInstructionHints(instruction: string, initialRoutes: Set<string>): void {
    const referenced = [...this.routes.values()];
    const fromActions = referenced.filter((r) => !initialRoutes.has(r.route_id));
    for (const sentence of instruction.split(/(?<=[.!?])\s+/)) {
      const via = /\bvia ([A-Z]\d+(?:\s*(?:,|\/|and)\s*[A-Z]\d+)*)/.exec(sentence);
      if (!via) continue;
      const roads = via[1].split(/\s*(?:,|\/|and)\s*/).filter(Boolean);
      const named = referenced.filter((r) => [r.start_id, r.destination_id].some((id) => {
        const name = this.place(id)?.name;
        return name !== undefined && !name.includes(' Charging Park') && sentence.includes(name.replace(/ (Central|Park|Station|Old Town|Riverside|Ring) .*$/, ''));
      }));
      const both = named.filter((r) => [r.start_id, r.destination_id].every((id) => sentence.includes(this.place(id)?.name ?? '\u0000')));
      const target = both.length === 1 ? both[0] : named.length === 1 ? named[0] : named.length === 0 && fromActions.length === 1 ? fromActions[0] : undefined;
      if (!target) continue;
      target.name_via = `${this.place(target.start_id)!.name} - ${this.place(target.destination_id)!.name} via ${roads.join(', ')}`;
      target.road_types = roads.some((r) => r.startsWith('A')) ? ['highway', 'country'] : ['country', 'urban'];
      const ordinal = /\b(first|second|third)\b (?:route|option)/.exec(sentence);
      if (ordinal) this.positions.set(target.route_id, ['first', 'second', 'third'].indexOf(ordinal[1]));
      const km = /(\d+(?:\.\d+)?)\s*km\b/.exec(sentence);
      const hours = /(\d+)\s*h\b/.exec(sentence);
      if (km) target.distance_km = Number(km[1]);
      if (hours) {
        target.duration_hours = Number(hours[1]);
        target.duration_minutes = 0;
      }
    }
  }

  /** route id → wanted position among its pair's alternatives (from the instruction) */
  private readonly positions = new Map<string, number>();

  private makePoi(id: string, category: PoiCategory, locationId: string, rank: number, referenced: boolean): Poi {
    const loc = this.mock.locations.get(locationId);
    if (!loc) throw new UnresolvableEntityError(`POI ${id}: location ${locationId} is not in locations.jsonl`);
    const dx = (unit(`${id}:x`) - 0.5) * 0.04 * (rank + 1);
    const dy = (unit(`${id}:y`) - 0.5) * 0.04 * (rank + 1);
    const names = ['Central', 'Park', 'Station', 'Old Town', 'Riverside', 'Ring'];
    const poi: Poi = {
      id,
      name: `${loc.name} ${names[Math.floor(unit(`${id}:n`) * names.length)]} ${CATEGORY_WORD[category]}`,
      category,
      position: { latitude: Number((loc.position.latitude + dy).toFixed(4)), longitude: Number((loc.position.longitude + dx).toFixed(4)) },
      opening_hours: referenced ? '00:00-24:00' : rank % 2 ? '08:00-18:00' : '06:00-22:00',
      phone_number: `+49 ${digits(`${id}:p1`, 3)} ${digits(`${id}:p2`, 6)}`,
      corresponding_location_id: locationId,
    };
    if (category === 'charging_stations') {
      poi.charging_plugs = [
        { plug_id: `plg_cha_${digits(`${id}:plug1`)}`, power_type: 'AC', power_kw: 22, availability: 'available' },
        { plug_id: `plg_cha_${digits(`${id}:plug2`)}`, power_type: 'DC', power_kw: referenced ? 150 : 50, availability: referenced ? 'available' : 'occupied' },
      ];
    }
    return poi;
  }

  private addRoutePoi(routeId: string, entry: RoutePoi): void {
    const list = this.routePois.get(routeId) ?? [];
    if (!list.some((p) => p.poiId === entry.poiId)) list.push(entry);
    this.routePois.set(routeId, list);
  }

  private registerRoute(routeId: string, start: string, dest: string, rank: number): Route {
    const existing = this.routes.get(routeId);
    if (existing) return existing;
    const a = this.place(start);
    const b = this.place(dest);
    if (!a) throw new UnresolvableEntityError(`route ${routeId}: start ${start} is unknown`);
    if (!b) throw new UnresolvableEntityError(`route ${routeId}: destination ${dest} is unknown`);
    const base = Math.max(2, haversineKm(a.position, b.position) * 1.25);
    // referenced route (rank 0): the fastest and shortest, without toll, unless the task's preference is about toll
    // roads, in which case a toll route (rank 1 synthetic) is a few minutes faster (the choice the preference has to make).
    const shape = [
      { factor: 1, speed: 95, toll: false, via: 'A-roads' },
      { factor: 1.08, speed: 88, toll: true, via: 'toll motorway' },
      { factor: 1.04, speed: 70, toll: false, via: 'country roads' },
    ][rank];
    const distance = Number((base * shape.factor).toFixed(1));
    let minutes = Math.round((distance / shape.speed) * 60);
    if (this.tollPreferred && rank === 1) minutes = Math.max(1, Math.round((base / 95) * 60) - 6);
    const route: Route = {
      route_id: routeId,
      start_id: start,
      destination_id: dest,
      name_via: `${a.name} - ${b.name} via ${shape.via}`,
      distance_km: distance,
      duration_hours: Math.floor(minutes / 60),
      duration_minutes: minutes % 60,
      road_types: shape.toll ? ['highway', 'urban', 'toll'] : rank === 2 ? ['country', 'urban'] : ['highway', 'urban'],
      includes_toll: shape.toll,
      alias: [],
    };
    this.routes.set(routeId, route);
    const key = `${start}|${dest}`;
    this.pairRoutes.set(key, [...(this.pairRoutes.get(key) ?? []), routeId]);
    return route;
  }

  /** The routes between two places: the referenced ones, then synthetic alternatives, up to three, with aliases. */
  routesBetween(start: string, dest: string): Route[] | undefined {
    if (!this.place(start) || !this.place(dest) || start === dest) return undefined;
    const key = `${start}|${dest}`;
    const head = `r${kindLetter(start)}${kindLetter(dest)}_${prefixOf(start)}_${prefixOf(dest)}`;
    let ids = this.pairRoutes.get(key) ?? [];
    for (let rank = ids.length; rank < 3; rank++) {
      const id = `${head}_${digits(`${key}:${rank}`)}`;
      if (!this.routes.has(id)) this.registerRoute(id, start, dest, rank);
    }
    ids = [...(this.pairRoutes.get(key) ?? [])];
    for (const [id, position] of this.positions) {
      const at = ids.indexOf(id);
      if (at >= 0 && position < ids.length) ids.splice(position, 0, ...ids.splice(at, 1));
    }
    const routes = ids.map((id) => this.routes.get(id)!);
    const total = (r: Route) => r.duration_hours * 60 + r.duration_minutes;
    const fastest = routes.reduce((m, r) => (total(r) < total(m) ? r : m));
    const shortest = routes.reduce((m, r) => (r.distance_km < m.distance_km ? r : m));
    const ordinals = ['first', 'second', 'third', 'fourth', 'fifth'];
    return routes.map((r, i) => ({ ...r, alias: [ordinals[i] ?? `#${i + 1}`, ...(r === fastest ? ['fastest'] : []), ...(r === shortest ? ['shortest'] : [])] }));
  }

  poisAtLocation(locationId: string, category: PoiCategory): Poi[] {
    const found = [...this.pois.values()].filter((p) => p.corresponding_location_id === locationId && p.category === category);
    for (let rank = 1; rank <= 2; rank++) {
      const id = `poi_${Object.entries(CATEGORY_PREFIX).find(([, c]) => c === category)![0]}_${digits(`${locationId}:${category}:${rank}`)}`;
      if (!this.pois.has(id)) this.pois.set(id, this.makePoi(id, category, locationId, rank, false));
      if (!found.some((p) => p.id === id)) found.push(this.pois.get(id)!);
    }
    return found;
  }

  poisAlongRoute(routeId: string, category: PoiCategory, atKilometer: number | undefined): Array<RoutePoi & { poi: Poi }> {
    const route = this.routes.get(routeId);
    if (!route) return [];
    const anchorKm = atKilometer ?? Math.round(route.distance_km / 2);
    const prefix = Object.entries(CATEGORY_PREFIX).find(([, c]) => c === category)![0];
    for (let rank = 1; rank <= 2; rank++) {
      const id = `poi_${prefix}_${digits(`${routeId}:${category}:${anchorKm}:${rank}`)}`;
      if (!this.pois.has(id)) {
        const locationId = route.start_id.startsWith('loc_') ? route.start_id : route.destination_id;
        this.pois.set(id, this.makePoi(id, category, locationId.startsWith('loc_') ? locationId : this.pois.get(locationId)!.corresponding_location_id, rank, false));
      }
      this.addRoutePoi(routeId, { poiId: id, at_route_kilometer: Math.min(route.distance_km, anchorKm + rank * 12), detour_km: 1.5 * rank + 1, detour_minutes: 4 * rank + 2 });
    }
    return (this.routePois.get(routeId) ?? [])
      .map((entry) => ({ ...entry, poi: this.pois.get(entry.poiId)! }))
      .filter((e) => e.poi.category === category && Math.abs(e.at_route_kilometer - anchorKm) <= 50);
  }

  locationIdByName(name: string): string | undefined {
    const wanted = name.trim().toLowerCase();
    for (const loc of this.mock.locations.values()) if (loc.name.toLowerCase() === wanted) return loc.id;
    return undefined;
  }
}
