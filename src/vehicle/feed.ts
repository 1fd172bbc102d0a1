import type { TimedFrame } from './frames.ts';
import type { VehicleMapping } from './mapping.ts';
import type { VehicleSnapshot } from './model.ts';
import type { Scenario } from './scenario.ts';
import { FrameScheduler } from './scheduler.ts';

/** Anything that says what the car is at any second: a scenario, or a scenario's motion at another place and clock. */
export interface VehicleTimeline {
  stateAt(tSeconds: number): VehicleSnapshot;
}

/** The frame scheduler for a scenario on a mapping: each mapped message at its cycle time, payload from stateAt(t). */
export function scenarioScheduler(scenario: VehicleTimeline, mapping: VehicleMapping): FrameScheduler {
  // several messages share a due time: compute the state once per instant
  let cachedT = NaN;
  let cached = scenario.stateAt(0);
  const snapshotAt = (t: number) => {
    if (t !== cachedT) {
      cached = scenario.stateAt(t);
      cachedT = t;
    }
    return cached;
  };
  return new FrameScheduler(mapping.periodicMessages(snapshotAt));
}

/**
 * Every frame a scenario puts on the bus in [fromSec, toSec) of scenario time, in time order, timestamped
 * `timeOrigin + t` (default: scenario seconds). What the bench sends for the turns of a conversation:
 * framesForInterval(scenario, mapping, turn * secondsPerTurn, (turn + 1) * secondsPerTurn).
 */
export function framesForInterval(scenario: VehicleTimeline, mapping: VehicleMapping, fromSec: number, toSec: number, timeOrigin = 0): TimedFrame[] {
  return scenarioScheduler(scenario, mapping).framesBetween(fromSec, toSec, timeOrigin);
}

/** Unix time (s) of a scenario's start, reading its wall clock as UTC: the timestamp origin for recorded logs. */
export function scenarioEpoch(scenario: Scenario): number {
  return Date.parse(`${scenario.config.start.date}T${scenario.config.start.time.length === 5 ? `${scenario.config.start.time}:00` : scenario.config.start.time}Z`) / 1000;
}
