import type { GeoPoint } from '../domain/context.ts';
import type { CostLevel, PoiCategory } from '../domain/targets.ts';
import type { OpeningHours, Poi } from '../protocol/bridge.ts';
import { estimateDrive } from './geo.ts';
import { createRng, type Rng } from '../domain/rng.ts';

export const CITIES = ['Munich', 'Berlin'] as const;
export type City = (typeof CITIES)[number];

export interface District {
  city: City;
  name: string;
  center: GeoPoint;
}

export const DISTRICTS: readonly District[] = [
  { city: 'Munich', name: 'Altstadt', center: { lat: 48.137, lon: 11.575 } },
  { city: 'Munich', name: 'Schwabing', center: { lat: 48.165, lon: 11.585 } },
  { city: 'Munich', name: 'Maxvorstadt', center: { lat: 48.15, lon: 11.568 } },
  { city: 'Munich', name: 'Haidhausen', center: { lat: 48.128, lon: 11.598 } },
  { city: 'Munich', name: 'Sendling', center: { lat: 48.118, lon: 11.545 } },
  { city: 'Munich', name: 'Bogenhausen', center: { lat: 48.155, lon: 11.615 } },
  { city: 'Munich', name: 'Pasing', center: { lat: 48.148, lon: 11.462 } },
  { city: 'Munich', name: 'Giesing', center: { lat: 48.11, lon: 11.58 } },
  { city: 'Berlin', name: 'Mitte', center: { lat: 52.52, lon: 13.405 } },
  { city: 'Berlin', name: 'Kreuzberg', center: { lat: 52.497, lon: 13.411 } },
  { city: 'Berlin', name: 'Prenzlauer Berg', center: { lat: 52.539, lon: 13.424 } },
  { city: 'Berlin', name: 'Charlottenburg', center: { lat: 52.516, lon: 13.304 } },
  { city: 'Berlin', name: 'Friedrichshain', center: { lat: 52.515, lon: 13.454 } },
  { city: 'Berlin', name: 'Neukölln', center: { lat: 52.481, lon: 13.435 } },
  { city: 'Berlin', name: 'Schöneberg', center: { lat: 52.483, lon: 13.353 } },
  { city: 'Berlin', name: 'Spandau', center: { lat: 52.535, lon: 13.2 } },
];

export const CUISINES = ['italian', 'japanese', 'indian', 'bavarian', 'vietnamese', 'greek', 'mexican', 'turkish'] as const;

/** Names that exist in several districts of the same city: the material ambiguity the Ambiguity Injection strategy uses. */
export const AMBIGUOUS_PLACES: ReadonlyArray<{ name: string; category: PoiCategory; city: City; districts: string[] }> = [
  { name: 'Café Central', category: 'cafe', city: 'Munich', districts: ['Altstadt', 'Haidhausen'] },
  { name: 'Rosengarten', category: 'park', city: 'Munich', districts: ['Schwabing', 'Sendling'] },
  { name: 'Stadtapotheke', category: 'pharmacy', city: 'Munich', districts: ['Maxvorstadt', 'Pasing'] },
  { name: 'Café Central', category: 'cafe', city: 'Berlin', districts: ['Kreuzberg', 'Charlottenburg'] },
  { name: 'Rosengarten', category: 'park', city: 'Berlin', districts: ['Mitte', 'Neukölln'] },
  { name: 'Stadtapotheke', category: 'pharmacy', city: 'Berlin', districts: ['Spandau', 'Friedrichshain'] },
];

/** Searches from this many (position, city, category) kept by World.placesFrom: more than the conversations in flight. */
export const DRIVE_CACHE_SIZE = 64;

export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

// the last date asked about and its weekday: searches ask again and again for the conversation's one date
let lastDate = '';
let lastWeekday: (typeof WEEKDAYS)[number] = 'sunday';

export function weekdayOf(isoDate: string): (typeof WEEKDAYS)[number] {
  if (isoDate !== lastDate) {
    const [y, m, d] = isoDate.split('-').map(Number);
    lastWeekday = WEEKDAYS[new Date(Date.UTC(y, m - 1, d)).getUTCDay()];
    lastDate = isoDate;
  }
  return lastWeekday;
}

/** True when `hhmm` on `isoDate` falls inside the opening hours ("HH:MM-HH:MM" or "closed"). */
export function isOpenAt(hours: OpeningHours, isoDate: string, hhmm: string): boolean {
  const today = hours[weekdayOf(isoDate) as keyof OpeningHours];
  if (!today || today === 'closed') return false;
  const [open, close] = today.split('-');
  return hhmm >= open && hhmm < close;
}

function everyDay(span: string, closedOn?: keyof OpeningHours): OpeningHours {
  const hours = { monday: span, tuesday: span, wednesday: span, thursday: span, friday: span, saturday: span, sunday: span };
  if (closedOn) hours[closedOn] = 'closed';
  return hours;
}

const RESTAURANT_PREFIX: Record<(typeof CUISINES)[number], string[]> = {
  italian: ['Trattoria', 'Osteria', 'Pizzeria'],
  japanese: ['Sushi', 'Izakaya', 'Ramen'],
  indian: ['Masala', 'Tandoor', 'Curry House'],
  bavarian: ['Wirtshaus', 'Bräustüberl', 'Gasthof'],
  vietnamese: ['Pho', 'Saigon', 'Banh Mi'],
  greek: ['Taverna', 'Mykonos', 'Olympia'],
  mexican: ['Cantina', 'Taqueria', 'El Sol'],
  turkish: ['Lokanta', 'Anatolia', 'Kebap Haus'],
};

function jitter(rng: Rng, center: GeoPoint, spreadDeg = 0.008): GeoPoint {
  return { lat: +(center.lat + (rng.next() - 0.5) * spreadDeg).toFixed(5), lon: +(center.lon + (rng.next() - 0.5) * spreadDeg * 1.5).toFixed(5) };
}

/** A world's places by (city, category), by (city, lower-case name) and by id. */
interface WorldIndex {
  byCityCategory: Map<string, Poi[]>;
  byCityName: Map<string, Poi[]>;
  byId: Map<string, Poi>;
}

/**
 * The reference head unit's world: every district has, for every cuisine, a cheap well-rated
 * all-day place (so any seed's constraints can be met), an expensive evening place and a
 * lunch-only place (so a dropped constraint shows up as a visibly wrong pick).
 */
export class World {
  /** fixed once built: the indexes below are built from it on first use */
  readonly pois: readonly Poi[];
  private indexes: WorldIndex | null = null;
  private readonly driven = new Map<string, readonly Poi[]>();

  /**
   * The reference world generated from `seed`, or — with `places` — a world of exactly those places (a world file a
   * campaign names, docs/architecture.md "Which world"); its districts are the reference world's.
   */
  constructor(
    readonly seed: number,
    places?: readonly Poi[],
  ) {
    const pois: Poi[] = [];
    this.pois = pois;
    if (places) {
      pois.push(...places);
      return;
    }
    const rng = createRng(seed);
    for (const district of DISTRICTS) {
      const slug = `${district.city}-${district.name}`.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      const add = (poi: Omit<Poi, 'id' | 'city' | 'district' | 'position'> & { position?: GeoPoint }) => {
        pois.push({
          ...poi,
          id: `${slug}-${pois.length}`,
          city: district.city,
          district: district.name,
          position: poi.position ?? jitter(rng, district.center),
        });
      };
      for (const cuisine of CUISINES) {
        const [a, b, c] = RESTAURANT_PREFIX[cuisine];
        add({ name: `${a} ${district.name}`, category: 'restaurant', cuisine, cost: 'low', rating: +(4.3 + rng.next() * 0.5).toFixed(1), openingHours: everyDay('10:00-23:30') });
        add({ name: `${b} ${district.name}`, category: 'restaurant', cuisine, cost: 'high', rating: +(3.0 + rng.next() * 0.9).toFixed(1), openingHours: everyDay('17:00-22:30', 'monday') });
        add({ name: `${c} ${district.name}`, category: 'restaurant', cuisine, cost: 'medium', rating: +(3.6 + rng.next() * 0.5).toFixed(1), openingHours: everyDay('07:00-15:00') });
      }
      add({ name: `FastCharge ${district.name}`, category: 'charger', cost: 'medium', rating: 4.5, openingHours: everyDay('00:00-23:59') });
      add({ name: `City Charger ${district.name}`, category: 'charger', cost: 'low', rating: 3.8, openingHours: everyDay('06:00-22:00') });
      add({ name: `${district.name} Apotheke`, category: 'pharmacy', cost: 'low', rating: 4.4, openingHours: everyDay('08:00-22:00') });
      add({ name: `${district.name} Park`, category: 'park', cost: 'low', rating: 4.6, openingHours: everyDay('00:00-23:59') });
      add({ name: `${district.name} Parkhaus`, category: 'parking', cost: 'medium', rating: 4.0, openingHours: everyDay('00:00-23:59') });
      add({ name: `Kaffeehaus ${district.name}`, category: 'cafe', cost: 'medium', rating: 4.2, openingHours: everyDay('07:00-19:00') });
      for (const place of AMBIGUOUS_PLACES) {
        if (place.city === district.city && place.districts.includes(district.name)) {
          add({ name: place.name, category: place.category, cost: 'medium', rating: 4.1, openingHours: everyDay('08:00-20:00') });
        }
      }
    }
  }

  district(city: string, name: string): District | undefined {
    return DISTRICTS.find((d) => d.city === city && d.name.toLowerCase() === name.toLowerCase());
  }

  districtsOf(city: string): District[] {
    return DISTRICTS.filter((d) => d.city === city);
  }

  /** The places of a city with this name (case-insensitive), in the world's order. */
  poisNamed(city: string, name: string): Poi[] {
    return [...(this.index().byCityName.get(`${city}\u0000${name.toLowerCase()}`) ?? [])];
  }

  /** The places of a category in a city, in the world's order (a search's candidates). */
  poisOf(city: string, category: PoiCategory): readonly Poi[] {
    return this.index().byCityCategory.get(`${city}\u0000${category}`) ?? [];
  }

  /** The place with this id (the first, should a world file repeat one). */
  poi(id: string): Poi | undefined {
    return this.index().byId.get(id);
  }

  /** The lookups above, built in one pass over the places on first use (searches run every turn). */
  private index(): WorldIndex {
    if (this.indexes) return this.indexes;
    const index: WorldIndex = { byCityCategory: new Map(), byCityName: new Map(), byId: new Map() };
    const add = (map: Map<string, Poi[]>, key: string, p: Poi) => {
      const list = map.get(key);
      if (list) list.push(p);
      else map.set(key, [p]);
    };
    for (const p of this.pois) {
      add(index.byCityCategory, `${p.city}\u0000${p.category}`, p);
      add(index.byCityName, `${p.city}\u0000${p.name.toLowerCase()}`, p);
      if (!index.byId.has(p.id)) index.byId.set(p.id, p);
    }
    return (this.indexes = index);
  }

  /**
   * The places of a category in a city, each annotated with drive time and distance from `from` (withDrive), in the
   * world's order. Frozen and shared: a conversation searches from one position again and again, so the last few
   * answers are kept (DRIVE_CACHE_SIZE, the oldest dropped first).
   */
  placesFrom(city: string, category: PoiCategory, from: GeoPoint): readonly Poi[] {
    const key = `${from.lat},${from.lon}\u0000${city}\u0000${category}`;
    const cached = this.driven.get(key);
    if (cached) {
      // most recently used last
      this.driven.delete(key);
      this.driven.set(key, cached);
      return cached;
    }
    const places = Object.freeze(this.poisOf(city, category).map((p) => Object.freeze(this.withDrive(p, from))));
    this.driven.set(key, places);
    if (this.driven.size > DRIVE_CACHE_SIZE) this.driven.delete(this.driven.keys().next().value!);
    return places;
  }

  /** A POI annotated with drive time and distance from `from`. */
  withDrive(poi: Poi, from: GeoPoint): Poi {
    const drive = estimateDrive(from, poi.position);
    return { ...poi, driveMin: Math.round(drive.durationMin), distanceKm: +drive.distanceKm.toFixed(1) };
  }

  /** Route options between two points: the fastest uses the highway and a toll tunnel on long trips. */
  routeOptions(from: GeoPoint, to: GeoPoint): Array<{ distanceKm: number; durationMin: number; tolls: boolean; highway: boolean }> {
    const fastest = estimateDrive(from, to);
    const urban = estimateDrive(from, to, { avoidHighways: true });
    const options = [
      { distanceKm: fastest.distanceKm, durationMin: fastest.durationMin, tolls: fastest.highway && fastest.distanceKm > 12, highway: fastest.highway },
    ];
    if (fastest.highway) {
      options.push({ distanceKm: fastest.distanceKm * 1.1, durationMin: fastest.durationMin * 1.15, tolls: false, highway: true });
      options.push({ distanceKm: urban.distanceKm, durationMin: urban.durationMin, tolls: false, highway: false });
    }
    return options.map((o) => ({ ...o, distanceKm: +o.distanceKm.toFixed(1), durationMin: Math.max(1, Math.round(o.durationMin)) }));
  }
}

export function costRank(cost: CostLevel): number {
  return cost === 'low' ? 0 : cost === 'medium' ? 1 : 2;
}
