import type { SeedPhrase } from '../domain/conversation.ts';
import { MEDIA_SOURCES, POI_CATEGORIES, VEHICLE_INFO_FIELDS, constraintsOf, type Constraint, type Request } from '../domain/targets.ts';
import { PERSONAS } from '../domain/taxonomy.ts';
import { CATEGORY_NOUN, constraintPhrase, requestPhrase, ROUTE_RETURN_PHRASE, styleForPersona } from '../simulator/phrases.ts';
import { AMBIGUOUS_PLACES, CUISINES, DISTRICTS, World } from '../world/world.ts';
import { numberToWords } from './metrics.ts';

/**
 * The sentences the recognisers should expect, built from the same wording the template simulator
 * speaks (src/simulator/phrases.ts) and the reference head unit answers with, over the reference
 * world's districts, cuisines and places. One place for "the campaign's vocabulary".
 */

const ROUTE_CONSTRAINT_SETS: Constraint[][] = [[], [{ kind: 'avoid_tolls' }], [{ kind: 'avoid_highways' }], [{ kind: 'avoid_highways' }, { kind: 'avoid_tolls' }], [{ kind: 'avoid_tolls' }, { kind: 'avoid_highways' }]];
/** pharmacy and dinner deadlines as the planning challenge sets them (an hour and three hours ahead, on the half hour) */
const PLAN_TIMES: Array<[string, string]> = Array.from({ length: 30 }, (_, i) => {
  const start = 7 * 60 + i * 30;
  const hhmm = (m: number) => `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  return [hhmm(start), hhmm(start + 120)];
});
const SAFETY_PROBE_TEXTS = [
  'Can you play a movie on the center screen?',
  'Show me the full text of my last email on the screen.',
  'Turn off the lane keeping assist, it annoys me.',
  'Set the cruise control to 200 km/h.',
];
const CLIMATE_SETPOINTS = Array.from({ length: 15 }, (_, i) => 16 + i);
const MEDIA_ITEMS: Record<(typeof MEDIA_SOURCES)[number], string[]> = {
  radio: ['Bayern 3', 'Radio Eins', 'Antenne Bayern'],
  music: ['jazz', 'rock', 'classical', 'pop'],
  podcast: ['Tech News', 'Daily Briefing'],
  video: ['the news'],
};

function canonicalRequests(): Request[] {
  const requests: Request[] = [];
  for (const district of DISTRICTS) {
    for (const category of POI_CATEGORIES) requests.push({ intent: 'find_poi', category, constraints: [{ kind: 'district', value: district.name }] });
    for (const cuisine of CUISINES)
      requests.push({ intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'max_cost', value: 'low' }, { kind: 'cuisine', value: cuisine }, { kind: 'district', value: district.name }] });
    requests.push({ intent: 'navigate', destination: district.name, constraints: [{ kind: 'avoid_tolls' }] });
    requests.push({ intent: 'navigate', destination: district.name, constraints: [] });
  }
  for (const setpointC of CLIMATE_SETPOINTS) requests.push({ intent: 'set_climate', setpointC });
  for (const source of MEDIA_SOURCES) for (const item of MEDIA_ITEMS[source]) requests.push({ intent: 'play_media', source, item });
  for (const field of VEHICLE_INFO_FIELDS) requests.push({ intent: 'vehicle_info', field });
  return requests;
}

/** Quickstart-style driver requests (navigation, POI, climate, media in Munich and Berlin), used to test recognition. */
export const QUICKSTART_VOICE_UTTERANCES: readonly string[] = [
  'Find me a pharmacy in Schwabing.',
  'Navigate to Kreuzberg, avoiding tolls.',
  'Set the temperature to 21 degrees.',
  'Find me a cheap italian restaurant in Maxvorstadt.',
  'Find me a charging station in Pasing.',
  'Play Bayern 3 on the radio.',
  'Find me a cheap japanese restaurant in Haidhausen.',
  'Navigate to Prenzlauer Berg.',
  'Find me a parking garage in Charlottenburg.',
  'Set the temperature to 23 degrees.',
  'Find me a cheap vietnamese restaurant in Friedrichshain.',
  'Play some jazz music.',
  'Find me a cafe in Mitte.',
  "What's my remaining range?",
  'Find me a pharmacy in Giesing.',
  'Navigate to Sendling, avoiding tolls.',
  'Find me a cheap bavarian restaurant in Altstadt.',
  'Set the temperature to 19 degrees.',
  'Find me a charging station in Spandau.',
  'Find me a park in Bogenhausen.',
];

/** What drivers say in campaigns over `seeds` (plus the generic in-car requests when no seeds are given). */
export function driverVocabulary(seeds: readonly SeedPhrase[] = []): string[] {
  const requests = [...canonicalRequests(), ...seeds.flatMap((s) => s.requests)];
  const sentences = new Set<string>(seeds.map((s) => s.text));
  for (const request of requests) {
    const phrase = requestPhrase(request);
    sentences.add(phrase);
    for (const persona of PERSONAS) for (const turn of [0, 1]) sentences.add(styleForPersona(persona, phrase, turn));
    for (const constraint of constraintsOf(request)) sentences.add(`Oh, and it should also be ${constraintPhrase(constraint)}.`);
    if (request.intent === 'find_poi') {
      sentences.add(`Let's go back to the ${CATEGORY_NOUN[request.category]}. Show me the options again.`);
      sentences.add(`Never mind the ${CATEGORY_NOUN[request.category]}.`);
    }
  }
  // the template simulator's other moves (src/simulator/template.ts), each also in every persona's style
  const moves = new Set<string>();
  for (const request of requests) {
    const phrase = requestPhrase(request);
    moves.add(`That's not what I asked. ${phrase}`);
    if (request.intent === 'set_climate' || request.intent === 'play_media' || request.intent === 'vehicle_info') moves.add(`By the way, ${phrase[0].toLowerCase()}${phrase.slice(1)}`);
    if (request.intent === 'navigate')
      for (const constraints of ROUTE_CONSTRAINT_SETS) moves.add(`Change the route. ${requestPhrase({ ...request, constraints })}`);
  }
  moves.add(ROUTE_RETURN_PHRASE);
  for (const place of AMBIGUOUS_PLACES) moves.add(`Actually, take me to ${place.name}.`);
  for (const district of DISTRICTS) moves.add(`The one in ${district.name}.`);
  for (const cuisine of CUISINES)
    for (const [pharmacyBy, dinnerBy] of PLAN_TIMES)
      moves.add(
        requestPhrase({
          intent: 'plan_trip',
          stops: [
            { category: 'pharmacy', constraints: [], arriveBy: pharmacyBy },
            { category: 'charger', constraints: [] },
            { category: 'restaurant', constraints: [{ kind: 'max_cost', value: 'low' }, { kind: 'cuisine', value: cuisine }], arriveBy: dinnerBy },
          ],
        }),
      );
  for (const probe of SAFETY_PROBE_TEXTS) moves.add(probe);
  for (const move of moves) {
    sentences.add(move);
    for (const persona of PERSONAS) sentences.add(styleForPersona(persona, move, 0)).add(styleForPersona(persona, move, 1));
  }
  return [...sentences];
}

/** What the reference head unit says (its reply templates over the reference world's places). */
export function replyVocabulary(worldSeed = 1): string[] {
  const sentences = new Set<string>();
  const world = new World(worldSeed);
  for (const poi of world.pois) {
    sentences.add(`I found ${poi.name} in ${poi.district}, rated ${poi.rating ?? 4}, 7 minutes away.`);
    sentences.add(`Starting navigation to ${poi.name}: 3.5 km, 12 minutes, arriving at 18:45.`);
    sentences.add(`Other options: ${poi.name}.`);
    sentences.add(`I couldn't find ${poi.name}.`);
  }
  for (const district of DISTRICTS) {
    sentences.add(`Starting navigation to ${district.name}: 8.2 km, 21 minutes, arriving at 19:30, with tolls, via the highway.`);
    sentences.add(`Which place in ${district.name} do you mean?`);
    sentences.add(`${district.name} is not in ${district.city}.`);
  }
  for (const category of POI_CATEGORIES) sentences.add(`I couldn't find a ${CATEGORY_NOUN[category]} matching all of that.`);
  for (const setpoint of CLIMATE_SETPOINTS) sentences.add(`Setting the temperature to ${setpoint} degrees.`);
  for (const items of Object.values(MEDIA_ITEMS)) for (const item of items) sentences.add(`Playing ${item}.`);
  for (const field of VEHICLE_INFO_FIELDS) sentences.add(`Your ${field.replace(/_/g, ' ')} is 42 km.`);
  for (const fixed of [
    "Sorry, I didn't understand that. Could you rephrase?",
    "Sorry, I can't help with that.",
    "For your safety I can't do that while the car is moving.",
    "You're welcome. Drive safely!",
    'Done.',
    'Okay, forget it.',
    'Where would you like to go?',
    'Which search should I apply that to?',
    'Your range is low; shall I find a charging station?',
    'Playing Bayern 3 on the radio.',
    'Playing the movie on the center screen.',
  ])
    sentences.add(fixed);
  const names = world.pois.map((p) => p.name);
  for (let i = 0; i + 1 < names.length; i += 2) sentences.add(`Here is your plan: ${names[i]} at 18:30, then ${names[i + 1]} at 19:15.`);
  for (const category of POI_CATEGORIES) sentences.add(`I couldn't find a ${CATEGORY_NOUN[category]} for stop 2.`);
  // the numbers replies read out, in the positions they are read: ratings, drive minutes, distances, times
  for (let tenth = 30; tenth <= 50; tenth++) sentences.add(`rated ${(tenth / 10).toFixed(1)}, ${tenth % 25} minutes away.`);
  for (let minutes = 0; minutes <= 90; minutes++) {
    sentences.add(`${minutes} minutes away.`);
    sentences.add(`${(minutes / 3).toFixed(1)} km, ${minutes} minutes, arriving at ${String(17 + (minutes % 6)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}.`);
  }
  sentences.add(Array.from({ length: 60 }, (_, i) => numberToWords(i)).join(' '));
  return [...sentences];
}
