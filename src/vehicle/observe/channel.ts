import type { BusObservation, ObservedAction } from '../../domain/bus-observation.ts';
import type { CanFrame } from '../frames.ts';
import { loadActionMapping, type ActionMapping } from './action-mapping.ts';
import type { ObserveConfig } from './config.ts';
import { openFrameSource, type FrameSource } from './sources.ts';

/** Actions kept per turn; more are counted (a unit flooding its command messages is itself visible that way). */
export const MAX_ACTIONS_PER_TURN = 50;

/** One turn's watch: closing it waits out the window and hands back what the bus showed. */
export interface TurnWatch {
  close(): Promise<BusObservation>;
}

/** What the observation channel is (recorded once per invocation as `vehicle.observe`). */
export interface ObserveDescription {
  transport: string;
  mapping: string;
  dbc: string;
  windowMs: number;
  carries: string[];
}

interface OpenWindow {
  startedAt: number;
  actions: ObservedAction[];
  framesSeen: number;
  dropped: number;
}

/**
 * Listens on the bus for the head unit's own frames and turns them into observed actions. Per frame the work
 * is constant: one lookup of its id in the mapping (most traffic is not the unit's), a decode of the unit's
 * frames, a comparison with the last value of each mapped signal. Only the open turn's actions are kept.
 */
export class ObservationChannel {
  /** last value per mapping entry (trigger: change) */
  private readonly last: Array<ObservedAction['value'] | undefined>;
  private window: OpenWindow | null = null;
  private problems = 0;

  private constructor(
    readonly mapping: ActionMapping,
    private readonly source: FrameSource,
    readonly windowMs: number,
    private readonly now: () => number,
  ) {
    this.last = new Array(mapping.size).fill(undefined);
  }

  /** Opens the source and starts listening; fails with the transport's own message (no such tty, no CAN interface). */
  static async open(config: ObserveConfig, options: { source?: FrameSource; now?: () => number } = {}): Promise<ObservationChannel> {
    const mapping = loadActionMapping(config.mapping);
    const source = options.source ?? openFrameSource(config.transport, { bitrate: config.bitrate });
    const channel = new ObservationChannel(mapping, source, config.windowMs, options.now ?? (() => performance.now()));
    await source.start(
      (frame) => channel.receive(frame),
      () => channel.problems++,
    );
    return channel;
  }

  /** One frame off the bus, as it arrives. */
  receive(frame: CanFrame): void {
    if (!this.mapping.reads(frame)) return;
    const at = this.now();
    // the window is open until its close() has waited it out: a frame that arrived in time but was read late (a busy
    // event loop) still counts
    const open = this.window;
    if (open) open.framesSeen++;
    const decoded = this.mapping.decode(frame);
    if (!decoded || 'problem' in decoded) {
      this.problems++;
      return;
    }
    for (const action of decoded.actions) {
      const changed = this.last[action.entry] !== action.value;
      this.last[action.entry] = action.value;
      if (!open || (action.trigger === 'change' && !changed)) continue;
      if (open.actions.length >= MAX_ACTIONS_PER_TURN) {
        open.dropped++;
        continue;
      }
      const atMs = at - open.startedAt;
      open.actions.push({ kind: action.kind, value: action.value, ...(action.target ? { target: action.target } : {}), atMs, frame: { atMs, ...decoded.evidence } });
    }
  }

  /** Starts watching the next turn (a turn still open is dropped: one turn at a time on one bus). */
  watchTurn(): TurnWatch {
    const window: OpenWindow = { startedAt: this.now(), actions: [], framesSeen: 0, dropped: 0 };
    this.window = window;
    this.source.turnOpened?.();
    return {
      close: async () => {
        const remaining = window.startedAt + this.windowMs - this.now();
        if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, remaining));
        // timers run before I/O in an event-loop turn: let the input that is already waiting be read first
        await new Promise((resolve) => setImmediate(resolve));
        if (this.window === window) this.window = null;
        return { windowMs: this.windowMs, carries: [...this.mapping.carries], actions: window.actions, framesSeen: window.framesSeen, actionsDropped: window.dropped };
      },
    };
  }

  /** Lines or frames that could not be read (junk on the line, a unit frame of the wrong length). */
  get unreadable(): number {
    return this.problems;
  }

  describe(): ObserveDescription {
    return { transport: this.source.describe, mapping: this.mapping.name, dbc: this.mapping.codec.db.source.replace(/^.*[\\/]/, ''), windowMs: this.windowMs, carries: [...this.mapping.carries] };
  }

  close(): Promise<void> {
    return this.source.close();
  }
}
