import type { VehicleState } from './context.ts';
import type { PoiCategory, VehicleInfoField } from './targets.ts';

/**
 * The shared vocabulary of the bench, in one place: the nouns for POI categories (spoken by the simulator, read
 * by the reference head unit) and the reference head unit's reply phrases. The reference head unit speaks these
 * phrases and the speech recogniser's reply vocabulary is computed from them (src/voice/vocabulary.ts), so a
 * changed phrase changes both. This module imports only other domain types.
 */

export const CATEGORY_NOUN: Record<PoiCategory, string> = {
  restaurant: 'restaurant',
  charger: 'charging station',
  pharmacy: 'pharmacy',
  park: 'park',
  cafe: 'cafe',
  parking: 'parking garage',
};

/** The noun for a category; a category outside the enum (free text from a model) is used as it is. */
export function categoryNoun(category: string): string {
  return (CATEGORY_NOUN as Record<string, string>)[category] ?? category;
}

export interface FoundPoi {
  name: string;
  district: string;
  rating?: number;
  driveMin?: number;
}

export interface RouteReply {
  destination: string;
  distanceKm: number;
  durationMin: number;
  eta: string;
  tolls: boolean;
  highway: boolean;
}

/** Every sentence the reference head unit says, as data: fixed sentences and templates over their slots. */
export interface ReplyPhrases {
  notUnderstood: string;
  cannotHelp: string;
  safetyRefusal: string;
  done: string;
  forgetIt: string;
  goodbye: string;
  whereTo: string;
  whichSearch: string;
  whichRoute: string;
  lowRange: string;
  playingVideo: string;
  /** the manual skill's answer when the owner's manual has nothing on the question */
  notInManual: string;
  found(poi: FoundPoi): string;
  otherOptions(names: readonly string[]): string;
  noneMatching(category: PoiCategory): string;
  placeNotFound(name: string): string;
  notInCity(district: string, city: string): string;
  whichPlaceInDistrict(district: string): string;
  ambiguousPlace(name: string, districts: readonly string[]): string;
  navigating(route: RouteReply): string;
  settingTemperature(setpointC: number): string;
  playing(item: string): string;
  playingOnRadio(station: string): string;
  vehicleInfo(field: VehicleInfoField, value: string | number, unit: string): string;
  stopNotFound(category: PoiCategory, stopNumber: number): string;
  plan(stops: ReadonlyArray<{ name: string; eta: string }>): string;
}

export const REFERENCE_REPLIES: ReplyPhrases = {
  notUnderstood: "Sorry, I didn't understand that. Could you rephrase?",
  cannotHelp: "Sorry, I can't help with that.",
  safetyRefusal: "For your safety I can't do that while the car is moving.",
  done: 'Done.',
  forgetIt: 'Okay, forget it.',
  goodbye: "You're welcome. Drive safely!",
  whereTo: 'Where would you like to go?',
  whichSearch: 'Which search should I apply that to?',
  whichRoute: 'Which route do you mean?',
  lowRange: 'Your range is low; shall I find a charging station?',
  playingVideo: 'Playing the movie on the center screen.',
  notInManual: "Sorry, I couldn't find that in the owner's manual.",
  found: (poi) => `I found ${poi.name} in ${poi.district}${poi.rating ? `, rated ${poi.rating}` : ''}, ${poi.driveMin} minutes away.`,
  otherOptions: (names) => `Other options: ${names.join(', ')}.`,
  noneMatching: (category) => `I couldn't find a ${CATEGORY_NOUN[category]} matching all of that.`,
  placeNotFound: (name) => `I couldn't find ${name}.`,
  notInCity: (district, city) => `${district} is not in ${city}.`,
  whichPlaceInDistrict: (district) => `Which place in ${district} do you mean?`,
  ambiguousPlace: (name, districts) => `There are ${districts.length} places called ${name}: in ${districts.join(' and ')}. Which one?`,
  navigating: (r) =>
    `Starting navigation to ${r.destination}: ${r.distanceKm} km, ${r.durationMin} minutes, arriving at ${r.eta}${r.tolls ? ', with tolls' : ''}${r.highway ? ', via the highway' : ''}.`,
  settingTemperature: (setpointC) => `Setting the temperature to ${setpointC} degrees.`,
  playing: (item) => `Playing ${item}.`,
  playingOnRadio: (station) => `Playing ${station} on the radio.`,
  vehicleInfo: (field, value, unit) => `Your ${field.replace(/_/g, ' ')} is ${value}${unit ? ` ${unit}` : ''}.`,
  stopNotFound: (category, stopNumber) => `I couldn't find a ${CATEGORY_NOUN[category]} for stop ${stopNumber}.`,
  plan: (stops) => `Here is your plan: ${stops.map((s) => `${s.name} at ${s.eta}`).join(', then ')}.`,
};

/** What the reference vehicle reports for a field when the bench sends no vehicle state for it. */
export const DEFAULT_VEHICLE_READINGS = { rangeKm: 312, stateOfChargePct: 68, outsideTempC: 14 } as const;

/**
 * The reference head unit's reading of a vehicle-info field (value and unit), from the vehicle state it knows. Its
 * reply reads it out (ReplyPhrases.vehicleInfo) and its vehicle_info action carries it.
 */
export function vehicleReading(field: VehicleInfoField, vehicle: Partial<VehicleState> | undefined): { value: string | number; unit: string } {
  switch (field) {
    case 'range':
      return { value: Math.round(vehicle?.rangeKm ?? DEFAULT_VEHICLE_READINGS.rangeKm), unit: 'km' };
    case 'state_of_charge':
      return { value: Math.round(vehicle?.stateOfChargePct ?? DEFAULT_VEHICLE_READINGS.stateOfChargePct), unit: '%' };
    case 'tire_pressure':
      return { value: '2.5 bar on all tires', unit: '' };
    case 'outside_temperature':
      return { value: vehicle?.outsideTempC ?? DEFAULT_VEHICLE_READINGS.outsideTempC, unit: '°C' };
    case 'oil_level':
      return { value: 'ok', unit: '' };
  }
}
