import type { GeoPoint } from '../domain/context.ts';
import type { Constraint, PoiCategory } from '../domain/targets.ts';
import type { Poi } from '../protocol/bridge.ts';
import { meetsAll } from './constraints.ts';
import type { World } from './world.ts';

/** Where and when a search is made: the city and position of the car, the date and clock of the conversation. */
export interface SearchSituation {
  city: string;
  position: GeoPoint;
  date: string;
  time: string;
}

/**
 * The places of `world` that meet every constraint of a search for `category` in the car's city, judged on the
 * world's own attributes (drive times from the car's position). None means no head unit over this world can
 * truthfully offer a match: "not found" is the right answer.
 */
export function placesMeeting(world: World, category: PoiCategory, constraints: readonly Constraint[], situation: SearchSituation): Poi[] {
  return world.placesFrom(situation.city, category, situation.position).filter((p) => meetsAll(p, constraints, situation));
}

/**
 * The world's own record of a place a head unit offered (by id, else by name and district), with its drive time
 * from the car's position; undefined when the world has no such place (the unit made it up).
 */
export function worldRecordOf(world: World, offered: Poi, from: GeoPoint): Poi | undefined {
  const name = offered.name.toLowerCase();
  const district = offered.district.toLowerCase();
  const byId = world.poi(offered.id);
  const record = byId?.name.toLowerCase() === name ? byId : world.pois.find((p) => p.name.toLowerCase() === name && p.district.toLowerCase() === district);
  return record && world.withDrive(record, from);
}
