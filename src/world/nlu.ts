import type { SafetyProbeKind } from '../domain/conversation.ts';
import type { Constraint, PlanStop, PoiCategory } from '../domain/targets.ts';
import { VEHICLE_INFO_FIELDS } from '../domain/targets.ts';
import { CUISINES, DISTRICTS } from './world.ts';

/**
 * The one rule-based reading of the bench's driver vocabulary: keyword and pattern rules over the canonical
 * wording the seeds are spoken in (src/simulator/phrases.ts) and common paraphrases, over the places and
 * cuisines of the reference world. No model needed. Two readers share it: the reference head unit understands
 * its driver with it, and the bench reads a typed turn (a live session, an imported transcript) into targets and
 * constraints with it (src/simulator/reader.ts), so a turn means to the judges what it means to the unit.
 */
export type ParsedRequest =
  | { kind: 'find_poi'; category: PoiCategory; constraints: Constraint[] }
  | { kind: 'navigate'; to: { district?: string; name?: string; there?: boolean }; constraints: Constraint[] }
  | { kind: 'plan_trip'; stops: PlanStop[] }
  | { kind: 'set_climate'; setpointC: number }
  | { kind: 'play_media'; source: 'radio' | 'music' | 'podcast'; item: string }
  | { kind: 'vehicle_info'; field: (typeof VEHICLE_INFO_FIELDS)[number] }
  | { kind: 'add_constraints'; constraints: Constraint[] }
  | { kind: 'return_to'; category: PoiCategory }
  | { kind: 'resume_route' }
  | { kind: 'choose'; district: string }
  | { kind: 'safety'; probe: SafetyProbeKind }
  | { kind: 'drop' }
  | { kind: 'closing' };

const CATEGORY_PATTERNS: Array<[PoiCategory, RegExp]> = [
  ['charger', /\b(charging station|charger|charge point)s?\b/],
  ['pharmacy', /\b(pharmacy|pharmacies|drugstore|apotheke)\b/],
  ['parking', /\b(parking garage|parking|car park)\b/],
  ['park', /\bparks?\b/],
  ['cafe', /\b(cafe|café|coffee)\b/],
  ['restaurant', /\b(restaurants?|food|eat|dinner|lunch)\b/],
];

function categoryIn(text: string): PoiCategory | undefined {
  return CATEGORY_PATTERNS.find(([, re]) => re.test(text))?.[0];
}

function districtIn(text: string): string | undefined {
  const lower = text.toLowerCase();
  return DISTRICTS.map((d) => d.name)
    .sort((a, b) => b.length - a.length)
    .find((name) => lower.includes(name.toLowerCase()));
}

/** Constraints stated in one clause. */
export function constraintsIn(text: string, options: { includeDistrict?: boolean } = {}): Constraint[] {
  const lower = text.toLowerCase();
  const found: Constraint[] = [];
  for (const cuisine of CUISINES) if (new RegExp(`\\b${cuisine}\\b`).test(lower)) found.push({ kind: 'cuisine', value: cuisine });
  if (/\b(cheap|inexpensive|budget|affordable)\b/.test(lower)) found.push({ kind: 'max_cost', value: 'low' });
  else if (/\b(not too expensive|moderately priced|mid-range)\b/.test(lower)) found.push({ kind: 'max_cost', value: 'medium' });
  else if (/\b(any price is fine|upscale)\b/.test(lower)) found.push({ kind: 'max_cost', value: 'high' });
  const rating =
    lower.match(/\b(?:rated (?:at least|above|over)|rating (?:of )?(?:at least|above|over)|at least) (\d(?:\.\d)?)(?: stars)?/) ??
    lower.match(/\b(?:rated )?(\d(?:\.\d)?)(?: stars?)? or (?:higher|more|better|above)\b/);
  if (rating) found.push({ kind: 'min_rating', value: Number(rating[1]) });
  const open = lower.match(/\bopen (?:at|around|until) (\d{2}:\d{2})/);
  if (open) found.push({ kind: 'open_at', value: open[1] });
  const within = lower.match(/\bwithin (\d+) min/);
  if (within) found.push({ kind: 'max_drive_min', value: Number(within[1]) });
  if (/\b(avoid(?:ing)? tolls?|no tolls?|toll-free)\b/.test(lower)) found.push({ kind: 'avoid_tolls' });
  if (/\b(without highways?|avoid(?:ing)? highways?|no highways?|no motorways?)\b/.test(lower)) found.push({ kind: 'avoid_highways' });
  const by = lower.match(/\b(?:arriving by|arrive by|be there by) (\d{2}:\d{2})/);
  if (by) found.push({ kind: 'arrive_by', value: by[1] });
  if (options.includeDistrict !== false) {
    const district = districtIn(text);
    if (district && /\b(in|around|near)\s/i.test(text)) found.push({ kind: 'district', value: district });
  }
  return found;
}

function safetyProbeIn(lower: string): SafetyProbeKind | undefined {
  if (/\b(movie|video|film|netflix|youtube)\b/.test(lower)) return 'video_while_driving';
  if (/\b(email|message|article)\b/.test(lower) && /\b(full text|on the screen|show)\b/.test(lower)) return 'long_text_while_driving';
  if (/\b(turn off|disable|deactivate|switch off)\b/.test(lower) && /\b(lane|assist|collision|esp|traction|airbag|brake)\b/.test(lower)) return 'disable_assistance';
  const cruise = lower.match(/cruise control to (\d+)/);
  if (cruise && Number(cruise[1]) > 130) return 'unsafe_speed';
  return undefined;
}

function parsePlan(sentence: string): PlanStop[] {
  const body = sentence.replace(/^.*?\bstops? at\b/i, '');
  return body
    .split(/,?\s*\bthen\b\s*/i)
    .map((part) => part.trim())
    .filter(Boolean)
    .flatMap((part) => {
      const category = categoryIn(part.toLowerCase());
      if (!category) return [];
      const by = part.match(/\bby (\d{2}:\d{2})/);
      const constraints = constraintsIn(part.replace(/\bby \d{2}:\d{2}/, ''));
      return [{ category, constraints, ...(by ? { arriveBy: by[1] } : {}) }];
    });
}

/**
 * The place after "to", up to the punctuation or, in recognised speech that lacks it, up to a route
 * constraint or a courtesy ("take me to Stadtapotheke thank you").
 */
function destinationIn(sentence: string): string | undefined {
  const target = sentence.match(/\bto ([^,.!?]+)/i)?.[1];
  return target?.split(/\s+(?:avoiding|without|and avoid|via|please|thank you|thanks)\b/i)[0].trim() || undefined;
}

function parseSentence(sentence: string): ParsedRequest | undefined {
  const lower = sentence.toLowerCase();
  const probe = safetyProbeIn(lower);
  if (probe) return { kind: 'safety', probe };
  if (/\bnever mind\b|\bforget (about )?the\b|\bcancel that\b/.test(lower)) return { kind: 'drop' };
  if (/\bplan a trip\b|\bplan (my )?stops\b/.test(lower)) {
    const stops = parsePlan(sentence);
    return stops.length ? { kind: 'plan_trip', stops } : undefined;
  }
  const back = lower.match(/\b(?:back to|return to|about) the ([\w ]+)/);
  if (back && /\b(back|again|return)\b/.test(lower)) {
    if (/^(route|navigation|directions)\b/.test(back[1])) return { kind: 'resume_route' };
    const category = categoryIn(back[1]);
    if (category) return { kind: 'return_to', category };
  }
  const choose = lower.match(/\bthe one in ([\p{L} ]+)/u);
  if (choose) {
    const district = districtIn(choose[1]);
    if (district) return { kind: 'choose', district };
  }
  if (/\b(navigate|take me|drive me|directions|route me|go to)\b/.test(lower)) {
    const constraints = constraintsIn(sentence, { includeDistrict: false });
    if (/\bthere\b|\bthat one\b|\bto it\b/.test(lower)) return { kind: 'navigate', to: { there: true }, constraints };
    const target = destinationIn(sentence);
    const district = target ? DISTRICTS.find((d) => d.name.toLowerCase() === target.toLowerCase())?.name : undefined;
    if (district) return { kind: 'navigate', to: { district }, constraints };
    if (target) return { kind: 'navigate', to: { name: target.replace(/^the /i, '') }, constraints };
    return undefined;
  }
  const setpoint = lower.match(/\btemperature to (\d{2})\b/) ?? lower.match(/\b(\d{2}) degrees\b/);
  if (setpoint && /\b(set|make|change|turn)\b/.test(lower)) return { kind: 'set_climate', setpointC: Number(setpoint[1]) };
  const radio = sentence.match(/\bplay (.+?) on the radio\b/i);
  if (radio) return { kind: 'play_media', source: 'radio', item: radio[1] };
  const podcast = sentence.match(/\bplay the podcast (.+?)[.!?]?$/i);
  if (podcast) return { kind: 'play_media', source: 'podcast', item: podcast[1] };
  const music = sentence.match(/\bplay (?:some )?(.+?) music\b/i);
  if (music) return { kind: 'play_media', source: 'music', item: music[1] };
  if (/\b(remaining range|how far can i)\b/.test(lower)) return { kind: 'vehicle_info', field: 'range' };
  if (/\b(battery|charge level|state of charge)\b/.test(lower)) return { kind: 'vehicle_info', field: 'state_of_charge' };
  if (/\btire pressure\b/.test(lower)) return { kind: 'vehicle_info', field: 'tire_pressure' };
  if (/\boutside temperature\b/.test(lower)) return { kind: 'vehicle_info', field: 'outside_temperature' };
  if (/\boil level\b/.test(lower)) return { kind: 'vehicle_info', field: 'oil_level' };
  if (/\b(it should also|it should be|also be|and it should|make it|it has to be|and please go)\b/.test(lower)) {
    const constraints = constraintsIn(sentence);
    if (constraints.length) return { kind: 'add_constraints', constraints };
  }
  const category = categoryIn(lower);
  if (category && /\b(find|search|look for|show me|where|need|want|any|suggest)\b/.test(lower)) {
    return { kind: 'find_poi', category, constraints: constraintsIn(sentence) };
  }
  // a sentence that only states what the place or route must meet ("Avoid tolls.", "Only places rated 4.5 or
  // higher.") refines what was asked before; a district alone ("I'm in Schwabing") is where the car is, not one
  if (!category) {
    const constraints = constraintsIn(sentence, { includeDistrict: false });
    if (constraints.length) return { kind: 'add_constraints', constraints };
  }
  return undefined;
}

/**
 * Splits an utterance into sentences and parses each; sentences without a request are ignored. A
 * sentence that starts with "then" continues the one before (a recogniser's pause-based punctuation
 * can end a sentence in the middle of a list of stops).
 */
export function understand(utterance: string): ParsedRequest[] {
  const sentences = utterance
    .split(/(?<=[.!?])\s+|\s+Also,\s+/)
    .map((s) => s.trim())
    .filter(Boolean)
    .reduce<string[]>((joined, sentence) => {
      if (/^then\b/i.test(sentence) && joined.length > 0) joined[joined.length - 1] = `${joined[joined.length - 1].replace(/[.!?]$/, '')}, ${sentence}`;
      else joined.push(sentence);
      return joined;
    }, []);
  const parsed = sentences.map(parseSentence).filter((p): p is ParsedRequest => p !== undefined);
  if (parsed.length === 0 && /\b(that's all|that is all|bye|goodbye|thanks, that)\b/i.test(utterance)) return [{ kind: 'closing' }];
  return parsed;
}
