import type { Constraint } from '../domain/targets.ts';
import type { Action, Poi } from '../protocol/bridge.ts';
import { costRank, isOpenAt } from './world.ts';

export type RouteAction = Extract<Action, { type: 'route' }>;

/**
 * Whether a POI meets one constraint, evaluated from the POI's own attributes.
 * Returns null when the POI does not carry the attribute needed (cannot be checked).
 * Constraints that do not apply to POIs (tolls, highways) are not the POI's business: true.
 */
export function poiMeets(poi: Poi, constraint: Constraint, when: { date: string; time: string }): boolean | null {
  switch (constraint.kind) {
    case 'cuisine':
      return poi.cuisine === undefined ? null : poi.cuisine.toLowerCase() === constraint.value.toLowerCase();
    case 'max_cost':
      return poi.cost === undefined ? null : costRank(poi.cost) <= costRank(constraint.value);
    case 'min_rating':
      return poi.rating === undefined ? null : poi.rating >= constraint.value;
    case 'open_at':
      return poi.openingHours === undefined ? null : isOpenAt(poi.openingHours, when.date, constraint.value);
    case 'district':
      return poi.district.toLowerCase() === constraint.value.toLowerCase();
    case 'max_drive_min':
      return poi.driveMin === undefined ? null : poi.driveMin <= constraint.value;
    case 'avoid_tolls':
    case 'avoid_highways':
    case 'arrive_by':
      return true;
  }
}

export function routeMeets(route: RouteAction, constraint: Constraint): boolean {
  switch (constraint.kind) {
    case 'avoid_tolls':
      return !route.tolls;
    case 'avoid_highways':
      return !route.highway;
    case 'arrive_by':
      return route.eta <= constraint.value;
    case 'district':
      return route.destination.district.toLowerCase() === constraint.value.toLowerCase();
    case 'max_drive_min':
      return route.durationMin <= constraint.value;
    default:
      return true;
  }
}

/** Whether a POI meets every constraint (brokenConstraints is empty) without building the list. */
export function meetsAll(poi: Poi, constraints: readonly Constraint[], when: { date: string; time: string }): boolean {
  for (const c of constraints) if (poiMeets(poi, c, when) !== true) return false;
  return true;
}

/** The constraints a POI breaks (unknown attributes count as broken: a judge cannot confirm them). */
export function brokenConstraints(poi: Poi, constraints: readonly Constraint[], when: { date: string; time: string }): Constraint[] {
  return constraints.filter((c) => poiMeets(poi, c, when) !== true);
}
