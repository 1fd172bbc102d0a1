import type { ContextVector } from '../domain/context.ts';
import type { Request } from '../domain/targets.ts';
import type { Action, AssistantReply } from '../protocol/bridge.ts';
import { poiMeets, routeMeets } from '../world/constraints.ts';
import { samePlaceName } from '../world/names.ts';

/**
 * Whether a driver reading `reply` sees `request` met, from what the reply itself shows: the results, the route,
 * the plan or the setting it announces, and what it claims about them (a place it calls "rated 3.9" does not meet
 * "at least 4" to the driver; one it says nothing about is taken at its word). A truthful "nothing found" answers a search too. The driver cannot check the world
 * behind a claim; that is the judges' work. This is how a simulated user without evaluator feedback (the paper's
 * baseline, where G carries only what the user said) knows a request was handled and moves on instead of asking
 * again, as the paper's LLM user does by reading H.
 */
export function driverSeesMet(request: Request, reply: AssistantReply | null, context: Pick<ContextVector, 'date' | 'time'>): boolean {
  if (!reply) return false;
  return reply.actions.some((action) => actionMeets(request, action, context));
}

function actionMeets(request: Request, action: Action, when: Pick<ContextVector, 'date' | 'time'>): boolean {
  switch (request.intent) {
    case 'find_poi':
      if (action.type === 'refusal') return action.reason === 'not_found';
      return action.type === 'poi_results' && action.category === request.category && action.pois.length > 0 && request.constraints.every((c) => poiMeets(action.pois[0], c, when) !== false);
    case 'navigate':
      if (action.type !== 'route') return false;
      if (request.destination !== 'poi' && !samePlaceName(action.destination.district, request.destination) && !samePlaceName(action.destination.name, request.destination)) return false;
      return request.constraints.every((c) => routeMeets(action, c));
    case 'plan_trip':
      return action.type === 'trip_plan' && action.stops.length >= request.stops.length;
    case 'set_climate':
      return action.type === 'climate' && action.setpointC === request.setpointC;
    case 'play_media':
      return action.type === 'media' && action.action === 'play' && action.source === request.source;
    case 'vehicle_info':
      return action.type === 'vehicle_info' && action.field === request.field;
  }
}
