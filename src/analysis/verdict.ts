import type { ConversationResult, ConversationVerdict, TurnLabel, TurnRecord } from '../domain/conversation.ts';
import { FAILURE_LABELS, LABEL_SEVERITY, type FailureLabel, type JudgeTier, type Severity } from '../domain/taxonomy.ts';
import { decidingConversationVerdict, decidingTurnVerdict } from '../judge/precedence.ts';

/**
 * How one conversation ends up in the statistics:
 * - `error`: the conversation did not complete (sut_error, simulator_error, judge_error status);
 *   counted in `errors`, neither pass nor fail;
 * - `fail`: a finding it is judged by (a `failOn` label among the deciding turn verdicts; by default
 *   every label), or the deciding verdict's C is below θ, or a scripted turn's expectation did not hold (suites);
 * - `inconclusive` (needs review): nothing failed it, but a turn no judge could decide is on record
 *   (unless `scoring.inconclusive: pass`), or no judge produced a decisive verdict on C;
 * - `pass`: the deciding verdict's C ≥ θ, no `failOn` finding and every turn decided.
 */
export type CombinedOutcome = 'pass' | 'fail' | 'inconclusive' | 'error';

/** What failed a conversation: its findings (the `failOn` gate), the score rule C ≥ θ, a scripted turn's expectation (suites), or several. */
export type FailRule = 'gate' | 'score' | 'expectation';

/** One labelled failure as every output shows it: turn number (1-based), label, severity, target, the judge that gave it, evidence. */
export interface Finding {
  turn: number;
  label: FailureLabel;
  severity: Severity;
  targetId: string | null;
  judge: string;
  evidence: string;
}

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
  /** every label of the deciding turn verdicts, in turn order */
  findings: Finding[];
  /** turn numbers (1-based) that no judge decided (all verdicts inconclusive or judge_error) */
  undecidedTurns: number[];
}

/**
 * The verdict that counts for a conversation: the deciding conversation verdict's pass flag (C ≥ θ),
 * overruled by the findings gate recorded with the result (`failOn`): any of those labels on a
 * deciding turn verdict fails the conversation whatever its C, even when no judge reached a verdict
 * on C. A conversation that nothing failed but that has an undecided turn is inconclusive (needs
 * review) under the recorded `inconclusive: review`. Results stored before these rules (no `failOn`,
 * no `inconclusive`) are judged as they were: by C alone, undecided turns ignored. A conversation whose
 * status is not `completed` has outcome `error`, but its deciding verdict, gate labels and findings are still returned.
 */
export function combinedVerdict(result: Pick<ConversationResult, 'status' | 'verdicts' | 'turns' | 'failOn' | 'inconclusive'>): CombinedVerdict {
  const deciding = decidingConversationVerdict(result.verdicts);
  const failOn = new Set(result.failOn ?? []);
  const findings = findingsOf(result.turns);
  const found = new Set(findings.map((f) => f.label));
  const gate = FAILURE_LABELS.filter((l) => failOn.has(l) && found.has(l));
  const undecidedTurns = result.turns.filter((turn) => decidingTurnVerdict(turn.verdicts) === null).map((turn) => turn.index + 1);
  const scorePass = deciding?.pass ?? null;
  const base = { verdict: deciding, judge: deciding?.judge ?? null, tier: deciding?.tier ?? null, score: deciding?.score ?? null, scorePass, gate, findings, undecidedTurns };
  if (result.status !== 'completed') return { outcome: 'error', ...base, failedBy: [] };
  const unmet = result.turns.some((turn) => turn.expectations?.met === false);
  const failedBy: FailRule[] = [...(gate.length > 0 ? (['gate'] as const) : []), ...(scorePass === false ? (['score'] as const) : []), ...(unmet ? (['expectation'] as const) : [])];
  if (failedBy.length > 0) return { outcome: 'fail', ...base, failedBy };
  const needsReview = result.inconclusive === 'review' && undecidedTurns.length > 0;
  return { outcome: deciding && !needsReview ? 'pass' : 'inconclusive', ...base, failedBy };
}

/** The labels that count on a turn: the deciding turn verdict's (src/judge/precedence.ts), so a failure two judges see counts once. */
export function turnLabels(turn: Pick<TurnRecord, 'verdicts'>): TurnLabel[] {
  return decidingTurnVerdict(turn.verdicts)?.labels ?? [];
}

/** The findings of a conversation: every label of its deciding turn verdicts, with its turn, severity and judge. */
export function findingsOf(turns: readonly Pick<TurnRecord, 'index' | 'verdicts'>[]): Finding[] {
  return turns.flatMap((turn) => {
    const deciding = decidingTurnVerdict(turn.verdicts);
    return (deciding?.labels ?? []).map((l) => ({ turn: turn.index + 1, label: l.label, severity: LABEL_SEVERITY[l.label], targetId: l.targetId, judge: deciding!.judge, evidence: l.evidence }));
  });
}

/** A finding as one readable line: "turn 3: constraint_missed [t1] (major, oracle): evidence". */
export function findingLine(finding: Finding): string {
  return `turn ${finding.turn}: ${finding.label}${finding.targetId ? ` [${finding.targetId}]` : ''} (${finding.severity}, ${finding.judge}): ${finding.evidence}`;
}
