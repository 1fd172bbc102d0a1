import { z } from 'zod';
import { formatMinutes, minutesOfDay, type ContextVector } from '../../domain/context.ts';
import type { ConversationResult, ConversationSpec, ScriptedTurn, TurnRecord } from '../../domain/conversation.ts';
import type { CampaignEvent } from '../../run/events.ts';
import { ScriptedSimulator, type ScriptSource } from '../../simulator/script.ts';
import { applySuiteContext, DEFAULT_SUITE_START, SuiteContextSchema, type SuiteContext } from '../../suite/format.ts';
import { campaignPathFields, CampaignConfigSchema, type CampaignConfig, type LoadedCampaign } from '../dialogue/config.ts';
import { SCRIPTED_SIMULATOR } from '../dialogue/config.ts';
import { conversationStorage, dialogueKind, openConversationRig } from '../dialogue/kind.ts';
import type { FinishedConversation } from '../dialogue/run.ts';
import type { CampaignKindDefinition, PathField } from '../../run/kind.ts';

/**
 * A live session (docs/suites.md, "Live sessions"): a technician types turns to the connected unit (the
 * reference unit or one on the bridge) and sets the car's state as it goes (speed, gear, state of charge,
 * position, time), or runs a drive scenario underneath; every turn is judged as a campaign turn is and the
 * technician sees the labels, evidence and target status as it ends. It runs on the dialogue run path as a
 * run of one conversation (listed as mode "live"): stored as it ends like any conversation, with its report,
 * annotation and rating, and it can be pinned as a regression.
 */
export const LiveSessionConfigSchema = z.strictObject({
  name: z.string().min(1).max(200).default('live session'),
  // the dialogue kind's fields, defined once there (src/kinds/dialogue/config.ts)
  headUnit: CampaignConfigSchema.shape.headUnit,
  judges: CampaignConfigSchema.shape.judges,
  safety: CampaignConfigSchema.shape.safety,
  /** where and when the session starts (default: Maxvorstadt, Munich, 2026-05-12 12:00, parked in P) */
  context: SuiteContextSchema.optional(),
  /** a drive scenario underneath: it sets the car's state at each turn instead of the technician */
  vehicle: CampaignConfigSchema.shape.vehicle,
});
export type LiveSessionConfig = z.infer<typeof LiveSessionConfigSchema>;
export type LiveSessionConfigInput = z.input<typeof LiveSessionConfigSchema>;

/**
 * The files a live session's config names: those of the dialogue fields it shares (the vehicle's scenario,
 * mapping and transports, the head unit's bus, gguf judges), named once in campaignPathFields.
 */
export function liveSessionPathFields(config: LiveSessionConfig): PathField<LiveSessionConfig>[] {
  const shared = new Set(Object.keys(LiveSessionConfigSchema.shape));
  const asDialogue = { ...config, seeds: '', simulator: SCRIPTED_SIMULATOR, llm: {} } as unknown as CampaignConfig;
  return campaignPathFields(asDialogue).filter((f) => shared.has(f.field.split('.')[0])) as unknown as PathField<LiveSessionConfig>[];
}

/** The most turns one live session takes (the conversation schema's limit). */
export const MAX_LIVE_TURNS = 50;
const PARKED: SuiteContext = { vehicle: { speedKmh: 0, gear: 'P' } };

export class LiveSessionError extends Error {
  constructor(
    message: string,
    /** the fields that were wrong (a context change out of range), each with what was expected */
    readonly fields: Array<{ path: string; message: string }> = [],
  ) {
    super(message);
    this.name = 'LiveSessionError';
  }
}

interface Pending {
  turn: ScriptedTurn;
  resolve: (record: TurnRecord) => void;
  reject: (error: Error) => void;
}

/**
 * The technician's side of a live session: the turn queue the scripted user plays from, the car's state as
 * set, and the turn records as they end. `kind` runs `campaign` on the one run skeleton; `onEvent` must see the
 * run's events (it resolves `say` when the turn ends).
 */
export class LiveSession {
  readonly campaign: LoadedCampaign;
  /** what runs `campaign` (runKindCampaign): a run of one conversation, listed as mode "live" */
  readonly kind: CampaignKindDefinition<LoadedCampaign, ConversationSpec, FinishedConversation>;
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

  constructor(readonly config: LiveSessionConfig) {
    this.state = applySuiteContext(applySuiteContext(DEFAULT_SUITE_START, PARKED, 'context'), config.context, 'context');
    this.done = new Promise((resolve) => (this.finished = resolve));
    this.started = new Promise((resolve) => (this.announce = resolve));
    const spec: ConversationSpec = {
      key: 'session',
      seed: { id: 'live', text: config.name, requests: [] },
      persona: 'neutral',
      mode: 'baseline',
      strategies: [],
      maxTurns: MAX_LIVE_TURNS,
      context: this.state,
      repeat: 0,
      rngSeed: 0,
    };
    const dialogue = CampaignConfigSchema.parse({
      name: config.name,
      description: 'A live session: a technician\'s typed turns, judged as they end.',
      mode: 'baseline',
      seeds: 'live',
      conversations: 1,
      concurrency: 1,
      headUnit: config.headUnit,
      simulator: SCRIPTED_SIMULATOR,
      judges: config.judges,
      safety: config.safety,
      maxTurns: [MAX_LIVE_TURNS],
      ...(config.vehicle ? { vehicle: config.vehicle } : {}),
    });
    const source: ScriptSource = () => this.next();
    this.simulator = new ScriptedSimulator(() => source);
    this.campaign = { config: dialogue, path: 'live-session', seeds: [], strategies: [] };
    // the dialogue kind with this session's one conversation, the technician as its user and the car's state as set
    this.kind = {
      ...dialogueKind,
      plan: async () => [{ key: spec.key, item: spec }],
      open: (campaign, options) => openConversationRig(campaign, options, { user: this.simulator, contextAt: (t) => this.contexts[t] ?? this.state }),
      storage: conversationStorage(() => 'live'),
      // the technician and the context they set are in this process: a session cannot travel to a fleet worker
      wire: {
        ...dialogueKind.wire,
        loaded: {
          ...dialogueKind.wire.loaded,
          encode: () => {
            throw new Error(`${config.name}: a live session runs on this bench only, not on a fleet`);
          },
        },
      },
    };
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

  /** Ends the session: the conversation is judged as a whole and stored. */
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
