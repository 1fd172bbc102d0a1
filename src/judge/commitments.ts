import type { Action } from '../protocol/bridge.ts';
import { readReply } from './fallback.ts';

/**
 * What a reply commits to, read from its words (and its structured actions when it carries them): the facts a
 * second reply must not contradict to say the same thing. Used by the reference comparison (./reference.ts).
 * Every fact is a normalised string ("17:00", "21 c", "5 mi"), so two replies are compared by set.
 */
export interface Commitments {
  /** times of day as HH:MM (24 h) */
  times: Set<string>;
  /** temperatures with their unit: "21 c", "70 f" ("21 deg" when the unit is not said) */
  temperatures: Set<string>;
  /** distances: "5 mi", "3 km", "500 m" */
  distances: Set<string>;
  /** durations: "10 min", "2 h" */
  durations: Set<string>;
  percentages: Set<string>;
  ratings: Set<string>;
  /** weekdays, relative days (today, tomorrow), days of the month ("12th") */
  days: Set<string>;
  /** weather conditions, negated ones as "not rain" */
  conditions: Set<string>;
  /** what a function is switched to: "on" or "off" ("turning the seat heating off", "recirculation is on") */
  switches: Set<string>;
  /** named places and people (runs of capitalised words), lower case, the assistant's own words taken out */
  names: Set<string>;
  /** other numbers (house numbers, counts), once the ones above are taken out */
  numbers: Set<string>;
  stance: Stance;
  /** the domains the reply's structured actions act in (route → navigation, …); empty without actions */
  actionDomains: Set<string>;
}

/**
 * What the reply does with the request: acts or answers (`act`), declines to understand or help (`fallback`),
 * declines for a reason (`refusal`), reports that nothing matches (`not_found`), asks back (`clarify`), or only
 * closes politely (`social`).
 */
export type Stance = 'act' | 'fallback' | 'refusal' | 'not_found' | 'clarify' | 'social';

/** The fact kinds compared one by one, with the words evidence uses for them. */
export const FACT_KINDS = {
  times: 'time',
  temperatures: 'temperature',
  distances: 'distance',
  durations: 'duration',
  percentages: 'percentage',
  ratings: 'rating',
  days: 'day',
  conditions: 'weather',
  switches: 'on or off',
  names: 'place or name',
  numbers: 'number',
} as const satisfies Partial<Record<keyof Commitments, string>>;
export type FactKind = keyof typeof FACT_KINDS;

/** A name's word without a possessive or plural ending: "Domino's" and "Dominos" are one name. */
const nameWord = (word: string) => word.replace(/'s$|s$/, '');

/** A measure "<number> <unit>" in a base unit (°C, km) where the unit converts; "deg" (unit not said) stays as it is. */
function measure(value: string): { amount: number; unit: string } {
  const [amount, unit] = value.split(' ');
  const n = Number(amount);
  if (unit === 'f') return { amount: ((n - 32) * 5) / 9, unit: 'c' };
  if (unit === 'mi') return { amount: n * 1.609, unit: 'km' };
  if (unit === 'm') return { amount: n / 1000, unit: 'km' };
  return { amount: n, unit };
}

/**
 * Two values of one fact kind that state the same thing: equal; names with a word in common ("Coupa" and
 * "Coupa Cafe"); temperatures and distances equal after conversion (70 °F and 21 °C, 7 mi and 11 km; rounding
 * allowed), and a temperature without its unit equal in number to one with it.
 */
export function sameValue(kind: FactKind, a: string, b: string): boolean {
  if (a === b) return true;
  if (kind === 'names') {
    const words = new Set(a.split(' ').map(nameWord));
    return b.split(' ').some((w) => words.has(nameWord(w)));
  }
  if (kind !== 'temperatures' && kind !== 'distances') return false;
  const [x, y] = [measure(a), measure(b)];
  if (x.unit === 'deg' || y.unit === 'deg') return Number(a.split(' ')[0]) === Number(b.split(' ')[0]);
  return x.unit === y.unit && Math.abs(x.amount - y.amount) <= Math.max(0.6, 0.06 * Math.max(x.amount, y.amount));
}

const NUMBER_WORDS: Record<string, number> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, twenty: 20, thirty: 30, forty: 40, fifty: 50,
};

/** Number words as digits, "a.m."/"p.m." as am/pm, "noon"/"midnight" as times: so "five miles" and "5 miles" read alike. */
export function canonicalText(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|twenty|thirty|forty|fifty)\b/gi, (w) => String(NUMBER_WORDS[w.toLowerCase()]))
    .replace(/\b([ap])\.m\.?/gi, (_m, p: string) => `${p.toLowerCase()}m`)
    .replace(/\bnoon\b/gi, '12:00')
    .replace(/\bmidnight\b/gi, '00:00')
    .replace(/\bhalf an hour\b/gi, '30 minutes')
    .replace(/\ban? (mile|kilomet(?:er|re)|minute)\b/gi, '1 $1')
    .replace(/\ban hour\b/gi, '1 hour');
}

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const RELATIVE_DAYS = ['today', 'tonight', 'tomorrow', 'yesterday', 'weekend'];
const CONDITIONS: Record<string, string> = {
  rain: 'rain', raining: 'rain', rainy: 'rain', showers: 'rain', drizzle: 'drizzle', snow: 'snow', snowing: 'snow', blizzard: 'snow',
  sunny: 'sun', sun: 'sun', clear: 'sun', cloudy: 'cloud', overcast: 'cloud', clouds: 'cloud', fog: 'fog', foggy: 'fog', mist: 'fog', misty: 'fog',
  windy: 'wind', wind: 'wind', hail: 'hail', stormy: 'storm', storm: 'storm', thunderstorm: 'storm', dry: 'dry', humid: 'humid', frost: 'frost',
  warm: 'warm', hot: 'warm', cold: 'cold', cool: 'cold', freezing: 'cold',
};
const NEGATION = /\b(no|not|n't|without|never|neither)\b|n't\b/;

/**
 * Capitalised words that are not names: sentence starters, words of the assistant's own phrasing, units,
 * day and month names (dates are their own fact), acronyms of the car's functions.
 */
const NOT_NAMES = new Set(
  (
    'a an the and or but of to in on at by for with from is are was were be been it its it\'s this that these those i i\'m i\'ve i\'ll you you\'re your we we\'re our they he she me my do does did not no yes so as if then ' +
    'there here what which where when who how why would could should shall can will may might must let let\'s okay ok sure sorry thanks thank welcome goodbye bye hello hi please alright great fine ' +
    'setting set starting start playing play navigating navigation route routing directions gps eta ac a/c fm am pm dab usb bluetooth hvac sat nav traffic heavy moderate light ' +
    'turn take head go drive driving found finding searching showing here\'s there\'s that\'s only just also now currently right left straight next nearest closest ' +
    'dinner lunch breakfast meeting appointment reminder event calendar conference doctor\'s doctor tennis football yoga swimming optometrist dentist ' +
    'weather forecast temperature today tomorrow tonight it\'ll expect expected high low ' +
    'monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november december ' +
    'ave st rd dr ln pl blvd street road avenue drive lane place way ' +
    'shopping center centre station market mall store shop restaurant cafe café hospital clinic parking garage hotel airport ' +
    'driver driver\'s passenger windshield windscreen recirculation seat seats fan volume cabin heating air conditioning climate radio playlist song track podcast video videos ' +
    'anytime pleasure enjoy safe cheers have get make keep try check call ' +
    'c f km mi min mins celsius fahrenheit degrees degree unfortunately however also none nothing everything all one two'
  ).split(' '),
);

function toMinutes(hour: number, minute: number, meridiem: string | undefined): string | null {
  let h = hour;
  if (meridiem) {
    if (h < 1 || h > 12) return null;
    if (meridiem.startsWith('p') && h !== 12) h += 12;
    if (meridiem.startsWith('a') && h === 12) h = 0;
  }
  if (h > 23 || minute > 59) return null;
  return `${String(h).padStart(2, '0')}:${String(minute).padStart(2, '0')}`;
}

type Extractor = { kind: Exclude<FactKind, 'names' | 'conditions' | 'switches' | 'days' | 'numbers'>; pattern: RegExp; value: (m: RegExpExecArray) => string | null };

/** Numbers with what they measure; each match's span is removed before bare numbers are read. */
const EXTRACTORS: Extractor[] = [
  { kind: 'times', pattern: /\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b/gi, value: (m) => toMinutes(Number(m[1]), Number(m[2] ?? 0), m[3].toLowerCase()) },
  { kind: 'times', pattern: /\b([01]?\d|2[0-3]):([0-5]\d)\b(?!\s*(?:h|hours?)\b)/g, value: (m) => toMinutes(Number(m[1]), Number(m[2]), undefined) },
  { kind: 'times', pattern: /\b(\d{1,2})\s*o'?clock\b/gi, value: (m) => toMinutes(Number(m[1]), 0, undefined) },
  { kind: 'temperatures', pattern: /(-?\d+(?:\.\d+)?)\s*(?:°\s*|degrees?\s*|deg\s*)?(celsius|fahrenheit|c|f)\b/gi, value: (m) => `${Number(m[1])} ${m[2][0].toLowerCase()}` },
  { kind: 'temperatures', pattern: /(-?\d+(?:\.\d+)?)\s*(?:°|degrees?\b)/gi, value: (m) => `${Number(m[1])} deg` },
  { kind: 'distances', pattern: /(\d+(?:\.\d+)?)\s*(miles?|mi|kilometers?|kilometres?|km|meters?|metres?|m)\b(?!\s*(?:inutes?|ins?)\b)/gi, value: (m) => `${Number(m[1])} ${m[2].toLowerCase().startsWith('mi') ? 'mi' : m[2].toLowerCase().startsWith('k') ? 'km' : 'm'}` },
  { kind: 'durations', pattern: /(\d+(?:\.\d+)?)\s*(minutes?|mins?|hours?|hrs?|h)\b/gi, value: (m) => `${Number(m[1])} ${m[2].toLowerCase().startsWith('m') ? 'min' : 'h'}` },
  { kind: 'percentages', pattern: /(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)/gi, value: (m) => `${Number(m[1])}%` },
  { kind: 'ratings', pattern: /\brat(?:ed|ing(?: of)?)\s*(\d(?:\.\d)?)\b|\b(\d(?:\.\d)?)\s*(?:stars?|\/\s*5)\b/gi, value: (m) => `${Number(m[1] ?? m[2])}` },
];

function emptyCommitments(): Commitments {
  return {
    times: new Set(), temperatures: new Set(), distances: new Set(), durations: new Set(), percentages: new Set(), ratings: new Set(),
    days: new Set(), conditions: new Set(), switches: new Set(), names: new Set(), numbers: new Set(), stance: 'act', actionDomains: new Set(),
  };
}

/** The facts a reply's words commit to, and its stance; `actions`, when the reply carries structured ones, decide the stance and domains. */
export function commitmentsOf(text: string, actions?: readonly Action[]): Commitments {
  const found = emptyCommitments();
  let rest = canonicalText(text);
  for (const { kind, pattern, value } of EXTRACTORS) {
    rest = rest.replace(pattern, (...args) => {
      const match = args.slice(0, -2) as unknown as RegExpExecArray;
      const read = value(match);
      if (read === null) return args[0] as string;
      found[kind].add(read);
      return ' ';
    });
  }
  for (const m of rest.matchAll(/\b(\d{1,2})(?:st|nd|rd|th)\b/gi)) found.days.add(`${Number(m[1])}th`);
  rest = rest.replace(/\b(\d{1,2})(?:st|nd|rd|th)\b/gi, ' ');
  for (const m of rest.matchAll(/\d+(?:\.\d+)?/g)) found.numbers.add(String(Number(m[0])));
  const lower = rest.toLowerCase();
  const words = lower.match(/[a-z']+/g) ?? [];
  for (const w of words) if (WEEKDAYS.includes(w) || RELATIVE_DAYS.includes(w)) found.days.add(w === 'tonight' ? 'today' : w);
  words.forEach((w, i) => {
    const condition = CONDITIONS[w];
    if (!condition) return;
    const before = words.slice(Math.max(0, i - 3), i).join(' ');
    found.conditions.add(NEGATION.test(before) ? `not ${condition}` : condition);
  });
  // "turning the fan off", "switched on"; after "is"/"now" only at the end of a clause ("is on." but not "is on Saturday")
  for (const m of lower.matchAll(/\b(?:turn(?:s|ed|ing)?|switch(?:es|ed|ing)?)\s+(?:[\w']+\s+){0,3}?(on|off)\b|\b(?:is|are|now|stays?)\s+(on|off)\s*(?:[.,;!]|$)/g)) found.switches.add(m[1] ?? m[2]);
  // a sentence's first word ending in -ing is a verb ("Turning", "Setting"), not a name
  const names = rest.replace(/(^|[.!?]\s+)[A-Z][a-z]+ing\b/g, '$1');
  for (const m of names.matchAll(/\b[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*)*/g)) {
    const name = m[0].toLowerCase().replace(/’/g, "'").split(/\s+/).map((w) => w.replace(/'s$/, '')).filter((w) => !NOT_NAMES.has(w) && w.length > 1);
    if (name.length > 0) found.names.add(name.join(' '));
  }
  found.stance = actions && actions.length > 0 ? stanceOfActions(actions) : stanceOfText(text, found);
  if (actions) for (const a of actions) if (ACTION_DOMAIN[a.type]) found.actionDomains.add(ACTION_DOMAIN[a.type]!);
  return found;
}

/** The domain each action type acts in (the words the reference text is checked against). */
export const ACTION_DOMAIN: Partial<Record<Action['type'], string>> = {
  poi_results: 'places',
  route: 'navigation',
  trip_plan: 'navigation',
  climate: 'climate',
  media: 'media',
  vehicle_info: 'vehicle',
  vehicle_control: 'vehicle',
};

/** Words that place a text in a domain; a text may be in several. */
const DOMAIN_WORDS: Record<string, RegExp> = {
  navigation: /\b(route|directions?|navigat\w*|gps|on your screen|on the map|detour|quickest way|fastest way)\b/i,
  places: /\b(restaurant|station|caf[eé]|coffee|shop|store|center|centre|hospital|parking|hotel|mall|market|pizza|address|located|nearest|closest)\b/i,
  weather: /\b(weather|forecast|rain\w*|snow\w*|sunny|cloudy|overcast|fog\w*|drizzle|humid|windy|storm\w*|blizzard)\b/i,
  schedule: /\b(appointment|meeting|reminder|calendar|schedul\w*|event)\b/i,
  climate: /\b(air ?con\w*|a\/c|heating|heater|fan|defrost\w*|cabin temperature|seat heat\w*|climate)\b/i,
  media: /\b(play\w*|song|track|album|artist|radio|podcast|playlist|music|volume|audiobook)\b/i,
};

/** The domains a text speaks about, by its words. */
export function textDomains(text: string): Set<string> {
  return new Set(Object.entries(DOMAIN_WORDS).flatMap(([domain, words]) => (words.test(text) ? [domain] : [])));
}

function stanceOfActions(actions: readonly Action[]): Stance {
  if (actions.some((a) => a.type !== 'refusal' && a.type !== 'clarification')) return 'act';
  const refusal = actions.find((a) => a.type === 'refusal');
  if (refusal && refusal.type === 'refusal') return refusal.reason === 'not_found' ? 'not_found' : refusal.reason === 'unsupported' ? 'fallback' : 'refusal';
  return 'clarify';
}

const REFUSAL = /\b(for (your|safety)|while (you'?re |you are )?driving|while the (car|vehicle) is moving|not (allowed|permitted|safe)|won'?t (do|be able)|unable to|not able to|can(no|')?t (show|play|display|read|disable|turn off|switch off|do that|open|set))\b/i;
const NOT_FOUND = /\b(there (is|are) no|no \w+( \w+)? (listed|found|available|nearby|near(by)? you|around( here)?|in (the|your) (area|calendar|schedule))|(couldn'?t|could not|can'?t|cannot|didn'?t|did not) find|nothing (found|matches|scheduled|on your)|none (found|nearby|available)|not (listed|found|available)|don'?t have any|do not have any|no results?|(is|are) empty)\b/i;
/** Courtesies a closing reply is made of; a reply with anything besides them is not only courtesy. */
const COURTESY = /\b(you'?re( very)? welcome|you are( very)? welcome|(it'?s )?(no|not a) problem|any ?time|my pleasure|(i'?m )?(glad|happy) (to|i could) help|good ?bye|bye|have a (good|great|nice|safe) (day|trip|drive|ride|evening|one)|drive (safe|safely|carefully)|stay safe|enjoy (your|the) (trip|drive|ride|day)|of course|ok(ay)?|sure( thing)?|great|alright|thanks?( you)?( very much| so much)?|cheers)\b/gi;

/** The stance of a reply's words: a fallback or refusal phrase, "nothing found", a question without facts, a bare courtesy, or an answer. */
function stanceOfText(text: string, facts: Commitments): Stance {
  const factCount = (Object.keys(FACT_KINDS) as FactKind[]).reduce((n, kind) => n + facts[kind].size, 0);
  // the fallback detector the oracle uses everywhere (./fallback.ts); the rest of the stance is read here
  if (readReply({ text, actions: [] }).kind === 'fallback') return 'fallback';
  if (NOT_FOUND.test(text)) return 'not_found';
  if (REFUSAL.test(text) && /\b(sorry|can'?t|cannot|not|unable|won'?t)\b/i.test(text)) return 'refusal';
  if (/\?\s*$/.test(text.trim()) && factCount === 0) return 'clarify';
  if (factCount === 0 && /[a-z]/i.test(text) && !/[a-z]/i.test(text.replace(COURTESY, ' '))) return 'social';
  return 'act';
}
