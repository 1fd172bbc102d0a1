import { z } from 'zod';

/**
 * The longest delay a Node timer can wait: 2^31−1 ms (about 24.8 days). A longer one does not wait at all (Node
 * fires it at once with a warning), so a configured wait beyond it would end a run at once instead of never:
 * every duration that feeds a timer is validated against it, in the unit it is given in.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const UNIT_MS = { ms: 1, s: 1_000, min: 60_000 } as const;
export type DurationUnit = keyof typeof UNIT_MS;

/** The largest whole value a duration in `unit` may have. */
export function maxTimerValue(unit: DurationUnit): number {
  return Math.floor(MAX_TIMER_MS / UNIT_MS[unit]);
}

/** What a duration beyond the limit is told (as a zod `.max()` message or a flag's error). */
export function timerLimitMessage(unit: DurationUnit): string {
  return `at most ${maxTimerValue(unit)} ${unit === 'min' ? 'minutes' : unit === 's' ? 'seconds' : 'ms'} (about 24.8 days, the longest a timer can wait)`;
}

/** A whole, positive number of milliseconds that a timer can wait (a config field's schema). */
export function timerMsSchema() {
  return z.number().int().positive().max(maxTimerValue('ms'), timerLimitMessage('ms'));
}

/** A positive number of seconds that a timer can wait (a config field's schema). */
export function timerSecondsSchema() {
  return z.number().positive().max(maxTimerValue('s'), timerLimitMessage('s'));
}
