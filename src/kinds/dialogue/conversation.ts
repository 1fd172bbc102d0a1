import type { BusObservation } from '../../domain/bus-observation.ts';
import type { ContextVector } from '../../domain/context.ts';
import { formatMinutes, minutesOfDay } from '../../domain/context.ts';
import type { ConversationResult, ConversationSpec, ConversationStatus, InconclusivePolicy, ConversationVerdict, SimulatedUtterance, TurnRecord, TurnVerdict } from '../../domain/conversation.ts';
import type { Constraint, Target } from '../../domain/targets.ts';
import { DEFAULT_FAIL_ON, STRATEGY_TARGET_FAILURE, type FailureLabel, type Strategy } from '../../domain/taxonomy.ts';
import { SutError, type HeadUnitSession } from '../../headunit/types.ts';
import { checkExpectation } from '../../judge/expectations.ts';
import { awaitDecidingTurnVerdict, decidingTurnVerdict } from '../../judge/precedence.ts';
import type { Judge } from '../../judge/types.ts';
import { SimulatorError, type UserSimulator } from '../../simulator/types.ts';
import { ItemAborted } from '../../run/kind.ts';
import { endSession } from '../../llm/session-slots.ts';

export interface ConversationDeps {
  spec: ConversationSpec;
  /** opens the session with the system under test (may fail: recorded as sut_error) */
  openSession: (context: ContextVector) => Promise<HeadUnitSession>;
  simulator: UserSimulator;
  /** the judges in precedence order (the order of `judges:`): the first that judged a turn drives the loop */
  judges: readonly Judge[];
  /** the findings that fail the conversation, recorded with the result (scoring.failOn); default every label */
  failOn?: readonly FailureLabel[];
  /** whether the head unit announced structured actions (capabilities.structuredActions), asked once its session is open; default true. See TurnJudgeInput. */
  structuredReplies?: () => boolean;
  /** what an undecided turn makes of the conversation, recorded with the result (scoring.inconclusive); default review */
  inconclusive?: InconclusivePolicy;
  /**
   * Whether the judges' turn verdicts steer the loop (default true). False is the paper's baseline
   * (`method: paper`, `mode: baseline`): the judges still label every turn and update the targets
   * that are recorded and scored, but the simulator only sees what the user said (introduced,
   * stacked, dropped targets) and the conversation runs its full M turns (no early stop).
   */
  evaluatorFeedback?: boolean;
  /**
   * Pipelining (`pipeline: auto`, default false here): the simulator's next move starts as soon as the deciding
   * verdict of turn t is in, while the judges after it in precedence order are still judging turn t; they finish
   * before the judges of turn t+1 start, and the turn is recorded with every verdict as in the strict order.
   * The next move reads only what steers the loop (the deciding verdict: targets, Π, the early stop), so the
   * stored conversation is the same either way (docs/architecture.md, "Pipelining").
   */
  pipeline?: boolean;
  /** context at turn t; default: the spec's context with the clock advanced one minute per turn */
  contextAt?: (turnIndex: number) => ContextVector;
  onTurn?: (turn: TurnRecord, activeStrategies: readonly Strategy[]) => void;
  /** runs before each user turn is sent (e.g. the CAN frames leading up to it) */
  beforeTurn?: (session: HeadUnitSession, turnIndex: number, context: ContextVector) => Promise<void>;
  /** watches the bus from the moment a turn is sent; closing waits out the window (vehicle.observe, src/vehicle/observe/channel.ts) */
  observeTurn?: () => { close(): Promise<BusObservation> };
  signal?: AbortSignal;
}

/** A conversation abandoned because the run was stopped (Ctrl+C, the budget, a lost fleet): not stored, run again on resume. */
export class ConversationAborted extends ItemAborted {
  constructor(key = 'conversation') {
    super(key);
    this.name = 'ConversationAborted';
  }
}

/** The spec's context with the clock advanced one minute per turn; a scripted turn carries its own context. */
function defaultContextAt(spec: ConversationSpec): (t: number) => ContextVector {
  return (t) => spec.script?.[t]?.context ?? { ...spec.context, time: formatMinutes(minutesOfDay(spec.context.time) + t) };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Applies what the utterance says to the targets before the head unit answers (new targets, stacked constraints). */
function applyUtterance(targets: Target[], utterance: SimulatedUtterance, turn: number): Target[] {
  const next = targets.map((t) => ({ ...t }));
  for (const introduced of utterance.annotation.introduces) {
    if (!next.some((t) => t.id === introduced.id)) next.push({ id: introduced.id, request: introduced.request, status: 0, introducedTurn: turn, completedTurn: null });
  }
  for (const id of utterance.annotation.addresses) {
    const target = next.find((t) => t.id === id);
    if (target && target.introducedTurn === null) target.introducedTurn = turn;
  }
  for (const [id, added] of Object.entries(utterance.annotation.addedConstraints)) {
    const target = next.find((t) => t.id === id);
    if (!target || added.length === 0) continue;
    if (target.request.intent === 'find_poi' || target.request.intent === 'navigate') {
      const kinds = new Set(added.map((c) => c.kind));
      const merged: Constraint[] = [...target.request.constraints.filter((c) => !kinds.has(c.kind)), ...added];
      target.request = { ...target.request, constraints: merged };
      // a stacked constraint reopens a target that was already done
      if (target.status === 1) {
        target.status = 0;
        target.completedTurn = null;
      }
    }
  }
  // what the simulator, knowing the world, expects now: "none exists" once no place meets the constraints stated so far
  for (const [id, outcome] of Object.entries(utterance.annotation.expectations ?? {})) {
    const target = next.find((t) => t.id === id);
    if (target) target.expectedOutcome = outcome;
  }
  return next;
}

function applyVerdict(targets: Target[], verdict: TurnVerdict | null, turn: number): Target[] {
  if (!verdict) return targets;
  return targets.map((t) => {
    const update = verdict.targetUpdates.find((u) => u.targetId === t.id);
    // a dropped target stays dropped; a completed one is not undone by a later drop (the user lets go of what is open)
    if (!update || t.status === -1 || (t.status === 1 && update.status === -1)) return t;
    return { ...t, status: update.status, completedTurn: update.status === 1 ? turn : null };
  });
}

/** Every judge's verdict on the turn, in precedence order, as each arrives; a judge that throws gives a judge_error verdict (never a rejection). */
function judgeTurn(judges: readonly Judge[], input: Parameters<Judge['evaluateTurn']>[0]): Promise<TurnVerdict>[] {
  return judges.map(async (judge) => {
    try {
      return await judge.evaluateTurn(input);
    } catch (error) {
      return { tier: judge.tier, judge: judge.ref, outcome: 'judge_error' as const, labels: [], targetUpdates: [], reasoning: errorText(error) };
    }
  });
}

/** The targets the user dropped, as new objects; a drop ends what is still open: a completed target stays completed (its σ is final). */
function dropOpen(targets: Target[], dropped: ReadonlySet<string>): Target[] {
  return dropped.size === 0 ? targets : targets.map((x) => (dropped.has(x.id) && x.status === 0 ? { ...x, status: -1 as const } : x));
}

/** EvaluateConversation of every judge (Algorithm 1, line 13); a judge that throws gives a judge_error verdict. */
async function evaluateConversation(judges: readonly Judge[], input: Parameters<Judge['evaluateConversation']>[0]): Promise<ConversationVerdict[]> {
  const verdicts: ConversationVerdict[] = [];
  for (const judge of judges) {
    try {
      verdicts.push(await judge.evaluateConversation(input));
    } catch (caught) {
      verdicts.push({ tier: judge.tier, judge: judge.ref, outcome: 'judge_error', dimensions: {}, completedShare: 0, score: null, pass: null, reasoning: errorText(caught) });
    }
  }
  return verdicts;
}

/**
 * Algorithm 1 of the multi-turn paper: targets ← ExtractTargets(s); u0 ← GenerateUtterance(s, c);
 * Π ← Λ; for t < M: a_t ← SUT(u_t, c), F_t ← EvaluateTurn, update targets, drop from Π every
 * strategy whose failure is in F_t, stop early when all targets are resolved and t ≥ ⌈M/2⌉,
 * else u_{t+1} ← SelectAndGenerate. Then EvaluateConversation per judge. The verdict that drives
 * the loop is the first judge's that judged the turn (src/judge/precedence.ts).
 * Baseline mode: the spec carries no strategies, so Π is empty; without evaluator feedback (the
 * paper's baseline) the judged targets never reach the simulator and the loop always runs M turns.
 * A scripted user (suites, live sessions: simulator kind "script") says every turn it has and ends
 * the conversation itself (its next utterance is null); its turns' expectations are checked as each
 * turn ends (src/judge/expectations.ts).
 * The simulator's history is H: the exchanges (u, a) without verdicts, as in the paper; what was judged reaches it
 * only through G and Π.
 */
export async function runConversation(deps: ConversationDeps): Promise<ConversationResult> {
  const { spec, judges } = deps;
  const startedAt = new Date();
  const contextAt = deps.contextAt ?? defaultContextAt(spec);
  const turns: TurnRecord[] = [];
  const feedback = deps.evaluatorFeedback ?? true;
  /** G as the judges keep it (recorded, scored) */
  let targets: Target[] = [];
  /** G as the simulator sees it: the judged targets with feedback, else only what the user said */
  let simulatorTargets: Target[] = [];
  let status: ConversationStatus = 'completed';
  let error: string | null = null;
  let session: HeadUnitSession | null = null;
  const simulator = deps.simulator.startConversation(spec);
  let active: Strategy[] = spec.mode === 'guided' ? [...spec.strategies] : [];
  const consecutive: Partial<Record<Strategy, number>> = {};
  // the paper's early stop is the simulated user's; a scripted user plays every turn it has
  const stopsEarly = deps.simulator.kind !== 'script';
  /** H as the simulator sees it: the exchanges so far, no verdicts */
  const exchanges: TurnRecord[] = [];
  /** the previous turn while its non-deciding judges finish (pipelining): recorded before the next turn is judged */
  let recording: Promise<void> | null = null;

  let stage: 'simulator' | 'sut' = 'simulator';
  try {
    targets = await simulator.extractTargets();
    simulatorTargets = targets.map((x) => ({ ...x }));
    let utterance: SimulatedUtterance | null = await simulator.openingUtterance(targets, contextAt(0));
    stage = 'sut';
    session = await deps.openSession(contextAt(0));
    for (let t = 0; t < spec.maxTurns; t++) {
      if (deps.signal?.aborted) throw new ConversationAborted();
      const context = contextAt(t);
      targets = applyUtterance(targets, utterance, t);
      if (!feedback) simulatorTargets = applyUtterance(simulatorTargets, utterance, t);
      stage = 'sut';
      await deps.beforeTurn?.(session, t, context);
      const watch = deps.observeTurn?.();
      const sent = performance.now();
      const reply = await session.send(t, utterance.text, context);
      const latencyMs = performance.now() - sent;
      const observed = await watch?.close();
      // the judges of turn t see turns 0..t-1 with every verdict
      await recording;
      const arriving = judgeTurn(judges, { spec, history: turns, utterance, reply, targets, context, turnIndex: t, structuredReplies: deps.structuredReplies?.() ?? true, ...(observed ? { observed } : {}) });
      const deciding = deps.pipeline ? await awaitDecidingTurnVerdict(arriving) : decidingTurnVerdict(await Promise.all(arriving));
      targets = applyVerdict(targets, deciding, t);
      // new objects, not edits: with pipelining the judges after the deciding one may still read the targets they were given
      const dropped = new Set(utterance.annotation.drops);
      targets = dropOpen(targets, dropped);
      if (!feedback) simulatorTargets = dropOpen(simulatorTargets, dropped);
      if (feedback) simulatorTargets = targets;
      if (spec.mode === 'guided' && deciding) {
        const found = new Set(deciding.labels.map((l) => l.label));
        active = active.filter((s) => !found.has(STRATEGY_TARGET_FAILURE[s]));
      }
      for (const s of spec.strategies) consecutive[s] = utterance.strategy === s ? (consecutive[s] ?? 0) + 1 : 0;
      const expectations = utterance.expect ? checkExpectation(utterance.expect, reply, deciding?.labels ?? []) : undefined;
      const exchange: TurnRecord = { index: t, utterance, context, reply, latencyMs, verdicts: [], targetsAfter: [], ...(expectations ? { expectations } : {}), ...(observed ? { observed } : {}) };
      exchanges.push(exchange);
      const targetsAfter = targets.map((x) => ({ ...x }));
      const activeAfter = [...active];
      recording = Promise.all(arriving).then((verdicts) => {
        const record: TurnRecord = { ...exchange, verdicts, targetsAfter };
        turns.push(record);
        deps.onTurn?.(record, activeAfter);
      });
      if (!deps.pipeline) await recording;
      const resolved = feedback && targets.every((x) => x.status !== 0);
      if ((stopsEarly && resolved && t >= Math.ceil(spec.maxTurns / 2)) || t === spec.maxTurns - 1) break;
      stage = 'simulator';
      utterance = await simulator.nextUtterance({ history: exchanges, targets: simulatorTargets, targetsJudged: feedback, activeStrategies: active, consecutiveUses: consecutive, context: contextAt(t + 1), turnIndex: t + 1 });
      if (utterance === null) break;
    }
    await recording;
  } catch (caught) {
    if (caught instanceof ConversationAborted) throw caught;
    // a SimulatorError is the bench's side even when it surfaces while talking to the unit (e.g. the driver's speech could not be synthesized)
    status = caught instanceof SutError ? 'sut_error' : caught instanceof SimulatorError ? 'simulator_error' : stage === 'sut' ? 'sut_error' : 'simulator_error';
    error = errorText(caught);
  } finally {
    if (session) await session.close().catch(() => undefined);
  }
  // a turn still being judged when a failure ended the loop is recorded all the same (its judges never reject)
  await recording?.catch(() => undefined);

  const verdicts = turns.length > 0 ? await evaluateConversation(judges, { spec, turns, targets }) : [];
  // the model host's slot this conversation held (llm.cacheHints) is free for the next one
  endSession(spec.key);
  if (status === 'completed' && verdicts.length > 0 && verdicts.every((v) => v.outcome === 'judge_error')) {
    status = 'judge_error';
    error = verdicts.map((v) => v.reasoning).join('; ');
  }
  const failOn = [...(deps.failOn ?? DEFAULT_FAIL_ON)];
  const protocol = session?.anomalies?.();
  const inconclusive = deps.inconclusive ?? 'review';
  return { spec, status, error, turns, targets, verdicts, failOn, inconclusive, startedAt: startedAt.toISOString(), durationMs: Date.now() - startedAt.getTime(), ...(protocol ? { protocol } : {}) };
}
