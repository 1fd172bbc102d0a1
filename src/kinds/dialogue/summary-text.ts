import { describeFailOn, type FailureLabel } from '../../domain/taxonomy.ts';

/** What `icabench run` and `icabench compare` print about a dialogue run's verdicts. */

/** The verdict rule in one phrase for the command line: "failOn every label failed 24" or "no findings gate, failOn []". */
export function gateText(failOn: readonly FailureLabel[], failedByGate: number): string {
  return failOn.length ? `failOn ${describeFailOn(failOn)} failed ${failedByGate}` : 'no findings gate, failOn []';
}

/** Conversations with findings and those that need review, for the command line. */
export function findingsText(run: { conversationsWithFindings: number; findingsRate: number | null; inconclusive: number }): string {
  const pct = run.findingsRate === null ? 'n/a' : `${(run.findingsRate * 100).toFixed(1)}%`;
  return `conversations with findings ${run.conversationsWithFindings} (${pct}), inconclusive (needs review) ${run.inconclusive}`;
}
