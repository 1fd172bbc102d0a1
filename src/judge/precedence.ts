import type { ConversationVerdict, TurnVerdict } from '../domain/conversation.ts';

/**
 * The one precedence rule: judges decide in the order the campaign's `judges:` lists them (or
 * `--judge` gives them), and every turn and conversation records its verdicts in that order. The
 * first verdict that decided wins; the others stay on record for comparison. The conversation loop
 * (target updates, strategy feedback), the statistics, the store's outcome and label columns and the
 * report all ask these two functions.
 */

/** The turn verdict whose labels count and whose target updates drive the loop: the first judge that judged the turn. */
export function decidingTurnVerdict<V extends Pick<TurnVerdict, 'outcome'>>(verdicts: readonly V[]): V | null {
  return verdicts.find(decidesTurn) ?? null;
}

const decidesTurn = (verdict: Pick<TurnVerdict, 'outcome'>) => verdict.outcome === 'judged';

/**
 * The same deciding turn verdict from verdicts still arriving (in precedence order): it waits for each in turn and
 * stops at the first that judged, so the loop can go on while the judges after it are still working (pipelining,
 * src/kinds/dialogue/conversation.ts). Always the verdict decidingTurnVerdict would pick once all had arrived.
 */
export async function awaitDecidingTurnVerdict<V extends Pick<TurnVerdict, 'outcome'>>(arriving: readonly Promise<V>[]): Promise<V | null> {
  for (const verdict of arriving) {
    const settled = await verdict;
    if (decidesTurn(settled)) return settled;
  }
  return null;
}

/** The conversation verdict that decides pass or fail by C: the first judge whose verdict is judged and carries a pass flag. */
export function decidingConversationVerdict<V extends Pick<ConversationVerdict, 'outcome' | 'pass'>>(verdicts: readonly V[]): V | null {
  return verdicts.find((v) => v.outcome === 'judged' && v.pass !== null) ?? null;
}
