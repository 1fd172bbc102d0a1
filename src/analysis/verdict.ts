import type { ConversationResult, ConversationVerdict, TurnLabel, TurnRecord, TurnVerdict } from '../domain/conversation.ts';
import type { JudgeTier } from '../domain/taxonomy.ts';

/**
 * How one conversation ends up in the statistics:
 * - `error`: the conversation did not complete (sut_error, simulator_error, judge_error status);
 *   counted in `errors`, neither pass nor fail;
 * - `pass` / `fail`: the deciding verdict's pass flag;
 * - `inconclusive`: no tier produced a decisive verdict; reported on its own, neither pass nor fail.
 */
export type CombinedOutcome = 'pass' | 'fail' | 'inconclusive' | 'error';

export interface CombinedVerdict {
  outcome: CombinedOutcome;
  /** the verdict that decided, null when none was decisive */
  verdict: ConversationVerdict | null;
  tier: JudgeTier | null;
  /** C of the deciding verdict */
  score: number | null;
}

/** Tier precedence: the oracle's deterministic verdict first, then LLM tiers in the order they ran. */
function byPrecedence<V extends { tier: JudgeTier }>(verdicts: readonly V[]): V[] {
  return [...verdicts.filter((v) => v.tier === 'oracle'), ...verdicts.filter((v) => v.tier !== 'oracle')];
}

function isDecisive(verdict: ConversationVerdict): boolean {
  return verdict.outcome === 'judged' && verdict.pass !== null;
}

/**
 * The conversation verdict that counts: the oracle verdict when it is decisive (judged, with a
 * pass flag), else the first decisive LLM verdict; if no verdict is decisive the outcome is
 * `inconclusive`. A conversation whose status is not `completed` has outcome `error`, but its
 * deciding verdict (if any) is still returned for its dimension scores.
 */
export function combinedVerdict(result: Pick<ConversationResult, 'status' | 'verdicts'>): CombinedVerdict {
  const deciding = byPrecedence(result.verdicts).find(isDecisive) ?? null;
  const base = { verdict: deciding, tier: deciding?.tier ?? null, score: deciding?.score ?? null };
  if (result.status !== 'completed') return { outcome: 'error', ...base };
  if (!deciding) return { outcome: 'inconclusive', ...base };
  return { outcome: deciding.pass ? 'pass' : 'fail', ...base };
}

/**
 * The turn verdict whose labels count, by the same precedence: the oracle's when it judged the
 * turn, else the first LLM tier that judged it. Counting one tier per turn keeps a failure seen
 * by two tiers from being counted twice.
 */
export function decidingTurnVerdict(turn: Pick<TurnRecord, 'verdicts'>): TurnVerdict | null {
  return byPrecedence(turn.verdicts).find((v) => v.outcome === 'judged') ?? null;
}

export function turnLabels(turn: Pick<TurnRecord, 'verdicts'>): TurnLabel[] {
  return decidingTurnVerdict(turn)?.labels ?? [];
}
