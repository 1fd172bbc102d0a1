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

  /** the next due time (µs) strictly after `afterUs` */
  private nextDueUs(afterUs: number): number {
    let next = Infinity;
    for (const slot of this.slots) {
      const k = Math.max(0, Math.floor((afterUs - slot.phaseUs) / slot.cycleUs) + 1);
      next = Math.min(next, slot.phaseUs + k * slot.cycleUs);
    }
    return next;
  }

  /**
   * Real time: sends each frame when it is due, measured against one start instant (drift-free: a late
   * tick does not push later ones back). Frames carry their scheduled timestamp; lateness is measured.
   */
  async runRealtime(sink: FrameSink, options: RealtimeOptions): Promise<RealtimeStats> {
    const durationUs = Math.round(options.durationSec * 1e6);
    const latenessUs: number[] = [];
    let sent = 0;
    let failed = 0;
    let firstError: string | undefined;
    const start = performance.now();
    let cursorUs = 0; // frames due before this have been handled
    while (cursorUs < durationUs && !options.signal?.aborted) {
      const nowUs = (performance.now() - start) * 1000;
      const dueUs = Math.min(this.nextDueUs(cursorUs - 1), durationUs);
      if (dueUs >= durationUs) break;
      if (dueUs > nowUs) {
        await sleepUntil(start, dueUs);
        continue;
      }
      // everything due up to now goes out in one batch (catches up after a late wake-up, nothing is skipped)
      const batch = this.dueBetween(cursorUs, Math.min(Math.floor(nowUs) + 1, durationUs));
      cursorUs = Math.min(Math.floor(nowUs) + 1, durationUs);
      const frames = batch.map(({ slot, tUs }) => ({
        t: (options.timeOrigin ?? 0) + tUs / 1e6,
        id: slot.message.id,
        extended: slot.message.extended,
        data: slot.message.payload(tUs / 1e6),
      }));
      const sentAtUs = (performance.now() - start) * 1000;
      try {
        await sink.send(frames);
        sent += frames.length;
        for (const { tUs } of batch) latenessUs.push(sentAtUs - tUs);
      } catch (error) {
        failed += frames.length;
        firstError ??= (error as Error).message;
      }
    }
    const expected = this.slots.reduce((n, slot) => n + Math.max(0, Math.ceil((durationUs - slot.phaseUs) / slot.cycleUs)), 0);
    return summarize(expected, sent, failed, latenessUs, firstError, (performance.now() - start) / 1000);
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

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function summarize(expected: number, sent: number, failed: number, latenessUs: number[], firstError: string | undefined, elapsedSec: number): RealtimeStats {
  const sorted = Float64Array.from(latenessUs).sort();
  const asMs = (us: number) => Math.round(us) / 1000;
  return {
    framesExpected: expected,
    framesSent: sent,
    framesDropped: expected - sent,
    sendErrors: failed,
    firstError,
    latenessMs: {
      p50: asMs(percentile(sorted, 0.5)),
      p99: asMs(percentile(sorted, 0.99)),
      max: asMs(sorted.length ? sorted[sorted.length - 1] : 0),
    },
    elapsedSec,
  };
}

/** setTimeout wakes up to ~1 ms late; sleeping to 1 ms before the deadline and yielding the rest keeps frames on time */
function sleepUntil(start: number, dueUs: number): Promise<void> {
  const remainingMs = dueUs / 1000 - (performance.now() - start);
  if (remainingMs > 1.5) return new Promise((resolve) => setTimeout(resolve, remainingMs - 1));
  return new Promise((resolve) => setImmediate(resolve));
}
