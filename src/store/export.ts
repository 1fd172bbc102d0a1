import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { ResultStore } from './store.ts';
import { holdsConversations } from '../domain/run-items.ts';

/**
 * Streams a run as JSONL, in plan order: one ConversationResult per line for a run of conversations (dialogue, suite, live), one
 * `{ key, item, outcome, result }` per stored item for an item-based run (manual-QA, …). Respects
 * backpressure, so exporting a large run holds one batch of conversations in memory at a time.
 * Returns the number of lines written; the caller owns (and ends) the stream.
 */
export async function exportJsonl(store: ResultStore, runId: string, out: Writable): Promise<number> {
  let lines = 0;
  const run = store.getRun(runId);
  const rows: Iterable<unknown> =
    !run || holdsConversations(run)
      ? store.conversations(runId)
      : store.itemResults(runId, { done: true }).map(({ key, item, outcome, result }) => ({ key, item, outcome, result }));
  for (const result of rows) {
    if (!out.write(`${JSON.stringify(result)}\n`)) await once(out, 'drain');
    lines += 1;
  }
  return lines;
}
