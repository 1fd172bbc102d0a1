import { formatMinutes, minutesOfDay, type ContextVector } from '../../domain/context.ts';
import type { ConversationResult, ScriptedTurn, TurnRecord } from '../../domain/conversation.ts';
import type { CampaignEvent } from '../../run/events.ts';
import { ScriptedSimulator, type ScriptSource } from '../../simulator/script.ts';
import { applySuiteContext, SuiteContextSchema } from '../../suite/format.ts';
import { liveSession, LiveSessionError, sessionStart, type LiveSessionConfig, type LoadedLiveSession } from './config.ts';
import { liveKind, MAX_LIVE_TURNS } from './kind.ts';

interface Pending {
  turn: ScriptedTurn;
  resolve: (record: TurnRecord) => void;
  reject: (error: Error) => void;
}

/**
 * The technician's side of a live session (docs/suites.md, "Live sessions"): the turn queue the scripted user plays from,
 * the car's state as set, and the turn records as they end. `kind` runs `loaded` on the one run skeleton (a run of one
 * conversation, stored as kind live); `onEvent` must see the run's events (it resolves `say` when the turn ends).
 * A start the config cannot give (an unknown district) throws LiveSessionError naming the field and what is accepted.
 */
export class LiveSession {
  readonly loaded: LoadedLiveSession;
  readonly kind: ReturnType<typeof liveKind>;
  readonly simulator: ScriptedSimulator;
  private state: ContextVector;
  private readonly contexts: ContextVector[] = [];
  private readonly turns: TurnRecord[] = [];
  private pending: Pending | null = null;
  private waiting: ((turn: ScriptedTurn | null) => void) | null = null;
  private queued: ScriptedTurn | null = null;
  private ended = false;
  private result: ConversationResult | null = null;
  private finished: (() => void) | null = null;
  private announce: ((runId: string) => void) | null = null;
  /** resolves when the session has ended and its run is finished */
  readonly done: Promise<void>;
  /** resolves with the run id once the run is recorded */
  readonly started: Promise<string>;
  runId: string | null = null;

  /** `path`: the session config file, if any (its relative paths resolve there) */
  constructor(
    readonly config: LiveSessionConfig,
    path?: string,
  ) {
    this.state = sessionStart(config);
    this.done = new Promise((resolve) => (this.finished = resolve));
    this.started = new Promise((resolve) => (this.announce = resolve));
    const source: ScriptSource = () => this.next();
    this.simulator = new ScriptedSimulator(() => source);
    this.loaded = liveSession(config, path);
    this.kind = liveKind({ user: this.simulator, contextAt: (t) => this.contexts[t] ?? this.state, end: () => this.end() });
  }

  /** The car's state and place the next turn will be said in. */
  context(): ContextVector {
    return this.state;
  }

  /** Changes the car's state (speed, gear, state of charge, temperature, position, date, time) from the next turn on. */
  setContext(change: unknown): ContextVector {
    // within physics (src/domain/physical-context.ts): a refusal names the value, the field and the accepted range
    const parsed = SuiteContextSchema.safeParse(change);
    if (!parsed.success) {
      const fields = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(change)', message: i.message }));
      throw new LiveSessionError(`context: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`, fields);
    }
    try {
      this.state = applySuiteContext(this.state, parsed.data, 'context');
    } catch (error) {
      throw new LiveSessionError((error as Error).message);
    }
    return this.state;
  }

  /** The turns so far. */
  history(): readonly TurnRecord[] {
    return this.turns;
  }

  /** Says one turn to the unit in the current state; resolves with the judged turn when it ends. */
  say(text: string): Promise<TurnRecord> {
    const words = text.trim();
    if (this.ended) return Promise.reject(new LiveSessionError('the session has ended; start a new one'));
    if (this.pending) return Promise.reject(new LiveSessionError('the previous turn has not ended yet'));
    if (!words) return Promise.reject(new LiveSessionError('say something: the turn is empty'));
    if (words.length > 10_000) return Promise.reject(new LiveSessionError('a turn is at most 10 000 characters'));
    if (this.turns.length >= MAX_LIVE_TURNS) return Promise.reject(new LiveSessionError(`a session has at most ${MAX_LIVE_TURNS} turns; end it and start another`));
    const index = this.turns.length;
    // the clock moves a minute a turn unless the technician set it
    if (index > 0 && this.contexts[index - 1]?.time === this.state.time) this.state = { ...this.state, time: formatMinutes(minutesOfDay(this.state.time) + 1) };
    const turn: ScriptedTurn = { text: words, context: this.state };
    this.contexts[index] = this.state;
    return new Promise((resolve, reject) => {
      this.pending = { turn, resolve, reject };
      if (this.waiting) {
        const deliver = this.waiting;
        this.waiting = null;
        deliver(turn);
      } else this.queued = turn;
    });
  }

  /** Ends the session: the conversation is judged as a whole and stored (a turn in flight ends first). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.waiting) {
      const deliver = this.waiting;
      this.waiting = null;
      deliver(null);
    }
  }

  /** The stored conversation once the session ended. */
  stored(): ConversationResult | null {
    return this.result;
  }

  /** Feeds the run's events: a turn's end resolves its `say`, the conversation's end completes the session. */
  onEvent(event: CampaignEvent): void {
    if (event.type === 'run_started') {
      this.runId = event.runId;
      this.announce?.(event.runId);
    }
    if (event.type === 'turn') {
      this.turns.push(event.turn);
      const pending = this.pending;
      this.pending = null;
      pending?.resolve(event.turn);
    }
    if (event.type === 'conversation_finished') {
      this.result = event.result;
      this.ended = true;
      // a turn that never ended (the unit failed): the conversation says why
      this.pending?.reject(new LiveSessionError(event.result.error ?? 'the session ended before the turn did'));
      this.pending = null;
    }
    if (event.type === 'run_finished') {
      this.ended = true;
      this.finished?.();
    }
  }

  private next(): Promise<ScriptedTurn | null> {
    if (this.queued) {
      const turn = this.queued;
      this.queued = null;
      return Promise.resolve(turn);
    }
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => (this.waiting = resolve));
  }
}
