import type { CampaignEvent } from '../run/events.ts';
import { combinedVerdict, turnLabels, type CombinedOutcome } from '../analysis/verdict.ts';
import type { ConversationResult, TurnRecord } from '../domain/conversation.ts';

// The live view's state, folded from campaign events. The server keeps one (for pages that
// connect mid-run) and the UI folds the same events with the same function.

/** A conversation that is running now, as the live view shows it. */
export interface LiveConversation {
  key: string;
  seedText: string;
  persona: string;
  mode: string;
  turns: TurnRecord[];
  activeStrategies: string[];
  /** the fleet rig running it (null: not yet taken, or a local run) */
  rig: string | null;
  /** a dialogue conversation (turns, strategies), or an item of another kind (a question, a task trial: its label in seedText, no turns) */
  shape: 'conversation' | 'item';
}

export interface LiveFinished {
  key: string;
  status: ConversationResult['status'];
  outcome: CombinedOutcome;
  score: number | null;
  turns: number;
  /** the fleet rig that ran it (null on a local run) */
  rig: string | null;
  /** an item of another kind: the kind's own word for its outcome (e.g. not_runnable); null for a conversation */
  word: string | null;
}

/** One fleet rig in a live run: conversations it runs now and those it finished. */
export interface LiveRig {
  rig: string;
  running: number;
  done: number;
}

/** Everything a live view needs to draw itself when it connects mid-run. */
export interface LiveSnapshot {
  state: 'idle' | 'running' | 'stopping' | 'finished' | 'failed';
  runId: string | null;
  /** the campaign kind running (dialogue, manual-qa, tool-agents, suite); null before a run starts */
  kind: string | null;
  /** the app page its runs open on (its view's, src/run/kind-view.ts); null before a run starts */
  page: string | null;
  /** what the kind calls its items (conversation(s), question(s), task trial(s)) */
  nouns: { item: string; items: string };
  name: string | null;
  configName: string | null;
  planned: number;
  done: number;
  elapsedMs: number;
  budgetMs: number | null;
  finalStatus: string | null;
  error: string | null;
  active: LiveConversation[];
  /** the latest turns across all conversations, newest first (they stay after their conversation ends) */
  feed: { key: string; turn: TurnRecord }[];
  recent: LiveFinished[];
  /** the head unit's link (connected, replaced with both addresses, paused, …), newest first */
  headUnit: { kind: string; message: string }[];
  /** why the run stopped by itself (the head unit did not come back within the grace) */
  stopReason: string | null;
  /** a fleet run's rigs, by name (empty on a local run) */
  rigs: LiveRig[];
  /** the running tally since this start (the demo screen): conversations by outcome, and the labels that counted on turns */
  tally: { outcomes: Record<CombinedOutcome, number>; labels: Record<string, number>; turns: number };
  /** the findings by label over this start, one point per finished item (thinned to at most TIMELINE_LIMIT points): the Live screen's plot */
  timeline: LiveTimelinePoint[];
}

/** The tally's labels (cumulative) when the `finished`-th item of this start ended, `elapsedMs` into the run. */
export interface LiveTimelinePoint {
  finished: number;
  elapsedMs: number;
  labels: Record<string, number>;
}

const RECENT_LIMIT = 50;
const FEED_LIMIT = 30;
const HEAD_UNIT_NOTICES_LIMIT = 20;
export const TIMELINE_LIMIT = 200;

/** Folds one event into the snapshot (mutates it). */
export function applyCampaignEvent(s: LiveSnapshot, event: CampaignEvent): void {
  s.runId = event.runId;
  switch (event.type) {
    case 'run_started':
      s.name = event.name;
      s.kind = event.kind ?? s.kind;
      s.page = event.page ?? s.page;
      s.nouns = event.nouns ?? s.nouns;
      s.planned = event.planned;
      s.done = event.planned - event.remaining;
      s.budgetMs = event.budgetMs;
      break;
    case 'conversation_started':
      s.active.push({
        key: event.key,
        seedText: event.spec.seed.text,
        persona: event.spec.persona,
        mode: event.spec.mode,
        turns: [],
        activeStrategies: [...event.spec.strategies],
        rig: null,
        shape: 'conversation',
      });
      break;
    case 'conversation_rig': {
      const live = s.active.find((c) => c.key === event.key);
      if (!live) break;
      if (live.rig !== null) rigOf(s, live.rig).running--;
      live.rig = event.rig;
      rigOf(s, event.rig).running++;
      break;
    }
    case 'turn': {
      const live = s.active.find((c) => c.key === event.key);
      if (live) {
        live.turns.push(event.turn);
        live.activeStrategies = event.activeStrategies;
      }
      s.feed.unshift({ key: event.key, turn: event.turn });
      s.feed.length = Math.min(s.feed.length, FEED_LIMIT);
      s.tally.turns += 1;
      for (const label of turnLabels(event.turn)) s.tally.labels[label.label] = (s.tally.labels[label.label] ?? 0) + 1;
      break;
    }
    case 'conversation_finished': {
      const combined = combinedVerdict(event.result);
      finishLive(s, event.key, combined.outcome, (rig) => ({ key: event.key, status: event.result.status, outcome: combined.outcome, score: combined.score, turns: event.result.turns.length, rig, word: null }));
      break;
    }
    case 'item_started':
      // an item of another kind than dialogue: what it asks (the question, the task trial), no turns
      s.active.push({ key: event.key, seedText: event.label, persona: '', mode: s.kind ?? '', turns: [], activeStrategies: [], rig: null, shape: 'item' });
      break;
    case 'item_finished':
      finishLive(s, event.key, event.outcome, (rig) => ({ key: event.key, status: 'completed', outcome: event.outcome, score: null, turns: 0, rig, word: event.word }));
      break;
    case 'progress':
      s.done = event.done;
      s.planned = event.planned;
      s.elapsedMs = event.elapsedMs;
      s.budgetMs = event.budgetMs;
      break;
    case 'headunit':
      s.headUnit.unshift({ kind: event.kind, message: event.message });
      s.headUnit.length = Math.min(s.headUnit.length, HEAD_UNIT_NOTICES_LIMIT);
      break;
    case 'run_finished':
      // conversations abandoned at the end (Ctrl+C, budget) run no more, on no rig
      s.active = [];
      for (const rig of s.rigs) rig.running = 0;
      s.done = event.done;
      s.planned = event.planned;
      s.finalStatus = event.status;
      s.stopReason = event.reason ?? null;
      break;
  }
}

/** An item (a conversation, a question, a task trial) leaves the running list: its rig counts it, the tally and the recent list get it. */
function finishLive(s: LiveSnapshot, key: string, outcome: keyof LiveSnapshot['tally']['outcomes'], finished: (rig: string | null) => LiveFinished): void {
  const rig = s.active.find((c) => c.key === key)?.rig ?? null;
  if (rig !== null) {
    rigOf(s, rig).running--;
    rigOf(s, rig).done++;
  }
  s.active = s.active.filter((c) => c.key !== key);
  s.tally.outcomes[outcome] += 1;
  addTimelinePoint(s);
  s.recent.unshift(finished(rig));
  s.recent.length = Math.min(s.recent.length, RECENT_LIMIT);
}

/** A point of the findings plot; past the limit every other point is dropped (the first and the newest stay), so a long run keeps its shape. */
function addTimelinePoint(s: LiveSnapshot): void {
  const finished = Object.values(s.tally.outcomes).reduce((a, b) => a + b, 0);
  s.timeline.push({ finished, elapsedMs: s.elapsedMs, labels: { ...s.tally.labels } });
  if (s.timeline.length > TIMELINE_LIMIT) s.timeline = s.timeline.filter((_, i, all) => i % 2 === 0 || i === all.length - 1);
}

function rigOf(s: LiveSnapshot, rig: string): LiveRig {
  let entry = s.rigs.find((r) => r.rig === rig);
  if (!entry) {
    entry = { rig, running: 0, done: 0 };
    s.rigs.push(entry);
    s.rigs.sort((a, b) => a.rig.localeCompare(b.rig));
  }
  return entry;
}

/** The rigs of a fleet run in one line (`rig-a 2 running, 5 done | …`); empty on a local run. */
export function rigsLine(s: Pick<LiveSnapshot, 'rigs'>): string {
  return s.rigs.map((r) => `${r.rig} ${r.running} running, ${r.done} done`).join(' | ');
}

export function emptySnapshot(): LiveSnapshot {
  return {
    state: 'idle',
    runId: null,
    kind: null,
    page: null,
    nouns: { item: 'conversation', items: 'conversations' },
    name: null,
    configName: null,
    planned: 0,
    done: 0,
    elapsedMs: 0,
    budgetMs: null,
    finalStatus: null,
    error: null,
    active: [],
    feed: [],
    recent: [],
    headUnit: [],
    stopReason: null,
    rigs: [],
    tally: { outcomes: { pass: 0, fail: 0, inconclusive: 0, error: 0 }, labels: {}, turns: 0 },
    timeline: [],
  };
}

/**
 * How fast the run goes and how long it has left, from this start's finished items and elapsed time: items per
 * minute, and the time the remaining items take at that rate (capped by the time budget's remainder). null until an
 * item finished, or when nothing is left.
 */
export function liveRate(s: Pick<LiveSnapshot, 'tally' | 'elapsedMs' | 'planned' | 'done' | 'budgetMs'>): { perMinute: number | null; leftMs: number | null } {
  const finished = Object.values(s.tally.outcomes).reduce((a, b) => a + b, 0);
  if (finished === 0 || s.elapsedMs <= 0) return { perMinute: null, leftMs: null };
  const perMs = finished / s.elapsedMs;
  const remaining = Math.max(0, s.planned - s.done);
  const atRate = remaining / perMs;
  const budgetLeft = s.budgetMs === null ? Infinity : Math.max(0, s.budgetMs - s.elapsedMs);
  return { perMinute: perMs * 60_000, leftMs: remaining === 0 ? null : Math.min(atRate, budgetLeft) };
}
