import type { ContextVector } from '../domain/context.ts';
import type { Request, Target } from '../domain/targets.ts';
import { describeConstraint } from '../domain/targets.ts';
import type { Action } from '../protocol/bridge.ts';
import { placesMeeting, type SearchSituation } from '../world/feasibility.ts';
import { placeNameKey } from '../world/names.ts';
import { DISTRICTS, type World } from '../world/world.ts';

/**
 * A "not found" answer is a claim about the world: that no place meets the request. It completes its target when
 * it is true, and the bench can only say so when it knows the unit's world (or the simulator, knowing it, marked
 * the target `none_exists`); without one the claim is undecided for that target, never a failure.
 */

/** Whether the reply says no place meets this place request: an empty result list for it, or a not_found refusal with no answer to it. */
export function notFoundClaimed(request: Request, action: Action | undefined, notFoundRefusal: boolean): boolean {
  if (request.intent !== 'find_poi' && request.intent !== 'navigate' && request.intent !== 'plan_trip') return false;
  if (action?.type === 'poi_results') return action.pois.length === 0;
  return action === undefined && notFoundRefusal;
}

/** true: no place meets it (the claim completes the target); false: the world has one; null: no world to tell (why says so). */
export type NotFoundTruth = { truthful: boolean } | { truthful: null; why: string };

export function notFoundTruth(target: Target, context: ContextVector, world: World | null): NotFoundTruth {
  if (target.expectedOutcome === 'none_exists') return { truthful: true };
  if (!world) {
    return {
      truthful: null,
      why: `"Not found" for ${target.id} (${describeRequest(target.request)}) cannot be checked: the bench does not know the unit's places (a world: file with them decides it).`,
    };
  }
  const situation: SearchSituation = { city: context.location.city, position: context.location.position, date: context.date, time: context.time };
  return { truthful: !placeExists(world, target.request, situation) };
}

/** Whether the world has a place that answers the request. */
function placeExists(world: World, request: Request, situation: SearchSituation): boolean {
  switch (request.intent) {
    case 'find_poi':
      return placesMeeting(world, request.category, request.constraints, situation).length > 0;
    case 'plan_trip':
      // a trip exists only when every stop has a place
      return request.stops.every((stop) => placesMeeting(world, stop.category, stop.constraints, situation).length > 0);
    case 'navigate': {
      // "there" points at a place offered for another target: it exists
      if (request.destination === 'poi') return true;
      const key = placeNameKey(request.destination);
      return DISTRICTS.some((d) => placeNameKey(d.name) === key) || world.pois.some((p) => placeNameKey(p.name) === key);
    }
    default:
      return true;
  }
}

function describeRequest(request: Request): string {
  switch (request.intent) {
    case 'find_poi':
      return [`a ${request.category}`, ...request.constraints.map(describeConstraint)].join(', ');
    case 'navigate':
      return request.destination === 'poi' ? 'a route to the chosen place' : `a route to ${request.destination}`;
    case 'plan_trip':
      return `a trip via ${request.stops.map((s) => s.category).join(', ')}`;
    default:
      return request.intent;
  }
}
