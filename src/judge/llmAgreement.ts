import type { ConversationResult, TurnVerdict } from '../domain/conversation.ts';
import type { FailureLabel, JudgeTier } from '../domain/taxonomy.ts';

/** One turn where two judge tiers that both labelled it disagree; listed in the report for human review. */
export interface TierDisagreement {
  conversationKey: string;
  turnIndex: number;
  tiers: [JudgeTier, JudgeTier];
  /** label@target only the first tier gave */
  onlyFirst: string[];
  /** label@target only the second tier gave */
  onlySecond: string[];
  userText: string;
  replyText: string;
}

function labelKeys(verdict: TurnVerdict): Set<string> {
  return new Set(verdict.labels.map((l) => `${l.label}${l.targetId ? `@${l.targetId}` : ''}`));
}

/**
 * Compares the oracle and the LLM tier turn by turn. Both verdicts stay in the record; a turn counts
 * only when both tiers actually judged it (an inconclusive or judge_error verdict is not a disagreement).
 */
export function listTierDisagreements(result: ConversationResult, first: JudgeTier = 'oracle', second: JudgeTier = 'llm'): TierDisagreement[] {
  const out: TierDisagreement[] = [];
  for (const turn of result.turns) {
    const a = turn.verdicts.find((v) => v.tier === first && v.outcome === 'judged');
    const b = turn.verdicts.find((v) => v.tier === second && v.outcome === 'judged');
    if (!a || !b) continue;
    const ka = labelKeys(a);
    const kb = labelKeys(b);
    const onlyFirst = [...ka].filter((k) => !kb.has(k)).sort();
    const onlySecond = [...kb].filter((k) => !ka.has(k)).sort();
    if (onlyFirst.length || onlySecond.length) {
      out.push({ conversationKey: result.spec.key, turnIndex: turn.index, tiers: [first, second], onlyFirst, onlySecond, userText: turn.utterance.text, replyText: turn.reply?.text ?? '' });
    }
  }
  return out;
}

/** Agreement counts over many conversations, per failure label: both, only the first tier, only the second. */
export function tierAgreementByLabel(results: readonly ConversationResult[], first: JudgeTier = 'oracle', second: JudgeTier = 'llm'): Partial<Record<FailureLabel, { both: number; onlyFirst: number; onlySecond: number }>> {
  const table: Partial<Record<FailureLabel, { both: number; onlyFirst: number; onlySecond: number }>> = {};
  for (const result of results) {
    for (const turn of result.turns) {
      const a = turn.verdicts.find((v) => v.tier === first && v.outcome === 'judged');
      const b = turn.verdicts.find((v) => v.tier === second && v.outcome === 'judged');
      if (!a || !b) continue;
      const ka = labelKeys(a);
      const kb = labelKeys(b);
      for (const key of new Set([...ka, ...kb])) {
        const label = key.split('@')[0] as FailureLabel;
        const row = (table[label] ??= { both: 0, onlyFirst: 0, onlySecond: 0 });
        if (ka.has(key) && kb.has(key)) row.both++;
        else if (ka.has(key)) row.onlyFirst++;
        else row.onlySecond++;
      }
    }
  }
  return table;
}
