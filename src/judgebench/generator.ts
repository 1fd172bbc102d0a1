import { createRng } from '../domain/rng.ts';
import { formatMinutes } from '../domain/context.ts';
import { COST_LEVELS, type CostLevel } from '../domain/targets.ts';
import { estimateDrive } from '../world/geo.ts';
import {
  MAX_DRIVE_MIN,
  RATING_RELATIONS,
  RULE_CATEGORIES,
  WEEKDAYS,
  isOpenAt,
  ratingSatisfies,
  weekdayOf,
  type ErrorCategory,
  type OpeningHours,
  type Pair,
  type Preferences,
  type RatingRelation,
  type Recommendation,
  type UserBlock,
} from './dataset.ts';
import { COST_PHRASES, CUISINES, CUISINE_VARIANTS, MENUS, RATING_PHRASES, RATING_VALUES, UTTERANCE_TEMPLATES, ratingPhrase } from './lexicon.ts';

/**
 * The contextual-understanding dataset generator (Habicht et al., Algorithms 1–3), deterministic
 * from a seed: for every user block one recommendation that fits and five that each break exactly
 * one constraint (location, time, cuisine, cost, rating). Drive times come from the bench's road
 * model (src/world/geo.ts estimateDrive).
 */

export const USER_LOCATIONS = [
  { latitude: 52.5219, longitude: 13.4132, description: 'Alexanderplatz, Mitte, Berlin' },
  { latitude: 52.4986, longitude: 13.403, description: 'Moritzplatz, Kreuzberg, Berlin' },
  { latitude: 52.5388, longitude: 13.4244, description: 'Kollwitzplatz, Prenzlauer Berg, Berlin' },
  { latitude: 52.5163, longitude: 13.3041, description: 'Schloss Charlottenburg, Charlottenburg, Berlin' },
  { latitude: 52.5155, longitude: 13.454, description: 'Frankfurter Tor, Friedrichshain, Berlin' },
  { latitude: 48.1374, longitude: 11.5755, description: 'Marienplatz, Altstadt, Munich' },
  { latitude: 48.167, longitude: 11.586, description: 'Münchner Freiheit, Schwabing, Munich' },
  { latitude: 48.15, longitude: 11.567, description: 'Königsplatz, Maxvorstadt, Munich' },
  { latitude: 48.13, longitude: 11.6, description: 'Wiener Platz, Haidhausen, Munich' },
  { latitude: 48.118, longitude: 11.548, description: 'Harras, Sendling, Munich' },
] as const;

/** Opening hours are listed Monday first, as in the dataset format. */
const HOURS_ORDER = [...WEEKDAYS.slice(1), WEEKDAYS[0]];

const NAME_FIRST = ['Golden', 'Blue', 'Little', 'Old', 'Green', 'Silver', 'Red', 'Happy', 'Corner', 'Royal', 'Urban', 'Lucky'];
const NAME_SECOND = ['Spoon', 'Lantern', 'Table', 'Garden', 'Kitchen', 'Oven', 'Fork', 'Terrace', 'House', 'Pot', 'Plate', 'Courtyard'];

/** Straight-line ranges (km) that put a place clearly inside / clearly outside the 15-minute drive. */
const NEAR_KM: [number, number] = [0.3, 3.5];
const FAR_KM: [number, number] = [8, 20];

export interface GeneratorOptions {
  seed: number;
  /** user blocks; each yields 6 pairs (default 100 → 600 pairs) */
  users?: number;
  /** keep the structured preferences in the user block (default true, as in the paper) */
  includePreferences?: boolean;
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)];
const between = (random: Random, lo: number, hi: number) => lo + random() * (hi - lo);
const round1 = (x: number) => Math.round(x * 10) / 10;

function offsetPoint(random: Random, from: { latitude: number; longitude: number }, km: number) {
  const bearing = random() * 2 * Math.PI;
  const dLat = (km * Math.cos(bearing)) / 111.32;
  const dLon = (km * Math.sin(bearing)) / (111.32 * Math.cos((from.latitude * Math.PI) / 180));
  return { latitude: from.latitude + dLat, longitude: from.longitude + dLon };
}

function userBlock(random: Random): UserBlock & { preferences: Preferences } {
  const location = pick(random, USER_LOCATIONS);
  const start = Date.UTC(2024, 0, 1);
  const date = new Date(start + Math.floor(random() * 366) * 86_400_000).toISOString().slice(0, 10);
  const time = formatMinutes(8 * 60 + Math.floor(random() * 57) * 15); // 08:00–22:00 in 15-minute steps
  const cuisine = pick(random, CUISINES);
  const cost = pick(random, COST_LEVELS);
  const relation = pick(random, RATING_RELATIONS);
  const value = pick(random, RATING_VALUES[cost]);
  const utterance = pick(random, UTTERANCE_TEMPLATES)
    .replace('{cuisine}', pick(random, CUISINE_VARIANTS[cuisine]))
    .replace('{cost}', pick(random, COST_PHRASES[cost]))
    .replace('{rating}', ratingPhrase(pick(random, RATING_PHRASES[relation]), value));
  const preferences: Preferences = { cuisine, cost, rating: { relation, value } };
  return { location: { ...location }, date, time, utterance, preferences };
}

/** A rating (one decimal, 1.0–5.0) that satisfies, or violates, the relation. */
function ratingFor(random: Random, relation: RatingRelation, value: number, satisfy: boolean): number {
  const steps = 1 + Math.floor(random() * 3); // 0.1–0.3 past the boundary
  let rating: number;
  if (satisfy) {
    rating = {
      at_least: value + (steps - 1) / 10,
      above: value + steps / 10,
      around: value + (Math.floor(random() * 5) - 2) / 10,
      at_most: value - (steps - 1) / 10,
    }[relation];
  } else {
    rating = {
      at_least: value - steps / 10 - 0.2,
      above: value - (steps - 1) / 10,
      around: value + (random() < 0.5 ? -1 : 1) * (0.3 + steps / 10),
      at_most: value + steps / 10,
    }[relation];
  }
  rating = Math.min(5, Math.max(1, round1(rating)));
  if (ratingSatisfies(rating, relation, value) !== satisfy) throw new Error(`generator: rating ${rating} does not ${satisfy ? 'satisfy' : 'violate'} ${relation} ${value}`);
  return rating;
}

/** Hours for every day; the request day is open at `time` (or, for a time error, closed then). */
function openingHours(random: Random, date: string, time: string, openAtRequest: boolean): OpeningHours {
  const [h, m] = time.split(':').map(Number);
  const t = h * 60 + m;
  const half = (x: number) => Math.round(x / 30) * 30;
  const regular = () => `${formatMinutes(half(between(random, 600, 720)))}-${formatMinutes(half(between(random, 1290, 1380)))}`;
  const hours = Object.fromEntries(HOURS_ORDER.map((d) => [d, random() < 0.15 ? 'closed' : regular()])) as OpeningHours;
  const day = weekdayOf(date);
  if (openAtRequest) {
    const open = half(between(random, Math.max(360, t - 240), t - 30));
    const close = Math.min(1440, half(between(random, t + 60, t + 360)));
    hours[day] = `${formatMinutes(Math.min(open, t - 30))}-${close === 1440 ? '24:00' : formatMinutes(close)}`;
  } else {
    const kind = random();
    if (kind < 0.4) hours[day] = 'closed';
    else if (t >= 11 * 60 && kind < 0.7) {
      const close = Math.floor(between(random, t - 180, t) / 30) * 30; // closed before the request
      hours[day] = `${formatMinutes(close - 180)}-${formatMinutes(close)}`;
    } else {
      const open = Math.ceil(between(random, t + 30, Math.max(t + 30, Math.min(t + 240, 23 * 60))) / 30) * 30; // opens after the request
      hours[day] = `${formatMinutes(open)}-24:00`;
    }
  }
  if (isOpenAt(hours, date, time) !== openAtRequest) throw new Error(`generator: opening hours ${hours[day]} on ${day} are not ${openAtRequest ? 'open' : 'closed'} at ${time}`);
  return hours;
}

function recommendation(random: Random, user: UserBlock, prefs: Preferences, error: ErrorCategory): Recommendation {
  const km = error === 'location' ? between(random, ...FAR_KM) : between(random, ...NEAR_KM);
  const point = offsetPoint(random, user.location, km);
  const drive = estimateDrive({ lat: user.location.latitude, lon: user.location.longitude }, { lat: point.latitude, lon: point.longitude });
  if (drive.durationMin > MAX_DRIVE_MIN !== (error === 'location')) throw new Error(`generator: drive of ${drive.durationMin} min does not match error "${error}"`);
  const cuisine = error === 'cuisine' ? pick(random, CUISINES.filter((c) => c !== prefs.cuisine)) : prefs.cuisine;
  const cost: CostLevel = error === 'cost' ? pick(random, COST_LEVELS.filter((c) => c !== prefs.cost)) : prefs.cost;
  const district = user.location.description.split(', ').slice(1).join(', ');
  return {
    name: `${pick(random, NAME_FIRST)} ${pick(random, NAME_SECOND)}`,
    location: { ...point, description: error === 'location' ? `outskirts, ${district.split(', ').pop()}` : `near ${district}` },
    cuisine_type: cuisine,
    menu: [...MENUS[cuisine]],
    cost,
    rating: ratingFor(random, prefs.rating.relation, prefs.rating.value, error !== 'rating'),
    opening_hours: openingHours(random, user.date, user.time, error !== 'time'),
    distance_km: round1(drive.distanceKm),
    duration_min: round1(drive.durationMin),
  };
}

export function generateDataset(options: GeneratorOptions): Pair[] {
  const random = createRng(options.seed).next;
  const users = options.users ?? 100;
  const includePreferences = options.includePreferences ?? true;
  const pairs: Pair[] = [];
  for (let u = 0; u < users; u++) {
    const withPrefs = userBlock(random);
    const { preferences: prefs, ...utteranceOnly } = withPrefs;
    const user: UserBlock = includePreferences ? withPrefs : utteranceOnly;
    for (const error of ['none', ...RULE_CATEGORIES] as const) {
      pairs.push({
        id: `u${String(u + 1).padStart(4, '0')}-${error}`,
        user,
        system: recommendation(random, withPrefs, prefs, error),
        label: error === 'none',
        error_category: error,
      });
    }
  }
  return pairs;
}
