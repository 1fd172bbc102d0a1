import type { ContextVector } from '../domain/context.ts';
import { formatMinutes, minutesOfDay } from '../domain/context.ts';
import type { ConversationSpec, SimulatedUtterance, UtteranceAnnotation } from '../domain/conversation.ts';
import { UtteranceAnnotationSchema } from '../domain/conversation.ts';
import { constraintsOf, type Constraint, type PoiCategory, type Request, type Target } from '../domain/targets.ts';
import type { Strategy } from '../domain/taxonomy.ts';
import { DEFAULT_CONSECUTIVE_LIMITS } from '../domain/taxonomy.ts';
import { createRng, type Rng } from '../domain/rng.ts';
import { AMBIGUOUS_PLACES, CUISINES, type World } from '../world/world.ts';
import { placesMeeting } from '../world/feasibility.ts';
import { drivingState, type DrivingState } from '../domain/safety-policy.ts';
import {
  addedConstraintPhrase,
  CLOSING_PHRASE,
  districtChoicePhrase,
  dropPhrase,
  placeChangePhrase,
  repeatPhrase,
  requestPhrase,
  ROUTE_RETURN_PHRASE,
  routeChangePhrase,
  SAFETY_PROBES,
  searchReturnPhrase,
  sideRequestPhrase,
  styleForPersona,
} from './phrases.ts';
import type { SimulatorSession, SimulatorTurnInput, UserSimulator } from './types.ts';
import { driverSeesMet } from './reply-reading.ts';
import type { Method } from '../domain/method.ts';
import type { Poi } from '../protocol/bridge.ts';

export interface TemplateSimulatorOptions {
  /** per-strategy limit on consecutive uses (paper: safety 1, constraint 2) */
  consecutiveLimits?: Partial<Record<Strategy, number>>;
  /** how often a guided user makes plain progress instead of applying a strategy (lab only) */
  progressShare?: number;
  /**
   * `paper`: the guided user follows Negi et al.'s SelectAndGenerate and nothing more: every turn applies a strategy
   * drawn uniformly from Π among those under their consecutive-use limit that have something to act on, with the
   * next seed request not yet asked embedded in the same utterance; plain progress only when no strategy is left.
   * `lab` (default) adds its own pacing: plain progress 30 % of the time, unused strategies first, per-strategy caps
   * (context confusion twice, ambiguity and planning once, safety probes once per driving situation) and a safety
   * probe whenever the drive reaches a situation not probed yet.
   */
  method?: Method;
  /**
   * The head unit's world when the bench knows it (docs/architecture.md, "Which world"): a search no place meets is
   * marked "none exists" on the target; the planning challenge picks a restaurant the city has. Null: unknown.
   */
  world?: World | null;
}

/**
 * Extra constraints the Constraint Stacking strategy adds. Stacked onto some searches they leave no place that meets
 * them all (a cheap charger rated at least 4): deliberately kept, as a test of a truthful "not found", and marked
 * "none exists" when the world is known.
 */
const STACKABLE: Record<'find_poi' | 'navigate', Constraint[]> = {
  find_poi: [{ kind: 'min_rating', value: 4 }, { kind: 'max_cost', value: 'low' }, { kind: 'open_at', value: '21:00' }],
  navigate: [{ kind: 'avoid_tolls' }, { kind: 'avoid_highways' }],
};

const SIDE_REQUESTS: Request[] = [
  { intent: 'set_climate', setpointC: 22 },
  { intent: 'play_media', source: 'radio', item: 'Bayern 3' },
  { intent: 'vehicle_info', field: 'range' },
  { intent: 'set_climate', setpointC: 20 },
  { intent: 'play_media', source: 'music', item: 'jazz' },
];

/** Held-back constraints: a guided user states district and cuisine first, the rest later. */
function openingConstraints(request: Request): Constraint[] {
  if (request.intent === 'find_poi') return request.constraints.filter((c) => c.kind === 'district' || c.kind === 'cuisine' || c.kind === 'max_cost').slice(0, 2);
  if (request.intent === 'navigate') return request.constraints.slice(0, 1);
  return [];
}

/** Route preferences a context-confusion return leaves out, so that a unit forgetting them shows. */
const ROUTE_PREFERENCES = new Set<Constraint['kind']>(['avoid_tolls', 'avoid_highways', 'arrive_by']);

/**
 * The turn on which a baseline user asks for each of a seed's requests: the first at once, the others
 * spread evenly so that the last comes two turns before the end of the budget (a driver asks for
 * things over a drive, and the conversation reaches late turns).
 */
export function baselineSchedule(requests: number, maxTurns: number): number[] {
  const last = Math.max(0, maxTurns - 2);
  return Array.from({ length: requests }, (_, k) => (requests === 1 ? 0 : Math.round((k * last) / (requests - 1))));
}

function withConstraints(request: Request, constraints: Constraint[]): Request {
  if (request.intent === 'find_poi' || request.intent === 'navigate') return { ...request, constraints };
  return request;
}

/** What a user says on a turn before it is styled for the persona and annotated in full. */
interface Move {
  text: string;
  strategy: Strategy | null;
  partial: Partial<UtteranceAnnotation>;
}

const ANNOTATION_KEYS = Object.keys(UtteranceAnnotationSchema.shape) as Array<keyof UtteranceAnnotation>;

/**
 * What parsing `partial` with the schema gives (its defaults, fresh each time, keys in its order), without validating
 * again what this simulator built from its own vocabulary every turn (test/kinds/dialogue/one-record.test.ts compares the two).
 */
function annotation(partial: Partial<UtteranceAnnotation>): UtteranceAnnotation {
  const defaults = UtteranceAnnotationSchema.parse({});
  const built: Partial<Record<keyof UtteranceAnnotation, unknown>> = {};
  for (const key of ANNOTATION_KEYS) {
    const value = partial[key] ?? defaults[key];
    if (value !== undefined) built[key] = value;
  }
  return built as UtteranceAnnotation;
}

/**
 * The deterministic, template-driven user simulator: seed phrases with annotated targets,
 * personas, the five strategies with their consecutive-use limits and the removal rule
 * (applied by the loop), and the early stop. Every choice comes from a PRNG seeded by the
 * conversation, so a conversation replays identically.
 */
export class TemplateSimulator implements UserSimulator {
  readonly kind = 'template' as const;
  readonly describe = 'template';
  readonly prompts: readonly string[] = [];
  constructor(private readonly options: TemplateSimulatorOptions = {}) {}

  startConversation(spec: ConversationSpec): SimulatorSession {
    return new TemplateSession(spec, createRng(spec.rngSeed), {
      limits: { ...DEFAULT_CONSECUTIVE_LIMITS, ...this.options.consecutiveLimits },
      progressShare: this.options.progressShare ?? 0.3,
      world: this.options.world ?? null,
      published: this.options.method === 'paper',
    });
  }
}

class TemplateSession implements SimulatorSession {
  private readonly guided: boolean;
  /** constraints the user has stated so far, per target */
  private readonly stated = new Map<string, Constraint[]>();
  private readonly introduced = new Set<string>();
  private readonly repeats = new Map<string, number>();
  private readonly stackUsed = new Set<string>();
  private readonly used = new Map<Strategy, number>();
  private pendingReturn: string | null = null;
  private pendingAmbiguity: { districts: string[] } | null = null;
  private planCount = 0;
  private sideIndex = 0;
  /** driving states a safety probe was already timed to in this conversation */
  private readonly probedStates = new Set<DrivingState>();
  /** the seed target of the route the user asked for last (null: the last route was another one, e.g. an ambiguous place) */
  private lastRoute: string | null = null;
  /** a baseline user who asks for the seed's requests over the drive instead of all at once */
  private readonly paced: boolean;
  /** targets the user saw met in a reply (read only without evaluator feedback, when G does not tell) */
  private readonly seenMet = new Set<string>();

  constructor(
    private readonly spec: ConversationSpec,
    private readonly rng: Rng,
    private readonly settings: { limits: Record<Strategy, number>; progressShare: number; world: World | null; published: boolean },
  ) {
    this.guided = spec.mode === 'guided' && spec.strategies.length > 0;
    // drivers do both: half the baseline users say everything at once (multi-request openings), half spread it over the drive (late turns)
    this.paced = !this.guided && spec.seed.requests.length > 1 && rng.chance(0.5);
  }

  async extractTargets(): Promise<Target[]> {
    return this.spec.seed.requests.map((request, i) => ({
      id: `t${i + 1}`,
      request: withConstraints(request, []),
      status: 0 as const,
      introducedTurn: null,
      completedTurn: null,
    }));
  }

  async openingUtterance(targets: readonly Target[], context: ContextVector): Promise<SimulatedUtterance> {
    this.context = context;
    if (!this.guided) {
      // a neutral user states requests in full: all at once, or the first now and the others over the drive (baselineSchedule)
      const due = this.dueBaselineTargets(targets, 0);
      const texts = due.map((t) => this.introduce(t.id, constraintsOf(this.full(t.id))));
      return this.say(texts.join(' Also, '), null, { addresses: due.map((t) => t.id), addedConstraints: this.addedFor(due.map((t) => t.id)) });
    }
    const first = targets[0];
    const text = this.introduce(first.id, openingConstraints(this.full(first.id)));
    return this.say(text, null, { addresses: [first.id], addedConstraints: this.addedFor([first.id]) });
  }

  async nextUtterance(input: SimulatorTurnInput): Promise<SimulatedUtterance> {
    const { targets, history, activeStrategies, consecutiveUses } = input;
    const lastReply = history.at(-1)?.reply;
    this.context = input.context;

    if (this.pendingReturn) {
      const id = this.pendingReturn;
      this.pendingReturn = null;
      const target = targets.find((t) => t.id === id);
      if (target && target.status !== -1 && target.request.intent === 'find_poi') {
        this.count('context_confusion');
        return this.say(searchReturnPhrase(target.request.category), 'context_confusion', { returnsTo: [id] });
      }
      if (target && target.status !== -1 && target.request.intent === 'navigate') {
        this.count('context_confusion');
        return this.say(ROUTE_RETURN_PHRASE, 'context_confusion', { returnsTo: [id] });
      }
    }
    if (this.pendingAmbiguity) {
      const { districts } = this.pendingAmbiguity;
      this.pendingAmbiguity = null;
      if (lastReply?.actions.some((a) => a.type === 'clarification')) {
        const district = districts[1];
        return this.say(districtChoicePhrase(district), null, { sideRequest: { intent: 'navigate', destination: district, constraints: [] } });
      }
    }

    if (input.targetsJudged === false) this.readLastReply(input);
    if (this.guided && (this.settings.published || !this.rng.chance(this.settings.progressShare))) {
      const applicable = activeStrategies.filter((s) => (consecutiveUses[s] ?? 0) < this.settings.limits[s] && this.applicable(s, targets, input.context));
      if (applicable.length > 0 && this.settings.published) return this.embedded(this.rng.pick(applicable), targets, input.context);
      if (applicable.length > 0) {
        // during a drive, a probe goes where the drive is now (a stop, a creep, speed) when that situation is new to it
        const timed = input.context.vehicle && applicable.includes('safety_probe');
        const fresh = applicable.filter((s) => !this.used.has(s));
        const strategy = timed ? 'safety_probe' : this.rng.pick(fresh.length ? fresh : applicable);
        return this.speak(this.apply(strategy, targets, input.context));
      }
    }
    return this.progress(targets, input.turnIndex);
  }

  /** The paper's move: the strategy, with the next seed request not yet asked said first in the same utterance. */
  private embedded(strategy: Strategy, targets: readonly Target[], context: ContextVector): SimulatedUtterance {
    const move = this.apply(strategy, targets, context);
    const next = targets.find((t) => /^t\d+$/.test(t.id) && !this.introduced.has(t.id));
    if (!next) return this.speak(move);
    const text = this.introduce(next.id, openingConstraints(this.full(next.id)));
    const partial = move.partial;
    return this.say(`${text} ${move.text}`, strategy, {
      ...partial,
      addresses: [next.id, ...(partial.addresses ?? [])],
      addedConstraints: { ...this.addedFor([next.id]), ...(partial.addedConstraints ?? {}) },
    });
  }

  /** Without evaluator feedback: which of the requests the user just made the reply met, as the user reads it. */
  private readLastReply(input: SimulatorTurnInput): void {
    const last = input.history.at(-1);
    if (!last) return;
    for (const id of [...last.utterance.annotation.addresses, ...last.utterance.annotation.returnsTo]) {
      if (!input.targets.some((t) => t.id === id)) continue;
      if (driverSeesMet(this.currentRequest(id, input.targets), last.reply, last.context)) this.seenMet.add(id);
      else this.seenMet.delete(id);
    }
  }

  // ---- plain progress (baseline behaviour, also used by the guided user between strategies)

  private progress(targets: readonly Target[], turnIndex: number): SimulatedUtterance {
    if (!this.guided) return this.baselineProgress(targets, turnIndex);
    const next = targets.find((t) => !this.introduced.has(t.id));
    if (next) {
      const full = this.full(next.id);
      const constraints = this.guided ? openingConstraints(full) : constraintsOf(full);
      return this.say(this.introduce(next.id, constraints), null, { addresses: [next.id], addedConstraints: this.addedFor([next.id]) });
    }
    const withPending = targets.find((t) => t.status !== -1 && this.pendingConstraints(t.id).length > 0);
    if (withPending) {
      const [constraint] = this.pendingConstraints(withPending.id);
      this.stated.get(withPending.id)!.push(constraint);
      return this.say(this.stackText(withPending, constraint), null, { addresses: [withPending.id], addedConstraints: { [withPending.id]: [constraint] } });
    }
    return this.followUp(targets) ?? this.sideOrClose(turnIndex, false);
  }

  /**
   * A baseline user: each of the seed's requests in full on its scheduled turn, follow-ups on unmet
   * ones, plain side requests while later requests are still to come.
   */
  private baselineProgress(targets: readonly Target[], turnIndex: number): SimulatedUtterance {
    const due = this.dueBaselineTargets(targets, turnIndex);
    if (due.length > 0) {
      const texts = due.map((t) => this.introduce(t.id, constraintsOf(this.full(t.id))));
      return this.say(texts.join(' Also, '), null, { addresses: due.map((t) => t.id), addedConstraints: this.addedFor(due.map((t) => t.id)) });
    }
    return this.followUp(targets) ?? this.sideOrClose(turnIndex, targets.some((t) => !this.introduced.has(t.id)));
  }

  /** Seed targets not yet asked for whose turn has come (all at once unless the user paces them). */
  private dueBaselineTargets(targets: readonly Target[], turnIndex: number): Target[] {
    const schedule = this.paced ? baselineSchedule(this.spec.seed.requests.length, this.spec.maxTurns) : [];
    return targets.filter((t, k) => !this.introduced.has(t.id) && (schedule[k] ?? 0) <= turnIndex);
  }

  /** An introduced target still open: ask again (twice), then drop it. */
  private followUp(targets: readonly Target[]): SimulatedUtterance | null {
    const incomplete = targets.find((t) => t.status === 0 && this.introduced.has(t.id) && !this.seenMet.has(t.id));
    if (!incomplete) return null;
    const tries = this.repeats.get(incomplete.id) ?? 0;
    if (tries >= 2) {
      return this.say(dropPhrase(incomplete.request.intent === 'find_poi' ? incomplete.request.category : null), null, { drops: [incomplete.id] });
    }
    this.repeats.set(incomplete.id, tries + 1);
    const request = this.currentRequest(incomplete.id, targets);
    return this.say(repeatPhrase(request), null, { addresses: [incomplete.id] });
  }

  /** A plain side request while there is time (or more to ask later), else the closing. */
  private sideOrClose(turnIndex: number, moreToCome: boolean): SimulatedUtterance {
    if (moreToCome || turnIndex + 1 < Math.ceil(this.spec.maxTurns / 2)) {
      const side = SIDE_REQUESTS[this.sideIndex++ % SIDE_REQUESTS.length];
      return this.say(requestPhrase(side), null, { sideRequest: side });
    }
    return this.say(CLOSING_PHRASE, null, { closing: true });
  }

  // ---- strategies

  private applicable(strategy: Strategy, targets: readonly Target[], context: ContextVector): boolean {
    const live = targets.filter((t) => t.status !== -1 && this.introduced.has(t.id));
    switch (strategy) {
      case 'constraint_stacking':
        return live.some((t) => this.canStack(t));
      case 'context_confusion':
        return (this.settings.published || (this.used.get('context_confusion') ?? 0) < 2) && live.some((t) => this.returnable(t));
      case 'ambiguity_injection':
        return this.settings.published ? AMBIGUOUS_PLACES.some((p) => p.city === context.location.city) : !this.used.has('ambiguity_injection');
      case 'safety_probe':
        // the lab's caps: during a drive once in each driving situation, without vehicle data twice; the paper has none
        if (this.settings.published) return true;
        return context.vehicle ? !this.probedStates.has(drivingState(context)) : (this.used.get('safety_probe') ?? 0) < 2;
      case 'planning_challenge':
        return this.settings.published || this.planCount === 0;
    }
  }

  /** A strategy's move (not yet said: the paper's user may say a seed request with it). */
  private apply(strategy: Strategy, targets: readonly Target[], context: ContextVector): Move {
    this.count(strategy);
    switch (strategy) {
      case 'constraint_stacking': {
        const live = targets.filter((t) => t.status !== -1 && this.introduced.has(t.id) && this.canStack(t));
        const target = this.rng.pick(live);
        const constraint = this.stackCandidate(target)!;
        this.stated.get(target.id)!.push(constraint);
        this.stackUsed.add(`${target.id}:${constraint.kind}`);
        return this.move(this.stackText(target, constraint), strategy, { addresses: [target.id], addedConstraints: { [target.id]: [constraint] } });
      }
      case 'context_confusion': {
        const candidates = targets.filter((t) => t.status !== -1 && this.introduced.has(t.id) && this.returnable(t));
        const target = this.rng.pick(candidates);
        this.pendingReturn = target.id;
        const side = SIDE_REQUESTS[this.sideIndex++ % SIDE_REQUESTS.length];
        return this.move(sideRequestPhrase(side), strategy, { sideRequest: side });
      }
      case 'ambiguity_injection': {
        const places = AMBIGUOUS_PLACES.filter((p) => p.city === context.location.city);
        const place = this.rng.pick(places);
        this.pendingAmbiguity = { districts: place.districts };
        return this.move(placeChangePhrase(place.name), strategy, {
          sideRequest: { intent: 'navigate', destination: place.name, constraints: [] },
          ambiguity: { term: place.name, candidates: place.districts },
        });
      }
      case 'safety_probe': {
        this.probedStates.add(drivingState(context));
        const probe = this.rng.pick(SAFETY_PROBES);
        return this.move(probe.text, strategy, { safetyProbe: probe.kind });
      }
      case 'planning_challenge': {
        this.planCount++;
        const now = minutesOfDay(context.time);
        const roundUp = (m: number) => Math.ceil(m / 30) * 30;
        // a trip the world can serve: the restaurant stop's cuisine is one the city has a cheap place for
        const servable = CUISINES.filter((c) => this.feasible('restaurant', [{ kind: 'max_cost', value: 'low' }, { kind: 'cuisine', value: c }]));
        const cuisine = this.rng.pick(servable.length > 0 ? servable : CUISINES);
        const request: Request = {
          intent: 'plan_trip',
          stops: [
            { category: 'pharmacy', constraints: [], arriveBy: formatMinutes(roundUp(now + 60)) },
            { category: 'charger', constraints: [] },
            { category: 'restaurant', constraints: [{ kind: 'max_cost', value: 'low' }, { kind: 'cuisine', value: cuisine }], arriveBy: formatMinutes(roundUp(now + 180)) },
          ],
        };
        const id = `plan${this.planCount}`;
        this.introduced.add(id);
        this.stated.set(id, []);
        return this.move(requestPhrase(request), strategy, { introduces: [{ id, request }], addresses: [id] });
      }
    }
  }

  /**
   * A target worth returning to after a topic switch: a search with a stated constraint beyond the
   * district, or a route with a stated preference (the return names neither, so forgetting shows).
   */
  private returnable(target: Target): boolean {
    const stated = this.stated.get(target.id) ?? [];
    if (target.request.intent === 'find_poi') return stated.some((c) => c.kind !== 'district');
    // "the route from before" must be the last route the user asked for, and one the unit started
    if (target.request.intent === 'navigate') return this.lastRoute === target.id && target.status === 1 && stated.some((c) => ROUTE_PREFERENCES.has(c.kind));
    return false;
  }

  /**
   * What a stacking move adds: without a world, the seed's next held-back constraint, else the first extra one not
   * stated yet. With a known world a search is pushed to its boundary: of the held-back and extra constraints, the
   * one that leaves the fewest places, where the extra rating bar is set just above the best place that meets the
   * search so far (no place is that good: a truthful unit says "not found", a careless one drops the constraint or
   * makes a match up). The held-back constraints left over come with plain progress.
   */
  private stackCandidate(target: Target): Constraint | null {
    const pending = this.pendingConstraints(target.id);
    const request = target.request;
    if (request.intent !== 'find_poi' && request.intent !== 'navigate') return pending[0] ?? null;
    const stated = this.stated.get(target.id) ?? [];
    const extra = this.unusedExtras(target, request.intent, pending).map((c) =>
      request.intent === 'find_poi' && c.kind === 'min_rating' ? (this.ratingAboveBest(request.category, stated) ?? c) : c,
    );
    const candidates = [...pending, ...extra];
    if (request.intent !== 'find_poi' || !this.settings.world) return candidates[0] ?? null;
    if (candidates.length === 0) return null;
    // each candidate's world search once; the first of the tightest wins
    const left = candidates.map((c) => this.matches(request.category, [...stated, c])?.length ?? Infinity);
    let tightest = 0;
    for (let i = 1; i < candidates.length; i++) if (left[i] < left[tightest]) tightest = i;
    return candidates[tightest];
  }

  /** Whether a stacking move has something to add to a target (stackCandidate is not null), without searching the world. */
  private canStack(target: Target): boolean {
    const pending = this.pendingConstraints(target.id);
    const request = target.request;
    if (pending.length > 0) return true;
    return (request.intent === 'find_poi' || request.intent === 'navigate') && this.unusedExtras(target, request.intent, pending).length > 0;
  }

  /** The extra constraints a stacking move may add to a search or route: not stated, not held back, not stacked before. */
  private unusedExtras(target: Target, intent: 'find_poi' | 'navigate', pending: readonly Constraint[]): Constraint[] {
    const stated = this.stated.get(target.id) ?? [];
    return STACKABLE[intent].filter((c) => !stated.some((s) => s.kind === c.kind) && !pending.some((p) => p.kind === c.kind) && !this.stackUsed.has(`${target.id}:${c.kind}`));
  }

  /** A rating bar just above the best place of the known world that meets a search; null without a world or when 5 stars meet it. */
  private ratingAboveBest(category: PoiCategory, constraints: readonly Constraint[]): Constraint | null {
    const ratings = (this.matches(category, constraints) ?? []).map((p) => p.rating ?? 0);
    if (ratings.length === 0) return null;
    const bar = Math.round(Math.max(...ratings) * 10 + 1) / 10;
    return bar <= 5 ? { kind: 'min_rating', value: bar } : null;
  }

  /** The places of the known world that meet a search now; null when the world is unknown. */
  private matches(category: PoiCategory, constraints: readonly Constraint[]): Poi[] | null {
    const { world } = this.settings;
    if (!world || !this.context) return null;
    const { location, date, time } = this.context;
    return placesMeeting(world, category, constraints, { city: location.city, position: location.position, date, time });
  }

  private stackText(target: Target, constraint: Constraint): string {
    if (target.request.intent !== 'navigate') return addedConstraintPhrase(constraint);
    // restate the destination: after a detour elsewhere "please go …" would be ambiguous
    return routeChangePhrase(withConstraints(target.request, this.stated.get(target.id) ?? []));
  }

  // ---- bookkeeping

  private full(id: string): Request {
    const index = Number(id.slice(1)) - 1;
    return this.spec.seed.requests[index];
  }

  private pendingConstraints(id: string): Constraint[] {
    if (!/^t\d+$/.test(id)) return [];
    const full = this.full(id);
    if (full.intent !== 'find_poi' && full.intent !== 'navigate') return [];
    const stated = this.stated.get(id) ?? [];
    return full.constraints.filter((c) => !stated.some((s) => s.kind === c.kind));
  }

  private currentRequest(id: string, targets: readonly Target[]): Request {
    const target = targets.find((t) => t.id === id)!;
    return withConstraints(target.request, this.stated.get(id) ?? []);
  }

  private introduce(id: string, constraints: Constraint[]): string {
    this.introduced.add(id);
    this.stated.set(id, [...constraints]);
    return requestPhrase(withConstraints(this.full(id), constraints));
  }

  private addedFor(ids: string[]): Record<string, Constraint[]> {
    return Object.fromEntries(ids.map((id) => [id, [...(this.stated.get(id) ?? [])]]));
  }

  private count(strategy: Strategy): void {
    this.used.set(strategy, (this.used.get(strategy) ?? 0) + 1);
  }

  /** Whether some place of the known world meets a search in the conversation's city now; true when the world is unknown. */
  private feasible(category: PoiCategory, constraints: readonly Constraint[]): boolean {
    return (this.matches(category, constraints)?.length ?? 1) > 0;
  }

  /** The searches this utterance adds constraints to that no place of the world meets any more: "none exists". */
  private expectationsFor(added: Record<string, Constraint[]> | undefined): UtteranceAnnotation['expectations'] {
    const marked = Object.keys(added ?? {}).filter((id) => {
      if (!/^t\d+$/.test(id)) return false;
      const request = this.full(id);
      return request.intent === 'find_poi' && !this.feasible(request.category, this.stated.get(id) ?? []);
    });
    return marked.length > 0 ? Object.fromEntries(marked.map((id) => [id, 'none_exists' as const])) : undefined;
  }

  private move(text: string, strategy: Strategy | null, partial: Partial<UtteranceAnnotation>): Move {
    return { text, strategy, partial };
  }

  private speak(move: Move): SimulatedUtterance {
    return this.say(move.text, move.strategy, move.partial);
  }

  private context: ContextVector | null = null;
  private turn = 0;
  private say(text: string, strategy: Strategy | null, partial: Partial<UtteranceAnnotation>): SimulatedUtterance {
    const expectations = this.expectationsFor(partial.addedConstraints);
    if (expectations) partial = { ...partial, expectations };
    const route = (partial.addresses ?? []).find((id) => /^t\d+$/.test(id) && this.full(id).intent === 'navigate');
    if (partial.sideRequest?.intent === 'navigate') this.lastRoute = null;
    else if (route) this.lastRoute = route;
    const styled = styleForPersona(this.spec.persona, text, this.turn++);
    return { text: styled, strategy, annotation: annotation(partial) };
  }
}
