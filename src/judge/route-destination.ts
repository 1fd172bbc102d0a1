import { describeConstraint, type Request, type Target } from '../domain/targets.ts';
import type { Action, Poi } from '../protocol/bridge.ts';
import { poiMeets, type RouteAction } from '../world/constraints.ts';
import { worldRecordOf } from '../world/feasibility.ts';
import type { World } from '../world/world.ts';
import type { TurnJudgeInput } from './types.ts';

type Check = { ok: true } | { ok: false; why: string };

/**
 * "Navigate there": a route to the place chosen for a search must go to a place that meets that search's
 * constraints as they stand now, a constraint the driver added after the results included ("make it rated at
 * least 4.5"). The search is the latest one still wanted for the destination's category. The place is judged on
 * the world's record when the bench knows the world, else on what the unit itself said of it in an earlier result
 * list; only a constraint the place certainly breaks is evidence (an attribute nobody reported decides nothing).
 */
export function checkRouteDestination(request: Request, action: Action, input: TurnJudgeInput, world: World | null): Check {
  if (request.intent !== 'navigate' || request.destination !== 'poi' || action.type !== 'route' || !action.destination.poiId) return { ok: true };
  const place = destinationPlace(action, input, world);
  if (!place) return { ok: true };
  const search = [...input.targets].reverse().find((t): t is Target & { request: Extract<Request, { intent: 'find_poi' }> } => t.status !== -1 && t.request.intent === 'find_poi' && t.request.category === place.poi.category);
  if (!search) return { ok: true };
  const when = { date: input.context.date, time: input.context.time };
  const broken = search.request.constraints.filter((c) => poiMeets(place.poi, c, when) === false);
  if (broken.length === 0) return { ok: true };
  return { ok: false, why: `Route goes to ${place.poi.name}, which breaks ${broken.map(describeConstraint).join(', ')} asked for the search ${search.id} (${place.source}).` };
}

/** The route's destination as the world records it, else as the unit offered it earlier in this conversation. */
function destinationPlace(route: RouteAction, input: TurnJudgeInput, world: World | null): { poi: Poi; source: string } | undefined {
  const offered = input.history
    .flatMap((turn) => turn.reply?.actions ?? [])
    .flatMap((a) => (a.type === 'poi_results' ? a.pois : []))
    .findLast((p) => p.id === route.destination.poiId);
  if (world) {
    const like = offered ?? world.poi(route.destination.poiId!);
    const record = like && worldRecordOf(world, like, input.context.location.position);
    if (record) return { poi: record, source: "by the world's record" };
  }
  return offered && { poi: offered, source: 'as the unit listed it' };
}
