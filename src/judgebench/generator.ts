import { createRng } from '../domain/rng.ts';
import { formatMinutes, minutesOfDay } from '../domain/context.ts';
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
  type RuleCategory,
  type UserBlock,
} from './dataset.ts';
import { COST_PHRASES, CUISINES, CUISINE_VARIANTS, MENUS, RATING_PHRASES, RATING_VALUES, UTTERANCE_TEMPLATES, ratingPhrase } from './lexicon.ts';

/**
 * The contextual-understanding dataset generator (Habicht et al., Algorithms 1–3), deterministic
 * from a seed: for every user block one recommendation that fits and five copies of it that each
 * change one parameter so that it breaks exactly one constraint (location, time, cuisine, cost,
 * rating). Drive times come from the bench's road model (src/world/geo.ts estimateDrive), where the
 * paper asked the Mapbox API, which needs a network account and cannot be reproduced offline.
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

const halfHour = (minutes: number) => Math.round(minutes / 30) * 30;

/** Hours for every day, open on the request's day at `time`. */
function openingHours(random: Random, date: string, time: string): OpeningHours {
  const t = minutesOfDay(time);
  const regular = () => `${formatMinutes(halfHour(between(random, 600, 720)))}-${formatMinutes(halfHour(between(random, 1290, 1380)))}`;
  const hours = Object.fromEntries(HOURS_ORDER.map((d) => [d, random() < 0.15 ? 'closed' : regular()])) as OpeningHours;
  const open = halfHour(between(random, Math.max(360, t - 240), t - 30));
  const close = Math.min(1440, halfHour(between(random, t + 60, t + 360)));
  hours[weekdayOf(date)] = `${formatMinutes(Math.min(open, t - 30))}-${close === 1440 ? '24:00' : formatMinutes(close)}`;
  if (!isOpenAt(hours, date, time)) throw new Error(`generator: opening hours ${hours[weekdayOf(date)]} are not open at ${time}`);
  return hours;
}

/** The same hours with only the request's day changed so that the place is closed at `time`: closed all day, closed before it, or opening after it. */
function closedAtRequest(random: Random, fitting: OpeningHours, date: string, time: string): OpeningHours {
  const t = minutesOfDay(time);
  const day = weekdayOf(date);
  const hours = { ...fitting };
  const kind = random();
  if (kind < 0.4) hours[day] = 'closed';
  else if (t >= 11 * 60 && kind < 0.7) {
    const close = Math.floor(between(random, t - 180, t) / 30) * 30;
    hours[day] = `${formatMinutes(close - 180)}-${formatMinutes(close)}`;
  } else {
    const open = Math.ceil(between(random, t + 30, Math.max(t + 30, Math.min(t + 240, 23 * 60))) / 30) * 30;
    hours[day] = `${formatMinutes(open)}-24:00`;
  }
  if (isOpenAt(hours, date, time)) throw new Error(`generator: opening hours ${hours[day]} on ${day} are not closed at ${time}`);
  return hours;
}

/** The recommendation that fits every constraint: the positive case each error case is built from. */
function fittingRecommendation(random: Random, user: UserBlock, prefs: Preferences): Recommendation {
  const district = user.location.description.split(', ').slice(1).join(', ');
  const name = `${pick(random, NAME_FIRST)} ${pick(random, NAME_SECOND)}`;
  const { location, distance_km, duration_min } = placeAt(random, user, NEAR_KM, `near ${district}`);
  return {
    name,
    location,
    cuisine_type: prefs.cuisine,
    menu: [...MENUS[prefs.cuisine]],
    cost: prefs.cost,
    rating: ratingFor(random, prefs.rating.relation, prefs.rating.value, true),
    opening_hours: openingHours(random, user.date, user.time),
    distance_km,
    duration_min,
  };
}

/** A place `km` (drawn from the range) from the user, with its drive from the bench's road model. */
function placeAt(random: Random, user: UserBlock, range: [number, number], description: string): Pick<Recommendation, 'location' | 'distance_km' | 'duration_min'> {
  const point = offsetPoint(random, user.location, between(random, ...range));
  const drive = estimateDrive({ lat: user.location.latitude, lon: user.location.longitude }, { lat: point.latitude, lon: point.longitude });
  return { location: { ...point, description }, distance_km: round1(drive.distanceKm), duration_min: round1(drive.durationMin) };
}

/**
 * The fields each error changes (Habicht et al., Algorithm 3: "all parameters except for the error-related
 * parameter remain identical to the corresponding positive case"). A cuisine error changes the menu with the
 * cuisine (a French menu under "Korean" would contradict itself); a location error the drive with the place.
 */
export const ERROR_FIELDS: Record<RuleCategory, readonly (keyof Recommendation)[]> = {
  location: ['location', 'distance_km', 'duration_min'],
  time: ['opening_hours'],
  cuisine: ['cuisine_type', 'menu'],
  cost: ['cost'],
  rating: ['rating'],
};

/** The positive case with exactly one parameter changed so that it breaks `error`'s constraint. */
function withError(random: Random, fitting: Recommendation, user: UserBlock, prefs: Preferences, error: RuleCategory): Recommendation {
  const city = user.location.description.split(', ').pop();
  const changed: Record<RuleCategory, () => Partial<Recommendation>> = {
    location: () => placeAt(random, user, FAR_KM, `outskirts, ${city}`),
    time: () => ({ opening_hours: closedAtRequest(random, fitting.opening_hours, user.date, user.time) }),
    cuisine: () => {
      const cuisine = pick(random, CUISINES.filter((c) => c !== prefs.cuisine));
      return { cuisine_type: cuisine, menu: [...MENUS[cuisine]] };
    },
    cost: () => ({ cost: pick(random, COST_LEVELS.filter((c) => c !== prefs.cost)) }),
    rating: () => ({ rating: ratingFor(random, prefs.rating.relation, prefs.rating.value, false) }),
  };
  const broken = { ...fitting, ...changed[error]() };
  if (broken.duration_min > MAX_DRIVE_MIN !== (error === 'location')) throw new Error(`generator: drive of ${broken.duration_min} min does not match error "${error}"`);
  return broken;
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
    const fitting = fittingRecommendation(random, withPrefs, prefs);
    const id = (category: ErrorCategory) => `u${String(u + 1).padStart(4, '0')}-${category}`;
    pairs.push({ id: id('none'), user, system: fitting, label: true, error_category: 'none' });
    for (const error of RULE_CATEGORIES) {
      pairs.push({ id: id(error), user, system: withError(random, fitting, withPrefs, prefs, error), label: false, error_category: error });
    }
  }
  return pairs;
}
