import type { RunEndStatus } from './resume.ts';
import type { ConversationResult, ConversationSpec, TurnRecord } from '../domain/conversation.ts';
import type { HeadUnitNotice } from './run-monitor.ts';

/**
 * Live events a campaign emits while it runs; the CLI progress bar, the bench server's
 * socket.io feed and tests all consume the same stream.
 */
export type CampaignEvent =
  /** nouns: what the kind calls its items (conversation, question, task trial), for the live views; page: the app page its runs open on (src/run/kind-view.ts) */
  | { type: 'run_started'; runId: string; name: string; kind?: string; page?: string; nouns?: { item: string; items: string }; planned: number; remaining: number; budgetMs: number | null }
  | { type: 'conversation_started'; runId: string; key: string; spec: ConversationSpec }
  /** a fleet worker's rig took the conversation (again on another rig when its first one stalled) */
  | { type: 'conversation_rig'; runId: string; key: string; rig: string }
  | { type: 'turn'; runId: string; key: string; turn: TurnRecord; activeStrategies: string[] }
  | { type: 'conversation_finished'; runId: string; key: string; result: ConversationResult }
  /** an item of a kind other than dialogue starts (label: what the live view shows, e.g. the question) */
  | { type: 'item_started'; runId: string; key: string; label: string }
  /** an item of a kind other than dialogue is stored: its outcome as the live view counts it, and the kind's own word for it */
  | { type: 'item_finished'; runId: string; key: string; outcome: 'pass' | 'fail' | 'inconclusive' | 'error'; word: string }
  | { type: 'progress'; runId: string; done: number; planned: number; elapsedMs: number; budgetMs: number | null }
  /** the head unit's link: connected, disconnected, replaced (both addresses in the message), paused, resumed, stopped */
  | ({ type: 'headunit'; runId: string } & HeadUnitNotice)
  /** reason: why the run stopped by itself (the head unit did not come back) */
  | { type: 'run_finished'; runId: string; status: RunEndStatus; done: number; planned: number; reason?: string };

export type CampaignEventListener = (event: CampaignEvent) => void;
