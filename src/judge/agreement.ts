import { z } from 'zod';
import { cohensKappa } from '../domain/stats.ts';
import type { ConversationResult, TurnVerdict } from '../domain/conversation.ts';
import { DIMENSIONS, FAILURE_LABELS, type Dimension, type FailureLabel } from '../domain/taxonomy.ts';

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

export const JudgePairAgreementSchema = z.object({
  /** "first vs second", in precedence order */
  pair: z.string(),
  judges: z.tuple([z.string(), z.string()]),
  /** turns both judged */
  turns: z.number().int(),
  /** per failure label over those turns, "gave it on the turn" (any target) as a yes/no rating: counts and Cohen's κ (null when no turn was compared) */
  labels: z.record(
    z.enum(FAILURE_LABELS),
    z.object({ both: z.number().int(), onlyFirst: z.number().int(), onlySecond: z.number().int(), neither: z.number().int(), kappa: z.number().nullable() }),
  ),
  /** per rubric dimension over conversations both scored: share of equal scores and quadratic-weighted κ (null without items) */
  dimensions: z.record(z.enum(DIMENSIONS), z.object({ items: z.number().int(), exact: z.number().nullable(), kappa: z.number().nullable() })),
});
export type JudgePairAgreement = z.infer<typeof JudgePairAgreementSchema>;

/**
 * Agreement of every pair of judges over a run, fed one conversation at a time: Cohen's κ per
 * failure label over the turns both judged, and per rubric dimension the exact agreement and the
 * quadratic-weighted κ over the conversations both scored (conversation verdicts with outcome judged).
 */
export function judgeAgreementCollector() {
  type Counts = { both: number; onlyFirst: number; onlySecond: number; neither: number };
  const pairs = new Map<string, { judges: [string, string]; turns: number; labels: Map<FailureLabel, Counts>; scores: Map<Dimension, [number[], number[]]> }>();
  const entry = (a: string, b: string) => {
    const key = `${a} vs ${b}`;
    let found = pairs.get(key);
    if (!found) pairs.set(key, (found = { judges: [a, b], turns: 0, labels: new Map(FAILURE_LABELS.map((l) => [l, { both: 0, onlyFirst: 0, onlySecond: 0, neither: 0 }])), scores: new Map(DIMENSIONS.map((d) => [d, [[], []]])) }));
    return found;
  };
  return {
    add(result: ConversationResult) {
      for (const turn of result.turns) {
        for (const [a, b] of judgedPairs(turn.verdicts)) {
          const pair = entry(a.judge, b.judge);
          pair.turns++;
          const la = new Set(a.labels.map((l) => l.label));
          const lb = new Set(b.labels.map((l) => l.label));
          for (const [label, counts] of pair.labels) {
            if (la.has(label) && lb.has(label)) counts.both++;
            else if (la.has(label)) counts.onlyFirst++;
            else if (lb.has(label)) counts.onlySecond++;
            else counts.neither++;
          }
        }
      }
      const judged = result.verdicts.filter((v) => v.outcome === 'judged');
      judged.forEach((a, i) =>
        judged.slice(i + 1).forEach((b) => {
          const pair = entry(a.judge, b.judge);
          for (const dimension of DIMENSIONS) {
            const sa = a.dimensions[dimension]?.score;
            const sb = b.dimensions[dimension]?.score;
            if (sa === undefined || sb === undefined) continue;
            const [first, second] = pair.scores.get(dimension)!;
            first.push(sa);
            second.push(sb);
          }
        }),
      );
    },
    finish(): JudgePairAgreement[] {
      return [...pairs].map(([key, pair]) => ({
        pair: key,
        judges: pair.judges,
        turns: pair.turns,
        labels: Object.fromEntries(
          [...pair.labels].map(([label, c]) => {
            const n = c.both + c.onlyFirst + c.onlySecond + c.neither;
            const first = [...Array(c.both + c.onlyFirst).fill(1), ...Array(c.onlySecond + c.neither).fill(0)];
            const second = [...Array(c.both).fill(1), ...Array(c.onlyFirst).fill(0), ...Array(c.onlySecond).fill(1), ...Array(c.neither).fill(0)];
            return [label, { ...c, kappa: n === 0 ? null : cohensKappa(first, second, { categories: [0, 1] }) }];
          }),
        ) as JudgePairAgreement['labels'],
        dimensions: Object.fromEntries(
          [...pair.scores].map(([dimension, [first, second]]) => [
            dimension,
            {
              items: first.length,
              exact: first.length === 0 ? null : first.filter((s, i) => s === second[i]).length / first.length,
              kappa: first.length === 0 ? null : cohensKappa(first, second, { weights: 'quadratic', categories: [0, 1, 2] }),
            },
          ]),
        ) as JudgePairAgreement['dimensions'],
      }));
    },
  };
}

/** Disagreement turns the bench app lists for review; the rest are counted. */
export const REVIEW_LIMIT = 500;

/** What the bench app shows for judge-vs-judge review: agreement per pair and the turns where two judges part. */
export interface JudgeAgreementView {
  pairs: JudgePairAgreement[];
  disagreements: JudgeDisagreement[];
  /** all disagreements, listed or not */
  totalDisagreements: number;
}

export function judgeAgreementView(conversations: Iterable<ConversationResult>, limit = REVIEW_LIMIT): JudgeAgreementView {
  const agreement = judgeAgreementCollector();
  const disagreements: JudgeDisagreement[] = [];
  let totalDisagreements = 0;
  for (const result of conversations) {
    agreement.add(result);
    for (const d of listJudgeDisagreements(result)) {
      totalDisagreements++;
      if (disagreements.length < limit) disagreements.push(d);
    }
  }
  return { pairs: agreement.finish(), disagreements, totalDisagreements };
}
