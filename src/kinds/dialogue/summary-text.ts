import { describeFailOn, type FailureLabel } from '../../domain/taxonomy.ts';
import type { RunSummary } from '../../analysis/profile.ts';

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

/** The figures of a finished dialogue run in plain words, for `icabench run` (the verdict line follows it). */
export function runFiguresLine(runId: string, status: string, summary: RunSummary): string {
  const pct = (rate: number | null) => (rate === null ? 'n/a' : `${(rate * 100).toFixed(1)} %`);
  const errors = summary.errors.sut_error + summary.errors.simulator_error + summary.errors.judge_error;
  return (
    `run ${runId} ${status}: ${summary.conversations} conversations, ${summary.failed} failed (fail rate ${pct(summary.failRate)}), ${summary.passed} passed, ` +
    `${summary.inconclusive} need review, ${errors} did not complete; ${summary.conversationsWithFindings} with findings (${pct(summary.findingsRate)}); ` +
    `fail rate by the score C alone ${pct(summary.gate.scoreOnly.failRate)}; mean score C ${summary.meanScore?.toFixed(3) ?? 'n/a'}; ` +
    `${summary.uniqueFailureTypesPerConversation.toFixed(2)} distinct failure types per conversation`
  );
}
