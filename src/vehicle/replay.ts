import { performance } from 'node:perf_hooks';
import type { TimedFrame } from './frames.ts';
import type { FrameSink } from './transports/sink.ts';

export interface ReplayOptions {
  /** send at the recorded pace (relative to the first frame); false sends as fast as the sink takes them */
  pace: boolean;
  /** frames due within this window go out together (default 10 ms) */
  windowMs?: number;
  signal?: AbortSignal;
}

export interface ReplayResult {
  sent: number;
  failed: number;
  errors: string[];
}

/**
 * Sends recorded frames to a sink. Paced replays wait for each window's offset from the start (drift-free);
 * a failed send is reported and the replay carries on with the next window.
 */
export async function replayFrames(frames: readonly TimedFrame[], sink: FrameSink, options: ReplayOptions): Promise<ReplayResult> {
  const result: ReplayResult = { sent: 0, failed: 0, errors: [] };
  if (frames.length === 0) return result;
  const windowS = (options.windowMs ?? 10) / 1000;
  const t0 = frames[0].t;
  const start = performance.now();
  let i = 0;
  while (i < frames.length && !options.signal?.aborted) {
    const windowStart = frames[i].t;
    let j = i;
    while (j < frames.length && frames[j].t < windowStart + windowS) j++;
    const batch = frames.slice(i, j);
    if (options.pace) {
      const dueMs = (windowStart - t0) * 1000;
      const waitMs = dueMs - (performance.now() - start);
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
    try {
      await sink.send(batch);
      result.sent += batch.length;
    } catch (error) {
      result.failed += batch.length;
      if (result.errors.length < 20) result.errors.push((error as Error).message);
    }
    i = j;
  }
  return result;
}
