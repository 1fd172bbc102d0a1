import type { ConversationResult, ConversationVerdict, TurnLabel, TurnRecord } from '../domain/conversation.ts';
import { FAILURE_LABELS, type FailureLabel, type JudgeTier } from '../domain/taxonomy.ts';
import { decidingConversationVerdict, decidingTurnVerdict } from '../judge/precedence.ts';

/**
 * How one conversation ends up in the statistics:
 * - `error`: the conversation did not complete (sut_error, simulator_error, judge_error status);
 *   counted in `errors`, neither pass nor fail;
 * - `fail`: the critical-failure gate fired (a `failOn` label among the deciding turn verdicts),
 *   or the deciding verdict's C is below θ, or a scripted turn's expectation did not hold (suites);
 * - `pass`: the deciding verdict's C ≥ θ and the gate did not fire;
 * - `inconclusive`: no judge produced a decisive verdict and the gate did not fire; reported on its
 *   own, neither pass nor fail.
 */
export type CombinedOutcome = 'pass' | 'fail' | 'inconclusive' | 'error';

/** What failed a conversation: the critical-failure gate, the score rule C ≥ θ, a scripted turn's expectation (suites), or several. */
export type FailRule = 'gate' | 'score' | 'expectation';

export interface CombinedVerdict {
  outcome: CombinedOutcome;
  /** the conversation verdict that decided by C (src/judge/precedence.ts), null when none was decisive */
  verdict: ConversationVerdict | null;
  /** the reference of that verdict's judge */
  judge: string | null;
  tier: JudgeTier | null;
  /** C of the deciding verdict */
  score: number | null;
  /** the paper's verdict by C alone (C ≥ θ of the deciding verdict); null when none was decisive */
  scorePass: boolean | null;
  /** the `failOn` labels the deciding turn verdicts gave, in taxonomy order; the gate fired when not empty */
  gate: FailureLabel[];
  /** the rules that failed a completed conversation (empty unless the outcome is fail) */
  failedBy: FailRule[];
}

/**
 * The verdict that counts for a conversation: the deciding conversation verdict's pass flag (C ≥ θ),
 * overruled by the critical-failure gate recorded with the result (`failOn`): any of those labels on
 * a deciding turn verdict fails the conversation whatever its C, even when no judge reached a verdict
 * on C. A result without `failOn` (stored before the gate existed) is judged by C alone, as it was.
 * A conversation whose status is not `completed` has outcome `error`, but its deciding verdict and
 * gate labels are still returned.
 */
export function combinedVerdict(result: Pick<ConversationResult, 'status' | 'verdicts' | 'turns' | 'failOn'>): CombinedVerdict {
  const deciding = decidingConversationVerdict(result.verdicts);
  const failOn = new Set(result.failOn ?? []);
  const found = new Set(result.turns.flatMap((turn) => turnLabels(turn).map((l) => l.label)));
  const gate = FAILURE_LABELS.filter((l) => failOn.has(l) && found.has(l));
  const scorePass = deciding?.pass ?? null;
  const base = { verdict: deciding, judge: deciding?.judge ?? null, tier: deciding?.tier ?? null, score: deciding?.score ?? null, scorePass, gate };
  if (result.status !== 'completed') return { outcome: 'error', ...base, failedBy: [] };
  const unmet = result.turns.some((turn) => turn.expectations?.met === false);
  const failedBy: FailRule[] = [...(gate.length > 0 ? (['gate'] as const) : []), ...(scorePass === false ? (['score'] as const) : []), ...(unmet ? (['expectation'] as const) : [])];
  if (failedBy.length > 0) return { outcome: 'fail', ...base, failedBy };
  return { outcome: deciding ? 'pass' : 'inconclusive', ...base, failedBy };
}

/** The labels that count on a turn: the deciding turn verdict's (src/judge/precedence.ts), so a failure two judges see counts once. */
export function turnLabels(turn: Pick<TurnRecord, 'verdicts'>): TurnLabel[] {
  return decidingTurnVerdict(turn.verdicts)?.labels ?? [];
}
