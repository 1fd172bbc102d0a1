import { performance } from 'node:perf_hooks';
import type { TimedFrame } from './frames.ts';
import type { FrameSink } from './transports/sink.ts';

/** A message sent periodically; its payload may depend on the (virtual) time it is sent at. */
export interface PeriodicMessage {
  id: number;
  extended: boolean;
  cycleMs: number;
  /** first transmission, in ms after time 0 (spreads bus load); default 0 */
  phaseMs?: number;
  payload(tSeconds: number): Uint8Array;
}

interface Slot {
  message: PeriodicMessage;
  cycleUs: number;
  phaseUs: number;
}

/**
 * Puts each message on the time line at its cycle time. Times are kept as integer microseconds
 * (k * cycle + phase), so the schedule never drifts however long it runs.
 */
export class FrameScheduler {
  private readonly slots: Slot[];

  constructor(messages: readonly PeriodicMessage[]) {
    this.slots = messages.map((message) => {
      if (!(message.cycleMs > 0) || !Number.isFinite(message.cycleMs)) {
        throw new Error(`message 0x${message.id.toString(16)}: cycle time must be a positive number of ms, got ${message.cycleMs}`);
      }
      return { message, cycleUs: Math.round(message.cycleMs * 1000), phaseUs: Math.round((message.phaseMs ?? 0) * 1000) };
    });
  }

  get messageCount(): number {
    return this.slots.length;
  }

  /** Due times (µs) of every slot in [fromUs, toUs), ordered by time, then by message order. */
  private dueBetween(fromUs: number, toUs: number): Array<{ slot: Slot; tUs: number }> {
    const due: Array<{ slot: Slot; tUs: number; order: number }> = [];
    this.slots.forEach((slot, order) => {
      const firstK = Math.max(0, Math.ceil((fromUs - slot.phaseUs) / slot.cycleUs));
      for (let k = firstK; ; k++) {
        const tUs = slot.phaseUs + k * slot.cycleUs;
        if (tUs >= toUs) break;
        due.push({ slot, tUs, order });
      }
    });
    due.sort((a, b) => a.tUs - b.tUs || a.order - b.order);
    return due;
  }

  /**
   * Virtual time: every frame due in [fromSec, toSec), timestamped `timeOrigin + t`. Independent of the
   * wall clock, so tests and recordings are reproducible.
   */
  framesBetween(fromSec: number, toSec: number, timeOrigin = 0): TimedFrame[] {
    return this.dueBetween(Math.round(fromSec * 1e6), Math.round(toSec * 1e6)).map(({ slot, tUs }) => ({
      t: timeOrigin + tUs / 1e6,
      id: slot.message.id,
      extended: slot.message.extended,
      data: slot.message.payload(tUs / 1e6),
    }));
  }

  /**
   * Real time: sends each frame when it is due, measured against one start instant (drift-free: a late
   * tick does not push later ones back). Frames carry their scheduled timestamp; lateness is measured.
   */
  async runRealtime(sink: FrameSink, options: RealtimeOptions): Promise<RealtimeStats> {
    const durationUs = Math.round(options.durationSec * 1e6);
    const lateness = new LatenessHistogram();
    let sent = 0;
    let failed = 0;
    let firstError: string | undefined;
    const origin = options.timeOrigin ?? 0;
    // next due time of each slot; advancing by whole cycles keeps the schedule drift-free
    const nextUs = this.slots.map((slot) => slot.phaseUs);
    const dueTimes: number[] = [];
    const start = performance.now();
    while (!options.signal?.aborted) {
      let earliest = Infinity;
      for (const t of nextUs) if (t < earliest) earliest = t;
      if (earliest >= durationUs) break;
      const nowUs = (performance.now() - start) * 1000;
      if (earliest > nowUs) {
        await sleepUntil(start, earliest);
        continue;
      }
      // everything due up to now goes out in one batch (catches up after a late wake-up, nothing is skipped)
      const frames: TimedFrame[] = [];
      dueTimes.length = 0;
      for (let i = 0; i < this.slots.length; i++) {
        const slot = this.slots[i];
        while (nextUs[i] <= nowUs && nextUs[i] < durationUs) {
          const tUs = nextUs[i];
          frames.push({ t: origin + tUs / 1e6, id: slot.message.id, extended: slot.message.extended, data: slot.message.payload(tUs / 1e6) });
          dueTimes.push(tUs);
          nextUs[i] += slot.cycleUs;
        }
      }
      let ordered = true;
      for (let k = 1; k < dueTimes.length && ordered; k++) ordered = dueTimes[k] >= dueTimes[k - 1];
      if (!ordered) {
        // a catch-up batch spans several due times: keep it in time order (stable for equal times)
        const order = frames.map((_, k) => k).sort((a, b) => dueTimes[a] - dueTimes[b] || a - b);
        const sortedFrames = order.map((k) => frames[k]);
        const sortedTimes = order.map((k) => dueTimes[k]);
        frames.splice(0, frames.length, ...sortedFrames);
        dueTimes.splice(0, dueTimes.length, ...sortedTimes);
      }
      const sentAtUs = (performance.now() - start) * 1000;
      try {
        await sink.send(frames);
        sent += frames.length;
        for (const tUs of dueTimes) lateness.add(sentAtUs - tUs);
      } catch (error) {
        failed += frames.length;
        firstError ??= (error as Error).message;
      }
    }
    const expected = this.slots.reduce((n, slot) => n + Math.max(0, Math.ceil((durationUs - slot.phaseUs) / slot.cycleUs)), 0);
    return {
      framesExpected: expected,
      framesSent: sent,
      framesDropped: expected - sent,
      sendErrors: failed,
      firstError,
      latenessMs: { p50: lateness.percentileMs(0.5), p99: lateness.percentileMs(0.99), max: lateness.maxMs() },
      elapsedSec: (performance.now() - start) / 1000,
    };
  }
}

export interface RealtimeOptions {
  durationSec: number;
  /** added to frame timestamps (e.g. Unix time at start); default 0 */
  timeOrigin?: number;
  signal?: AbortSignal;
}

export interface RealtimeStats {
  framesExpected: number;
  framesSent: number;
  /** frames due in the run that were never accepted by the sink (failed sends or the run stopped early) */
  framesDropped: number;
  sendErrors: number;
  firstError: string | undefined;
  /** how late frames left relative to their schedule, in ms */
  latenessMs: { p50: number; p99: number; max: number };
  elapsedSec: number;
}

/**
 * Lateness in 10 µs bins up to 1 s (beyond that in the last bin): fixed memory however long the run,
 * so a 10-minute run does not add garbage-collection pauses of its own.
 */
class LatenessHistogram {
  private static readonly BIN_US = 10;
  private readonly bins = new Float64Array(100_000);
  private count = 0;
  private max = 0;

  add(us: number): void {
    const value = Math.max(0, us);
    this.bins[Math.min(this.bins.length - 1, Math.floor(value / LatenessHistogram.BIN_US))]++;
    this.count++;
    if (value > this.max) this.max = value;
  }

  /** upper edge of the bin holding the q-quantile, in ms */
  percentileMs(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil(q * this.count);
    let seen = 0;
    for (let i = 0; i < this.bins.length; i++) {
      seen += this.bins[i];
      if (seen >= rank) return ((i + 1) * LatenessHistogram.BIN_US) / 1000;
    }
    return this.maxMs();
  }

  maxMs(): number {
    return Math.round(this.max) / 1000;
  }
}

const waitCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * setTimeout wakes up to ~1 ms late: sleep with it until 1 ms before the deadline, then block for the rest
 * (at most 1.5 ms) with Atomics.wait, which is precise and, unlike spinning on the clock, allocates nothing.
 */
function sleepUntil(start: number, dueUs: number): Promise<void> {
  const remainingMs = dueUs / 1000 - (performance.now() - start);
  if (remainingMs > 1.5) return new Promise((resolve) => setTimeout(resolve, remainingMs - 1));
  if (remainingMs > 0) Atomics.wait(waitCell, 0, 0, remainingMs);
  return Promise.resolve();
}
