import type { ContextVector, GeoPoint } from '../../domain/context.ts';
import { formatMinutes, minutesOfDay } from '../../domain/context.ts';
import { DEFAULT_SAFETY_POLICY, safetyRuling, type SafetyPolicy } from '../../domain/safety-policy.ts';
import type { Constraint, PlanStop, PoiCategory } from '../../domain/targets.ts';
import type { Action, Capabilities, Poi } from '../../protocol/bridge.ts';
import { meetsAll, routeMeets } from '../../world/constraints.ts';
import { createRng, hashSeed } from '../../domain/rng.ts';
import { World, isOpenAt } from '../../world/world.ts';
import { DEFAULT_VEHICLE_READINGS, REFERENCE_REPLIES, vehicleReading, type ReplyPhrases } from '../../domain/vocabulary.ts';
import type { HeadUnitHandler, HeadUnitReplyBody } from '../types.ts';
import { FAULT_PROFILES, FaultConfigSchema, faultRates, type FaultConfigInput, type FaultProfile } from './faults.ts';
import { BUS_FAULT_PROFILES, type ReferenceBus } from './bus-actions.ts';
import { understand, type ParsedRequest } from '../../world/nlu.ts';
import { MANUAL_FAULT_PROFILES, manualFaultRates, type ManualFaultConfig, type ManualFaultProfile, type ManualQaSkill } from './manual-skill.ts';

/** A question about the car itself, for the manual skill even when a word in it looks like a dialogue request. */
const MANUAL_QUESTION = /\b(how do i|how does|what are the steps|what is|what should i|safety information|anything i should|owner'?s manual|the manual)\b/i;
import { VehicleContextDecoder, type DecodedVehicleContext, type VehicleDecoderCounts } from '../../vehicle/decoder.ts';
import type { VehicleMapping } from '../../vehicle/mapping.ts';

/** Minutes spent at each stop of a multi-stop plan. */
const DWELL_MIN: Record<PoiCategory, number> = { restaurant: 45, charger: 25, pharmacy: 10, park: 30, cafe: 20, parking: 5 };

interface SessionState {
  context: ContextVector;
  /** remembered search per category: the constraints the user established */
  memory: Map<PoiCategory, Constraint[]>;
  lastCategory: PoiCategory | null;
  selected: Poi | null;
  lastDomain: string | null;
  pendingChoice: Poi[] | null;
  /** route preferences the user established (tolls, highways) and the active destination */
  routeConstraints: Constraint[];
  routeDestination: { name: string; district: string; poiId?: string; position: GeoPoint } | null;
  /** domain of each earlier turn, to know when the user switched topics */
  domains: string[];
  /** decodes this session's CAN frames; what it knows overrides the bench's context */
  can: VehicleContextDecoder | null;
}

export interface ReferenceHeadUnitOptions {
  worldSeed?: number;
  /** the places of a world file a campaign names; default: the reference world of `worldSeed` */
  world?: World;
  faults?: FaultConfigInput;
  /** the DBC mapping whose frames this head unit decodes (vehicle_context over the bridge) */
  vehicleMapping?: VehicleMapping;
  /** when it refuses distracting or dangerous requests; default nhtsa-2013 */
  safety?: SafetyPolicy;
  /** owner's-manual questions go to this skill (retrieval + extractive answer), with its own fault profiles */
  manual?: { skill: ManualQaSkill; faults?: ManualFaultConfig };
  /** what it says; default REFERENCE_REPLIES (src/domain/vocabulary.ts), which the recogniser's vocabulary follows */
  replies?: ReplyPhrases;
  /** the build it announces in hello; default one named after its fault profiles (referenceBuild) */
  build?: string;
  /** sends its climate, media and vehicle-control actions as frames on a bus the bench observes (headUnit.bus) */
  bus?: ReferenceBus;
  /** false: a text-only unit, its replies carry no structured actions (default true) */
  announceActions?: boolean;
}

/**
 * The reference unit's default build name: its fault profiles and rates, so two runs against differently faulted
 * reference units compare as two builds ("reference", "reference+unsafe_compliance@1").
 */
export function referenceBuild(faults: FaultConfigInput | undefined): string {
  const parsed = faults ? FaultConfigSchema.parse(faults) : null;
  const rates = parsed ? [...faultRates(parsed)].filter(([, rate]) => rate > 0) : [];
  return rates.length === 0 ? 'reference' : `reference+${rates.map(([profile, rate]) => `${profile}@${rate}`).join(',')}`;
}

interface TurnOutcome {
  text: string[];
  actions: Action[];
  fired: FaultProfile[];
}

/**
 * The offline reference head unit: an in-car assistant over a deterministic world with
 * rule-based understanding, per-session state and seedable fault profiles that reproduce
 * each failure type. It reports the faults that fired in `diagnostics` (ground truth for tests).
 */
export class ReferenceHeadUnit implements HeadUnitHandler {
  readonly unit: { name: string; version: string; build: string };
  readonly capabilities: Capabilities;
  readonly world: World;
  private readonly sessions = new Map<string, SessionState>();
  private readonly faultRates: Map<FaultProfile, number>;
  private readonly faultSeed: number;
  /** vehicle frames addressed to every session (sessionId null) */
  private readonly sharedCan: VehicleContextDecoder | null;
  private readonly retiredCanCounts: VehicleDecoderCounts[] = [];
  private readonly replies: ReplyPhrases;

  constructor(private readonly options: ReferenceHeadUnitOptions = {}) {
    this.unit = { name: 'icabench-reference', version: '1.0.0', build: options.build ?? referenceBuild(options.faults) };
    this.capabilities = { text: true, audio: false, vehicleContext: true, structuredActions: options.announceActions ?? true };
    this.world = options.world ?? new World(options.worldSeed ?? 1);
    this.replies = options.replies ?? REFERENCE_REPLIES;
    this.faultRates = options.faults ? faultRates(FaultConfigSchema.parse(options.faults)) : new Map();
    this.faultSeed = options.faults?.seed ?? 0;
    this.sharedCan = options.vehicleMapping ? new VehicleContextDecoder(options.vehicleMapping) : null;
  }

  startSession(sessionId: string, context: ContextVector): void {
    this.sessions.set(sessionId, { context, memory: new Map(), lastCategory: null, selected: null, lastDomain: null, pendingChoice: null, routeConstraints: [], routeDestination: null, domains: [],
      can: this.options.vehicleMapping ? new VehicleContextDecoder(this.options.vehicleMapping) : null });
  }

  endSession(sessionId: string): void {
    const can = this.sessions.get(sessionId)?.can;
    if (can) this.retiredCanCounts.push(can.counts());
    this.sessions.delete(sessionId);
  }

  /** Frames are decoded with the configured DBC mapping; bad frames are counted by the decoder, never used. */
  handleVehicleContext(sessionId: string | null, payload: unknown): void {
    const decoder = sessionId === null ? this.sharedCan : this.sessions.get(sessionId)?.can;
    decoder?.ingest(payload);
  }

  /** Totals over every session's decoder: frames accepted and rejected (unknown id, wrong length, bad values). */
  vehicleCounts(): VehicleDecoderCounts {
    const all = [...this.retiredCanCounts, ...[...this.sessions.values()].flatMap((s) => (s.can ? [s.can.counts()] : [])), ...(this.sharedCan ? [this.sharedCan.counts()] : [])];
    const total: VehicleDecoderCounts = { framesAccepted: 0, unknownId: 0, lengthMismatch: 0, valuesRejected: 0, messagesRejected: 0 };
    for (const c of all) for (const k of Object.keys(total) as Array<keyof VehicleDecoderCounts>) total[k] += c[k];
    return total;
  }

  async handleTurn(sessionId: string, turn: number, text: string, context: ContextVector | undefined): Promise<HeadUnitReplyBody> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`unknown session ${sessionId}`);
    if (context) session.context = context;
    const decoded = session.can?.state() ?? this.sharedCan?.state() ?? null;
    if (decoded) session.context = withDecodedVehicle(session.context, decoded);
    // draws depend on the conversation, not on the run: the bench's session ids are "<run id>/<conversation key>",
    // so a rerun of a config meets the same faults, and a guided and a baseline run meet them on the same conversations
    const conversation = sessionId.slice(sessionId.lastIndexOf('/') + 1);
    const fires = (profile: FaultProfile): boolean =>
      this.faultRates.has(profile) && createRng(hashSeed(this.faultSeed, conversation, turn, profile)).chance(this.faultRates.get(profile)!);

    const requests = understand(text);
    if (this.options.manual && (requests.length === 0 || MANUAL_QUESTION.test(text))) return this.answerFromManual(this.options.manual, conversation, turn, text);
    const outcome = this.respond(session, requests, fires);
    session.domains.push(session.lastDomain ?? 'none');
    // what it does goes out on the bus before it answers, as a unit commands the car and then confirms
    const busFired = (await this.options.bus?.emit(outcome.actions, conversation, turn)) ?? [];
    return {
      text: outcome.text.join(' '),
      actions: this.capabilities.structuredActions ? outcome.actions : [],
      diagnostics: { faults: [...outcome.fired.map((profile) => ({ profile, label: FAULT_PROFILES[profile] })), ...busFired.map((profile) => ({ profile, label: BUS_FAULT_PROFILES[profile] }))] },
    };
  }

  private async answerFromManual(manual: NonNullable<ReferenceHeadUnitOptions['manual']>, conversation: string, turn: number, text: string): Promise<HeadUnitReplyBody> {
    const rates = manual.faults ? manualFaultRates(manual.faults) : new Map<ManualFaultProfile, number>();
    const seed = manual.faults?.seed ?? 0;
    const fires = (profile: ManualFaultProfile) => rates.has(profile) && createRng(hashSeed(seed, conversation, turn, profile)).chance(rates.get(profile)!);
    const answer = await manual.skill.answer(text, fires);
    return { text: answer.text, actions: [], diagnostics: { faults: [], manualFaults: answer.fired.map((profile) => ({ profile, metric: MANUAL_FAULT_PROFILES[profile] })), manualSection: answer.sectionId } };
  }

  private respond(session: SessionState, requests: ParsedRequest[], fires: (p: FaultProfile) => boolean): TurnOutcome {
    const out: TurnOutcome = { text: [], actions: [], fired: [] };
    if (requests.length === 0) {
      out.text.push(this.replies.notUnderstood);
      return out;
    }
    const actionable = requests.filter((r) => r.kind !== 'closing' && r.kind !== 'drop' && r.kind !== 'safety');
    if (actionable.length > 0 && fires('over_refusal')) {
      out.text.push(this.replies.cannotHelp);
      out.actions.push({ type: 'refusal', reason: 'unsupported' });
      out.fired.push('over_refusal');
      return out;
    }
    const spatial = (r: ParsedRequest) => r.kind === 'find_poi' || r.kind === 'navigate' || r.kind === 'plan_trip';
    if (requests.length === 1 && spatial(requests[0]) && fires('wrong_domain')) {
      out.text.push(this.replies.playingOnRadio('Bayern 3'));
      out.actions.push({ type: 'media', action: 'play', source: 'radio', item: 'Bayern 3' });
      out.fired.push('wrong_domain');
      return out;
    }
    let handled = requests;
    if (actionable.length >= 2 && fires('omit_request')) {
      handled = [requests[0]];
      out.fired.push('omit_request');
    }
    for (const request of handled) this.handle(session, request, fires, out);
    return out;
  }

  private handle(session: SessionState, request: ParsedRequest, fires: (p: FaultProfile) => boolean, out: TurnOutcome): void {
    const ctx = session.context;
    switch (request.kind) {
      case 'find_poi': {
        session.memory.set(request.category, request.constraints);
        this.search(session, request.category, request.constraints, fires, out, 'new');
        return;
      }
      case 'add_constraints':
        this.addConstraints(session, request, fires, out);
        return;
      case 'return_to':
        this.returnTo(session, request, fires, out);
        return;
      case 'resume_route':
        this.resumeRoute(session, request, fires, out);
        return;
      case 'navigate':
        this.navigate(session, request, fires, out);
        return;
      case 'choose':
        this.choose(session, request, fires, out);
        return;
      case 'plan_trip':
        this.plan(session, request.stops, fires, out);
        return;
      case 'set_climate':
        out.text.push(this.replies.settingTemperature(request.setpointC));
        out.actions.push({ type: 'climate', setpointC: request.setpointC, zone: 'all' });
        session.lastDomain = 'climate';
        return;
      case 'play_media':
        out.text.push(this.replies.playing(request.item));
        out.actions.push({ type: 'media', action: 'play', source: request.source, item: request.item });
        session.lastDomain = 'media';
        return;
      case 'vehicle_info': {
        const { value, unit } = vehicleReading(request.field, ctx.vehicle);
        out.text.push(this.replies.vehicleInfo(request.field, value, unit));
        out.actions.push({ type: 'vehicle_info', field: request.field, value, ...(unit ? { unit } : {}) });
        if (request.field === 'range' && (ctx.vehicle?.rangeKm ?? DEFAULT_VEHICLE_READINGS.rangeKm) < 50) out.text.push(this.replies.lowRange);
        session.lastDomain = 'vehicle';
        return;
      }
      case 'safety':
        this.safetyProbe(session, request, fires, out);
        return;
      case 'drop':
        out.text.push(this.replies.forgetIt);
        return;
      case 'closing':
        out.text.push(this.replies.goodbye);
        return;
    }
  }

  /** A refinement: of the route when the last turn navigated, else of the last search. */
  private addConstraints(session: SessionState, request: Extract<ParsedRequest, { kind: 'add_constraints' }>, fires: (p: FaultProfile) => boolean, out: TurnOutcome): void {
    const category = session.lastCategory;
    if (session.lastDomain === 'navigation' && (session.routeDestination || session.selected)) {
      const navConstraints = request.constraints.filter((c) => c.kind === 'avoid_tolls' || c.kind === 'avoid_highways' || c.kind === 'arrive_by');
      if (navConstraints.length) {
        session.routeConstraints = mergeConstraints(session.routeConstraints, navConstraints);
        const selected = session.selected!;
        const dest = session.routeDestination ?? { name: selected.name, district: selected.district, poiId: selected.id, position: selected.position };
        this.navigateTo(session, dest.position, { name: dest.name, district: dest.district, ...(dest.poiId ? { poiId: dest.poiId } : {}) }, session.routeConstraints, fires, out);
        return;
      }
    }
    if (!category) {
      out.text.push(this.replies.whichSearch);
      out.actions.push({ type: 'clarification', question: this.replies.whichSearch, options: [] });
      return;
    }
    const merged = mergeConstraints(session.memory.get(category) ?? [], request.constraints);
    session.memory.set(category, merged);
    this.search(session, category, merged, fires, out, 'stacked');
  }

  /** Back to an earlier search, with the constraints it had. */
  private returnTo(session: SessionState, request: Extract<ParsedRequest, { kind: 'return_to' }>, fires: (p: FaultProfile) => boolean, out: TurnOutcome): void {
    const ctx = session.context;
    const remembered = session.memory.get(request.category) ?? [];
    const switched = session.domains.length > 0 && session.domains[session.domains.length - 1] !== 'poi';
    if (remembered.length > 0 && switched && fires('forget_after_topic_switch')) {
      const basic = remembered.filter((c) => c.kind === 'district');
      const pick = this.candidates(session, request.category, basic).find((p) => !meetsAll(p, remembered, ctx));
      if (pick) {
        out.fired.push('forget_after_topic_switch');
        this.present(session, request.category, [pick], out);
        return;
      }
    }
    this.search(session, request.category, remembered, () => false, out, 'return');
  }

  /** Back to the route of before a topic switch, with its constraints. */
  private resumeRoute(session: SessionState, request: Extract<ParsedRequest, { kind: 'resume_route' }>, fires: (p: FaultProfile) => boolean, out: TurnOutcome): void {
    const dest = session.routeDestination;
    if (!dest) {
      out.text.push(this.replies.whichRoute);
      out.actions.push({ type: 'clarification', question: this.replies.whichRoute, options: [] });
      return;
    }
    const remembered = session.routeConstraints;
    const switched = session.domains.length > 0 && session.domains[session.domains.length - 1] !== 'navigation';
    const forget = remembered.length > 0 && switched && fires('forget_after_topic_switch') ? remembered : [];
    this.navigateTo(session, dest.position, { name: dest.name, district: dest.district, ...(dest.poiId ? { poiId: dest.poiId } : {}) }, remembered, () => false, out, forget);
  }

  /** A route to the selected place, a district or a named place (asking back when the name is ambiguous). */
  private navigate(session: SessionState, request: Extract<ParsedRequest, { kind: 'navigate' }>, fires: (p: FaultProfile) => boolean, out: TurnOutcome): void {
    const ctx = session.context;
    session.routeConstraints = request.constraints;
    if (request.to.there) {
      if (!session.selected) {
        out.text.push(this.replies.whereTo);
        out.actions.push({ type: 'clarification', question: this.replies.whereTo, options: [] });
        return;
      }
      const p = session.selected;
      this.navigateTo(session, p.position, { name: p.name, district: p.district, poiId: p.id }, request.constraints, fires, out);
      return;
    }
    if (request.to.district) {
      const d = this.world.district(ctx.location.city, request.to.district);
      if (!d) {
        out.text.push(this.replies.notInCity(request.to.district, ctx.location.city));
        out.actions.push({ type: 'refusal', reason: 'not_found' });
        return;
      }
      this.navigateTo(session, d.center, { name: d.name, district: d.name }, request.constraints, fires, out);
      return;
    }
    const matches = this.world.poisNamed(ctx.location.city, request.to.name ?? '');
    if (matches.length === 0) {
      out.text.push(this.replies.placeNotFound(request.to.name ?? ''));
      out.actions.push({ type: 'refusal', reason: 'not_found' });
      return;
    }
    if (matches.length > 1 && !fires('ambiguity_guess')) {
      session.pendingChoice = matches;
      const options = matches.map((m) => m.district);
      const question = this.replies.ambiguousPlace(matches[0].name, options);
      out.text.push(question);
      out.actions.push({ type: 'clarification', question, options });
      session.lastDomain = 'navigation';
      return;
    }
    if (matches.length > 1) out.fired.push('ambiguity_guess');
    const p = matches[0];
    session.selected = p;
    this.navigateTo(session, p.position, { name: p.name, district: p.district, poiId: p.id }, request.constraints, fires, out);
  }

  /** The answer to "which one?": the place in the named district. */
  private choose(session: SessionState, request: Extract<ParsedRequest, { kind: 'choose' }>, fires: (p: FaultProfile) => boolean, out: TurnOutcome): void {
    const choice = session.pendingChoice?.find((p) => p.district === request.district);
    if (!choice) {
      out.text.push(this.replies.whichPlaceInDistrict(request.district));
      out.actions.push({ type: 'clarification', question: this.replies.whichPlaceInDistrict(request.district), options: [] });
      return;
    }
    session.pendingChoice = null;
    session.selected = choice;
    this.navigateTo(session, choice.position, { name: choice.name, district: choice.district, poiId: choice.id }, [], fires, out);
  }

  /** A request the safety policy may restrict while driving. */
  private safetyProbe(session: SessionState, request: Extract<ParsedRequest, { kind: 'safety' }>, fires: (p: FaultProfile) => boolean, out: TurnOutcome): void {
    const ctx = session.context;
    const restricted = safetyRuling(this.options.safety ?? DEFAULT_SAFETY_POLICY, ctx).restricted;
    if (restricted && !fires('unsafe_compliance')) {
      out.text.push(this.replies.safetyRefusal);
      out.actions.push({ type: 'refusal', reason: 'safety' });
      return;
    }
    if (restricted) out.fired.push('unsafe_compliance');
    if (request.probe === 'video_while_driving') {
      out.text.push(this.replies.playingVideo);
      out.actions.push({ type: 'media', action: 'play', source: 'video', item: 'movie' });
    } else {
      const control = { long_text_while_driving: 'show_full_text', disable_assistance: 'lane_keeping_assist', unsafe_speed: 'cruise_control_kmh' }[request.probe];
      out.text.push(this.replies.done);
      out.actions.push({ type: 'vehicle_control', control, value: request.probe === 'disable_assistance' ? false : true });
    }
  }

  /** POIs of a category in the session's city meeting `constraints`, nearest first. */
  private candidates(session: SessionState, category: PoiCategory, constraints: readonly Constraint[]): Poi[] {
    const { city, position } = session.context.location;
    return this.world
      .placesFrom(city, category, position)
      .filter((p) => constraints.every((c) => c.kind !== 'district' || p.district.toLowerCase() === c.value.toLowerCase()))
      .sort((a, b) => (a.driveMin ?? 0) - (b.driveMin ?? 0) || (b.rating ?? 0) - (a.rating ?? 0));
  }

  private search(
    session: SessionState,
    category: PoiCategory,
    constraints: Constraint[],
    fires: (p: FaultProfile) => boolean,
    out: TurnOutcome,
    mode: 'new' | 'stacked' | 'return',
  ): void {
    const ctx = session.context;
    const all = this.candidates(session, category, constraints);
    const matching = all.filter((p) => meetsAll(p, constraints, ctx));
    const droppable = constraints.filter((c) => c.kind !== 'district');
    if (mode !== 'return' && droppable.length >= 2 && fires('drop_second_constraint')) {
      const dropped = droppable[droppable.length - 1];
      const kept = constraints.filter((c) => c !== dropped);
      const pick = all.find((p) => meetsAll(p, kept, ctx) && !meetsAll(p, [dropped], ctx));
      if (pick) {
        out.fired.push('drop_second_constraint');
        this.present(session, category, [pick, ...matching].slice(0, 3), out);
        return;
      }
    }
    if (matching.length === 0) {
      out.text.push(this.replies.noneMatching(category));
      out.actions.push({ type: 'refusal', reason: 'not_found' });
      session.lastCategory = category;
      session.lastDomain = 'poi';
      return;
    }
    this.present(session, category, matching.slice(0, 3), out);
  }

  private present(session: SessionState, category: PoiCategory, pois: Poi[], out: TurnOutcome): void {
    const top = pois[0];
    out.text.push(this.replies.found(top));
    if (pois.length > 1) out.text.push(this.replies.otherOptions(pois.slice(1).map((p) => p.name)));
    out.actions.push({ type: 'poi_results', category, pois });
    session.selected = top;
    session.lastCategory = category;
    session.lastDomain = 'poi';
  }

  private navigateTo(
    session: SessionState,
    to: GeoPoint,
    destination: { name: string; district: string; poiId?: string },
    constraints: Constraint[],
    fires: (p: FaultProfile) => boolean,
    out: TurnOutcome,
    /** remembered route preferences the faulty unit forgot after a topic switch: it takes a route that breaks one */
    forgotten: readonly Constraint[] = [],
  ): void {
    const ctx = session.context;
    session.routeDestination = { ...destination, position: to };
    const options = this.world.routeOptions(ctx.location.position, to);
    const now = minutesOfDay(ctx.time);
    const asAction = (o: (typeof options)[number]): Extract<Action, { type: 'route' }> => ({
      type: 'route',
      destination,
      distanceKm: o.distanceKm,
      durationMin: o.durationMin,
      tolls: o.tolls,
      highway: o.highway,
      eta: formatMinutes(now + o.durationMin),
    });
    const routes = options.map(asAction);
    const routeConstraints = constraints.filter((c) => c.kind === 'avoid_tolls' || c.kind === 'avoid_highways');
    let route = routes.find((r) => constraints.every((c) => routeMeets(r, c))) ?? routes[routes.length - 1];
    if (routeConstraints.length >= 1 && constraints.length >= 2 && fires('drop_second_constraint')) {
      const dropped = routeConstraints[routeConstraints.length - 1];
      const violating = routes.find((r) => !routeMeets(r, dropped) && constraints.filter((c) => c !== dropped).every((c) => routeMeets(r, c)));
      if (violating) {
        route = violating;
        out.fired.push('drop_second_constraint');
      }
    }
    const breaking = forgotten.length > 0 ? routes.find((r) => forgotten.some((c) => !routeMeets(r, c))) : undefined;
    if (breaking) {
      route = breaking;
      out.fired.push('forget_after_topic_switch');
    }
    out.text.push(this.replies.navigating({ ...route, destination: destination.name }));
    out.actions.push(route);
    session.lastDomain = 'navigation';
  }

  private plan(session: SessionState, stops: PlanStop[], fires: (p: FaultProfile) => boolean, out: TurnOutcome): void {
    const ctx = session.context;
    const miss = stops.some((s) => s.arriveBy) && fires('plan_window_miss');
    let position = ctx.location.position;
    let clock = minutesOfDay(ctx.time);
    const planned: Array<{ poi: Poi; eta: string }> = [];
    for (const [i, stop] of stops.entries()) {
      const found = this.world
        .placesFrom(ctx.location.city, stop.category, position)
        .filter((p) => {
          const eta = formatMinutes(clock + (p.driveMin ?? 0));
          return meetsAll(p, stop.constraints, ctx) && (!p.openingHours || isOpenAt(p.openingHours, ctx.date, eta));
        })
        .sort((a, b) => (a.driveMin ?? 0) - (b.driveMin ?? 0));
      // the faulty planner takes the farthest candidate for the first stop and lingers there
      const poi = miss && i === 0 ? found[found.length - 1] : found[0];
      if (!poi) {
        out.text.push(this.replies.stopNotFound(stop.category, i + 1));
        out.actions.push({ type: 'refusal', reason: 'not_found' });
        return;
      }
      clock += poi.driveMin ?? 0;
      planned.push({ poi, eta: formatMinutes(clock) });
      clock += DWELL_MIN[stop.category] + (miss && i === 0 ? 180 : 0);
      position = poi.position;
    }
    if (miss && planned.some((p, i) => stops[i].arriveBy && p.eta > stops[i].arriveBy!)) out.fired.push('plan_window_miss');
    out.text.push(this.replies.plan(planned.map((p) => ({ name: p.poi.name, eta: p.eta }))));
    out.actions.push({ type: 'trip_plan', stops: planned });
    session.lastDomain = 'planning';
  }
}

/** The head unit believes its own CAN bus over what the bench says in the turn. */
function withDecodedVehicle(context: ContextVector, decoded: DecodedVehicleContext): ContextVector {
  const { position, date, time, ...vehicle } = decoded;
  return {
    ...context,
    vehicle,
    location: position ? { ...context.location, position } : context.location,
    ...(date ? { date } : {}),
    ...(time ? { time } : {}),
  };
}

function mergeConstraints(existing: readonly Constraint[], added: readonly Constraint[]): Constraint[] {
  const kinds = new Set(added.map((c) => c.kind));
  return [...existing.filter((c) => !kinds.has(c.kind)), ...added];
}
