import type { ConversationResult } from '../domain/conversation.ts';
import type { ResultStore } from '../store/store.ts';

/**
 * Whether a run reached its head unit. A run in which no conversation got a single reply is not a result about
 * the unit: it ends as `unit_unreachable` (a distinct status, a non-zero exit code, its own badge in the app),
 * and a run stops early once its recent conversations show the unit is gone (`maxErrorShare`).
 */

/** The share of the last REACH_WINDOW finished conversations that may fail to reach the unit before the run stops (config `maxErrorShare`). */
export const DEFAULT_MAX_ERROR_SHARE = 1;
/** How many of the latest finished conversations `maxErrorShare` looks at; a run stops early only after this many. */
export const REACH_WINDOW = 20;

/** The one status a conversation that missed the unit ends in (a unit error); any other status reached it. */
const UNREACHED_STATUS = 'sut_error';

/** A conversation reached the unit when the unit answered at least one of its turns (a conversation without a unit error did too). */
export function reachedUnit(result: Pick<ConversationResult, 'status' | 'turns'>): boolean {
  return result.status !== UNREACHED_STATUS || result.turns.some((turn) => turn.reply !== null);
}

/**
 * On --resume: deletes the run's stored conversations that never reached the unit (by `reachedUnit`, the rule the
 * run counts them by), so they run again instead of keeping an outage as the unit's result; their keys in plan order.
 */
export function forgetUnreachedConversations(store: ResultStore, runId: string): string[] {
  return store.forgetConversations(runId, UNREACHED_STATUS, (result) => !reachedUnit(result));
}

/** What the reach count needs of a finished item: whether the unit answered it, and why not when it did not. */
export interface UnitReachSample {
  reached: boolean;
  cause: string | null;
}

/** A finished conversation as a reach sample. */
export function conversationReach(result: Pick<ConversationResult, 'status' | 'turns' | 'error'>): UnitReachSample {
  return { reached: reachedUnit(result), cause: result.error };
}

export interface UnitReach {
  /** counts a finished conversation (or item) */
  record(result: UnitReachSample): void;
  /** why the run should stop (the unit is clearly gone), or null */
  stopReason(): string | null;
  /** no conversation of this invocation reached the unit although some finished */
  neverReached(): boolean;
  /** the line that says so: how many conversations, and the last cause */
  summary(): string;
}

/** The reach of one run invocation's items (conversations, task trials, questions: `nouns`), in the order they finished. */
export function trackUnitReach(maxErrorShare: number = DEFAULT_MAX_ERROR_SHARE, nouns: { item: string; items: string } = { item: 'conversation', items: 'conversations' }): UnitReach {
  const recent: boolean[] = [];
  let finished = 0;
  let reached = 0;
  let lastCause: string | null = null;
  const unreachedInWindow = () => recent.filter((ok) => !ok).length;
  return {
    record(sample) {
      const ok = sample.reached;
      finished++;
      if (ok) reached++;
      else lastCause = sample.cause;
      recent.push(ok);
      if (recent.length > REACH_WINDOW) recent.shift();
    },
    stopReason() {
      if (recent.length < REACH_WINDOW) return null;
      const unreached = unreachedInWindow();
      if (unreached / REACH_WINDOW < maxErrorShare) return null;
      return `${unreached} of the last ${REACH_WINDOW} ${nouns.items} did not reach the head unit (maxErrorShare ${maxErrorShare}; last cause: ${lastCause ?? 'unknown'})`;
    },
    neverReached: () => finished > 0 && reached === 0,
    summary: () => `none of the ${finished} ${nouns.item}(s) that ran reached the head unit (last cause: ${lastCause ?? 'unknown'})`,
  };
}

/**
 * On --resume, for a kind stored as item results (manual-QA questions, task trials): un-stores the items whose stored result
 * did not reach the head unit, as the kind's `reach` reads it (the same reading as its `unitReach`), so they run again;
 * returns their keys in plan order. An item that never tried the unit (`reach` gives null) is kept.
 */
export function forgetUnreachedItems(store: ResultStore, runId: string, reach: (result: unknown, where: string) => UnitReachSample | null): string[] {
  const unreached = store
    .itemResults(runId, { done: true })
    .filter((row) => reach(row.result, `${store.path}: run ${runId} item "${row.key}"`)?.reached === false)
    .map((row) => row.key);
  store.forgetItemResults(runId, unreached);
  return unreached;
}
