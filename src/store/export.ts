import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { ResultStore } from './store.ts';

/**
 * Streams a run as JSONL: one ConversationResult per line, in plan order. Respects backpressure,
 * so exporting a large run holds one batch of conversations in memory at a time.
 * Returns the number of lines written; the caller owns (and ends) the stream.
 */
export async function exportJsonl(store: ResultStore, runId: string, out: Writable): Promise<number> {
  let lines = 0;
  for (const result of store.conversations(runId)) {
    if (!out.write(`${JSON.stringify(result)}\n`)) await once(out, 'drain');
    lines += 1;
  }
  return lines;
}
