import type { SeedPhrase } from '../domain/conversation.ts';
import { MEDIA_SOURCES, POI_CATEGORIES, VEHICLE_INFO_FIELDS, constraintsOf, type Constraint, type Request } from '../domain/targets.ts';
import { PERSONAS } from '../domain/taxonomy.ts';
import { REFERENCE_REPLIES, vehicleReading, type ReplyPhrases } from '../domain/vocabulary.ts';
import * as phrases from '../simulator/phrases.ts';
import { AMBIGUOUS_PLACES, CUISINES, DISTRICTS, World } from '../world/world.ts';
import { numberToWords } from './metrics.ts';

/**
 * The sentences the recognisers should expect, computed (never copied) from the wording the template simulator
 * speaks (src/simulator/phrases.ts) and the reply phrases the reference head unit answers with
 * (src/domain/vocabulary.ts), over the reference world's districts, cuisines and places.
 */

const ROUTE_CONSTRAINT_SETS: Constraint[][] = [[], [{ kind: 'avoid_tolls' }], [{ kind: 'avoid_highways' }], [{ kind: 'avoid_highways' }, { kind: 'avoid_tolls' }], [{ kind: 'avoid_tolls' }, { kind: 'avoid_highways' }]];
/** pharmacy and dinner deadlines as the planning challenge sets them (an hour and three hours ahead, on the half hour) */
const PLAN_TIMES: Array<[string, string]> = Array.from({ length: 30 }, (_, i) => {
  const start = 7 * 60 + i * 30;
  const hhmm = (m: number) => `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  return [hhmm(start), hhmm(start + 120)];
});
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
    const phrase = phrases.requestPhrase(request);
    sentences.add(phrase);
    for (const persona of PERSONAS) for (const turn of [0, 1]) sentences.add(phrases.styleForPersona(persona, phrase, turn));
    for (const constraint of constraintsOf(request)) sentences.add(phrases.addedConstraintPhrase(constraint));
    if (request.intent === 'find_poi') {
      sentences.add(phrases.searchReturnPhrase(request.category));
      sentences.add(phrases.dropPhrase(request.category));
    }
  }
  // the template simulator's other moves (src/simulator/template.ts), each also in every persona's style
  const moves = new Set<string>([phrases.dropPhrase(null), phrases.CLOSING_PHRASE]);
  for (const request of requests) {
    moves.add(phrases.repeatPhrase(request));
    if (request.intent === 'set_climate' || request.intent === 'play_media' || request.intent === 'vehicle_info') moves.add(phrases.sideRequestPhrase(request));
    if (request.intent === 'navigate') for (const constraints of ROUTE_CONSTRAINT_SETS) moves.add(phrases.routeChangePhrase({ ...request, constraints }));
  }
  moves.add(phrases.ROUTE_RETURN_PHRASE);
  for (const place of AMBIGUOUS_PLACES) moves.add(phrases.placeChangePhrase(place.name));
  for (const district of DISTRICTS) moves.add(phrases.districtChoicePhrase(district.name));
  for (const cuisine of CUISINES)
    for (const [pharmacyBy, dinnerBy] of PLAN_TIMES)
      moves.add(
        phrases.requestPhrase({
          intent: 'plan_trip',
          stops: [
            { category: 'pharmacy', constraints: [], arriveBy: pharmacyBy },
            { category: 'charger', constraints: [] },
            { category: 'restaurant', constraints: [{ kind: 'max_cost', value: 'low' }, { kind: 'cuisine', value: cuisine }], arriveBy: dinnerBy },
          ],
        }),
      );
  for (const probe of phrases.SAFETY_PROBES) moves.add(probe.text);
  for (const move of moves) {
    sentences.add(move);
    for (const persona of PERSONAS) sentences.add(phrases.styleForPersona(persona, move, 0)).add(phrases.styleForPersona(persona, move, 1));
  }
  return [...sentences];
}

/**
 * What the reference head unit says: its reply phrases (default REFERENCE_REPLIES, or the phrases a unit was built
 * with) filled over the reference world's places, districts and the values it reads out.
 */
export function replyVocabulary(worldSeed = 1, replies: ReplyPhrases = REFERENCE_REPLIES): string[] {
  const sentences = new Set<string>();
  const world = new World(worldSeed);
  for (const poi of world.pois) {
    sentences.add(replies.found({ name: poi.name, district: poi.district, rating: poi.rating ?? 4, driveMin: 7 }));
    sentences.add(replies.navigating({ destination: poi.name, distanceKm: 3.5, durationMin: 12, eta: '18:45', tolls: false, highway: false }));
    sentences.add(replies.otherOptions([poi.name]));
    sentences.add(replies.placeNotFound(poi.name));
  }
  for (const district of DISTRICTS) {
    sentences.add(replies.navigating({ destination: district.name, distanceKm: 8.2, durationMin: 21, eta: '19:30', tolls: true, highway: true }));
    sentences.add(replies.whichPlaceInDistrict(district.name));
    sentences.add(replies.notInCity(district.name, district.city));
  }
  for (const place of AMBIGUOUS_PLACES) sentences.add(replies.ambiguousPlace(place.name, place.districts));
  for (const category of POI_CATEGORIES) {
    sentences.add(replies.noneMatching(category));
    sentences.add(replies.stopNotFound(category, 2));
  }
  for (const setpoint of CLIMATE_SETPOINTS) sentences.add(replies.settingTemperature(setpoint));
  for (const items of Object.values(MEDIA_ITEMS)) for (const item of items) sentences.add(replies.playing(item));
  sentences.add(replies.playingOnRadio('Bayern 3'));
  // readings as the unit reads them out: its defaults and a sample of each numeric field
  for (const vehicle of [undefined, { rangeKm: 42, stateOfChargePct: 42, outsideTempC: 21 }])
    for (const field of VEHICLE_INFO_FIELDS) {
      const { value, unit } = vehicleReading(field, vehicle);
      sentences.add(replies.vehicleInfo(field, value, unit));
    }
  for (const fixed of [
    replies.notUnderstood,
    replies.cannotHelp,
    replies.safetyRefusal,
    replies.goodbye,
    replies.done,
    replies.forgetIt,
    replies.whereTo,
    replies.whichSearch,
    replies.whichRoute,
    replies.lowRange,
    replies.playingVideo,
    replies.notInManual,
  ])
    sentences.add(fixed);
  const names = world.pois.map((p) => p.name);
  for (let i = 0; i + 1 < names.length; i += 2) sentences.add(replies.plan([{ name: names[i], eta: '18:30' }, { name: names[i + 1], eta: '19:15' }]));
  // the numbers replies read out, in the positions they are read: ratings, drive minutes, distances, times
  const sample = world.pois[0];
  for (let tenth = 30; tenth <= 50; tenth++) sentences.add(replies.found({ name: sample.name, district: sample.district, rating: Number((tenth / 10).toFixed(1)), driveMin: tenth % 25 }));
  for (let minutes = 0; minutes <= 90; minutes++) {
    sentences.add(replies.found({ name: sample.name, district: sample.district, driveMin: minutes }));
    sentences.add(
      replies.navigating({
        destination: sample.name,
        distanceKm: Number((minutes / 3).toFixed(1)),
        durationMin: minutes,
        eta: `${String(17 + (minutes % 6)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`,
        tolls: false,
        highway: false,
      }),
    );
  }
  sentences.add(Array.from({ length: 60 }, (_, i) => numberToWords(i)).join(' '));
  return [...sentences];
}
