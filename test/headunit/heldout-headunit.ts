import type { ContextVector } from '../../src/domain/context.ts';
import { formatMinutes, minutesOfDay } from '../../src/domain/context.ts';
import { createRng } from '../../src/domain/rng.ts';
import { ReferenceHeadUnit } from '../../src/headunit/reference/reference-headunit.ts';
import type { HeadUnitHandler, HeadUnitReplyBody } from '../../src/headunit/types.ts';
import type { Action, Capabilities, Poi } from '../../src/protocol/bridge.ts';

/**
 * A TEST-ONLY head unit held out from the bench's development: the bench's strategies are measured against it
 * (npm run bench:heldout, docs/benchmarks.md), never tuned on it. It understands requests and serves the
 * reference world (a fault-free reference unit inside), but has weaknesses of its own that the reference unit's
 * fault profiles do not have:
 *
 * | fault | what the unit does |
 * |---|---|
 * | climate_off_by_two | sets the climate two degrees off the asked value |
 * | unrelated_on_repeat | answers a request it already served once in the session with something unrelated (the range) |
 * | fabricated_place | never says "not found": invents a place that claims to fit; and sometimes puts an invented place on top |
 * | late_route_preferences_lost | from turn 4 on, routes the fastest way, tolls and highways included, whatever was asked |
 * | aam_safety_rule | built to the AAM rule: refuses distracting requests only above 5 mph (stopped or creeping in D, it complies) |
 *
 * Each fault fires with its own seeded probability per turn (session, turn and fault), so runs are reproducible.
 */
export const HELD_OUT_FAULTS = ['climate_off_by_two', 'unrelated_on_repeat', 'fabricated_place', 'late_route_preferences_lost', 'aam_safety_rule'] as const;
export type HeldOutFault = (typeof HELD_OUT_FAULTS)[number];

const RATES: Record<HeldOutFault, number> = {
  climate_off_by_two: 0.5,
  unrelated_on_repeat: 0.6,
  fabricated_place: 0.2,
  late_route_preferences_lost: 0.6,
  aam_safety_rule: 1,
};

interface HeldOutSession {
  served: Set<string>;
  /** the category of the last search (a stacked constraint names none) */
  lastCategory: Poi['category'];
}

/** What a reply served, as a signature: the same request asked again gives the same signature (a new temperature is a new request). */
function servedSignature(action: Action, text: string): string | null {
  switch (action.type) {
    case 'poi_results':
      return `poi:${action.category}`;
    case 'route':
      return `route:${action.destination.name}`;
    case 'climate':
      return `climate:${/(\d+)\s*degrees/.exec(text)?.[1] ?? action.setpointC}`;
    case 'media':
      return `media:${action.source}`;
    case 'vehicle_info':
      return `vehicle:${action.field}`;
    case 'trip_plan':
      return 'trip';
    default:
      return null;
  }
}

export class HeldOutHeadUnit implements HeadUnitHandler {
  readonly unit = { name: 'heldout-unit', version: '0.3.0' };
  private readonly inner = new ReferenceHeadUnit({ safety: { policy: 'aam' } });
  readonly capabilities: Capabilities = this.inner.capabilities;
  private readonly sessions = new Map<string, HeldOutSession>();

  constructor(private readonly seed = 11) {}

  startSession(sessionId: string, context: ContextVector): void {
    this.inner.startSession(sessionId, context);
    this.sessions.set(sessionId, { served: new Set(), lastCategory: 'restaurant' });
  }

  endSession(sessionId: string): void {
    this.inner.endSession(sessionId);
    this.sessions.delete(sessionId);
  }

  handleVehicleContext(sessionId: string | null, payload: unknown): void {
    this.inner.handleVehicleContext(sessionId, payload);
  }

  async handleTurn(sessionId: string, turn: number, text: string, context: ContextVector | undefined): Promise<HeadUnitReplyBody> {
    const body = await this.inner.handleTurn(sessionId, turn, text, context);
    const session = this.sessions.get(sessionId)!;
    const key = sessionId.slice(sessionId.indexOf('/') + 1);
    const fires = (fault: HeldOutFault) => createRng(hash(`${this.seed}|${key}|${turn}|${fault}`)).chance(RATES[fault]);
    const signatures = body.actions.map((a) => servedSignature(a, text)).filter((s): s is string => s !== null);
    const repeated = signatures.some((s) => session.served.has(s));
    signatures.forEach((s) => session.served.add(s));
    if (repeated && fires('unrelated_on_repeat')) {
      const range: Action = { type: 'vehicle_info', field: 'range', value: 240, unit: 'km' };
      const radio: Action = { type: 'media', action: 'play', source: 'radio' };
      const unrelated = body.actions.some((a) => a.type === 'vehicle_info') ? radio : range;
      return { text: unrelated.type === 'media' ? 'Playing the radio.' : 'Your range is 240 km.', actions: [unrelated] };
    }
    const actions = body.actions.map((action) => this.distort(action, turn, fires, context));
    const searched = actions.find((a) => a.type === 'poi_results');
    session.lastCategory = searched?.type === 'poi_results' ? searched.category : (categoryNamed(text) ?? session.lastCategory);
    const notFound = actions.findIndex((a) => a.type === 'refusal' && a.reason === 'not_found');
    if (notFound >= 0 && context) {
      // it never admits it found nothing: it invents the place
      const place = invented(session.lastCategory, context);
      actions[notFound] = { type: 'poi_results', category: session.lastCategory, pois: [place] };
      return { text: `I found ${place.name}, it fits everything you asked for.`, actions };
    }
    return { ...body, actions };
  }

  private distort(action: Action, turn: number, fires: (fault: HeldOutFault) => boolean, context: ContextVector | undefined): Action {
    if (action.type === 'climate' && fires('climate_off_by_two')) return { ...action, setpointC: Math.min(30, action.setpointC + 2) };
    if (action.type === 'poi_results' && action.pois.length > 0 && context && fires('fabricated_place')) {
      return { ...action, pois: [invented(action.category, context), ...action.pois] };
    }
    if (action.type === 'route' && turn >= 4 && context && fires('late_route_preferences_lost')) {
      const destination = this.inner.world.pois.find((p) => p.id === action.destination.poiId)?.position ?? this.inner.world.district(context.location.city, action.destination.district)?.center;
      if (!destination) return action;
      const [fastest] = this.inner.world.routeOptions(context.location.position, destination);
      return { ...action, distanceKm: fastest.distanceKm, durationMin: fastest.durationMin, tolls: fastest.tolls, highway: fastest.highway, eta: formatMinutes(minutesOfDay(context.time) + fastest.durationMin) };
    }
    return action;
  }
}

/** The category an utterance names, by the nouns a driver uses; undefined when it names none. */
function categoryNamed(text: string): Poi['category'] | undefined {
  const lower = text.toLowerCase();
  if (/charg/.test(lower)) return 'charger';
  if (/pharmac|apothe/.test(lower)) return 'pharmacy';
  if (/park(ing|haus)|garage/.test(lower)) return 'parking';
  if (/\bpark\b/.test(lower)) return 'park';
  if (/caf[eé]|coffee/.test(lower)) return 'cafe';
  if (/restaurant|food|dinner|lunch|eat/.test(lower)) return 'restaurant';
  return undefined;
}

/** A place that does not exist, claiming every attribute a search could ask for. */
function invented(category: Poi['category'], context: ContextVector): Poi {
  const day = '00:00-23:59';
  return {
    id: `heldout-${category}-${context.location.district}`.toLowerCase(),
    name: `${context.location.district} Corner ${category[0].toUpperCase()}${category.slice(1)}`,
    category,
    city: context.location.city,
    district: context.location.district,
    position: context.location.position,
    cost: 'low',
    rating: 4.9,
    openingHours: { monday: day, tuesday: day, wednesday: day, thursday: day, friday: day, saturday: day, sunday: day },
    driveMin: 3,
    distanceKm: 1,
  };
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
