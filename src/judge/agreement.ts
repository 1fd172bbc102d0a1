import type { ConversationResult, TurnVerdict } from '../domain/conversation.ts';
import type { FailureLabel } from '../domain/taxonomy.ts';

/** One turn where two judges that both judged it gave different labels; listed in the report for human review. */
export interface JudgeDisagreement {
  conversationKey: string;
  turnIndex: number;
  /** the two judges' references, in precedence order */
  judges: [string, string];
  /** label@target only the first judge gave */
  onlyFirst: string[];
  /** label@target only the second judge gave */
  onlySecond: string[];
  userText: string;
  replyText: string;
}

function labelKeys(verdict: TurnVerdict): Set<string> {
  return new Set(verdict.labels.map((l) => `${l.label}${l.targetId ? `@${l.targetId}` : ''}`));
}

/** Every pair of judges (in precedence order) that both judged the turn; an inconclusive or judge_error verdict takes part in no pair. */
function judgedPairs(verdicts: readonly TurnVerdict[]): Array<[TurnVerdict, TurnVerdict]> {
  const judged = verdicts.filter((v) => v.outcome === 'judged');
  return judged.flatMap((a, i) => judged.slice(i + 1).map((b) => [a, b] as [TurnVerdict, TurnVerdict]));
}

/**
 * Compares the judges turn by turn, every pair of them (oracle and each model judge, and model
 * judges with each other). All verdicts stay in the record; a turn counts for a pair only when both
 * judges actually judged it.
 */
export function listJudgeDisagreements(result: ConversationResult): JudgeDisagreement[] {
  const out: JudgeDisagreement[] = [];
  for (const turn of result.turns) {
    for (const [a, b] of judgedPairs(turn.verdicts)) {
      const ka = labelKeys(a);
      const kb = labelKeys(b);
      const onlyFirst = [...ka].filter((k) => !kb.has(k)).sort();
      const onlySecond = [...kb].filter((k) => !ka.has(k)).sort();
      if (onlyFirst.length || onlySecond.length) {
        out.push({ conversationKey: result.spec.key, turnIndex: turn.index, judges: [a.judge, b.judge], onlyFirst, onlySecond, userText: turn.utterance.text, replyText: turn.reply?.text ?? '' });
      }
    }
  }
  return out;
}

export type LabelAgreement = Partial<Record<FailureLabel, { both: number; onlyFirst: number; onlySecond: number }>>;

/**
 * Agreement counts over many conversations for every pair of judges ("first vs second", in
 * precedence order), per failure label: both gave it, only the first, only the second.
 */
export function judgeAgreementByLabel(results: readonly ConversationResult[]): Record<string, LabelAgreement> {
  const pairs: Record<string, LabelAgreement> = {};
  for (const result of results) {
    for (const turn of result.turns) {
      for (const [a, b] of judgedPairs(turn.verdicts)) {
        const table = (pairs[`${a.judge} vs ${b.judge}`] ??= {});
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
  }
  return pairs;
}
