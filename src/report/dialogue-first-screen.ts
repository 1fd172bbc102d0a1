import type { ConversationResult } from '../domain/conversation.ts';
import { describeFailOn, FAILURE_LABELS, LABEL_SEVERITY, SEVERITIES, type FailureLabel } from '../domain/taxonomy.ts';
import type { RunSummary } from '../analysis/profile.ts';
import { findingsOf, type CombinedVerdict } from '../analysis/verdict.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';
import { conversationAnchor, testedFromFacts, type FirstScreen, type InjectedFaults, type TopFinding } from './first-screen.ts';
import type { ConversationCollector } from './html.ts';

/** What the run's kind knows of the unit under test from its stored config: how to name it, and the faults switched on. */
export interface UnitUnderTest {
  /** the unit as the config names it, for a unit that announced no name */
  unit: string;
  /** the faults it commits on purpose, in words and in a few words; null: none */
  faults: InjectedFaults | null;
}

/** The first conversation (within the report's drill-down) that shows a label, and how many conversations show it. */
interface LabelExample {
  conversations: number;
  example: { key: string; turn: number; evidence: string } | null;
}

/**
 * The conversations of a run, read once: per failure label how many conversations show it and the first one that does.
 * Counted over every stored conversation, as the summary's failureTypes are (a conversation that errored after a
 * labelled turn still shows that label), so a label's count never exceeds `conversations`.
 */
export interface FindingExamples {
  conversations: number;
  completed: number;
  labels: Map<FailureLabel, LabelExample>;
}

/** Collects the first screen's evidence as the report's one pass over the conversations goes by. */
export function findingExamples(drillDownLimit: number): ConversationCollector<FindingExamples> {
  const labels = new Map<FailureLabel, LabelExample>();
  let seen = 0;
  let completed = 0;
  return {
    add(result: ConversationResult, combined?: CombinedVerdict) {
      seen += 1;
      if (result.status === 'completed') completed += 1;
      const firstByLabel = new Map<FailureLabel, { turn: number; evidence: string }>();
      for (const finding of combined?.findings ?? findingsOf(result.turns)) if (!firstByLabel.has(finding.label)) firstByLabel.set(finding.label, finding);
      for (const [label, finding] of firstByLabel) {
        const entry = labels.get(label) ?? { conversations: 0, example: null };
        entry.conversations += 1;
        // only a conversation with its turns in the report can be the evidence a link opens
        if (!entry.example && seen <= drillDownLimit) entry.example = { key: result.spec.key, turn: finding.turn, evidence: finding.evidence };
        labels.set(label, entry);
      }
    },
    finish: () => ({ conversations: seen, completed, labels }),
  };
}

const pct = (part: number, whole: number) => (whole === 0 ? 'n/a' : `${((part / whole) * 100).toFixed(1)} %`);
const words = (label: string) => label.replace(/_/g, ' ');

/** The verdict of a dialogue run in plain words, with the rule that made it. */
function dialogueVerdict(summary: RunSummary): FirstScreen['verdict'] {
  const n = summary.conversations;
  const errors = summary.errors.sut_error + summary.errors.simulator_error + summary.errors.judge_error;
  const { failOn, scoreOnly } = summary.gate;
  const rule = failOn.length
    ? ` A conversation fails when a judge finds ${describeFailOn(failOn) === 'every label' ? 'any failure' : `a ${describeFailOn(failOn)} failure`} in it, whatever its score C; by the score alone (C ≥ θ) ${scoreOnly.failed} would fail.`
    : ' The verdict is the score alone (C ≥ θ, as in the paper).';
  const rest = [`${summary.passed} passed`, ...(summary.inconclusive ? [`${summary.inconclusive} need review (a turn no judge could decide)`] : []), ...(errors ? [`${errors} did not complete`] : [])].join(', ');
  if (n === 0) return { tone: 'error', headline: 'nothing was tested', text: 'No conversation was stored: nothing was tested.' };
  if (summary.failed > 0) {
    const headline = `${summary.failed} of ${n} conversations failed (${pct(summary.failed, n)})`;
    return { tone: 'fail', headline, text: `${headline}; ${rest}.${rule}` };
  }
  if (errors === n) return { tone: 'error', headline: `none of the ${n} conversations completed`, text: `None of the ${n} conversations completed: the head unit was not reached or failed on every one.` };
  if (summary.inconclusive > 0) {
    const headline = `no conversation failed, ${summary.inconclusive} of ${n} need review`;
    return { tone: 'inconclusive', headline, text: `No conversation failed, but ${summary.inconclusive} of ${n} need review: no judge could decide some of their turns; ${rest}.` };
  }
  const headline = `all ${summary.passed} decided conversations passed`;
  return { tone: 'pass', headline, text: `All ${summary.passed} decided conversations passed${errors ? ` (${errors} did not complete)` : ''}: no judge found a failure.${rule}` };
}

/** The three most important failure types: the gravest first, then the most widespread; each with one conversation as its evidence. */
function topFindings(examples: FindingExamples): TopFinding[] {
  const rank = (label: FailureLabel) => SEVERITIES.indexOf(LABEL_SEVERITY[label]);
  return FAILURE_LABELS.filter((label) => (examples.labels.get(label)?.conversations ?? 0) > 0)
    .sort((a, b) => rank(a) - rank(b) || examples.labels.get(b)!.conversations - examples.labels.get(a)!.conversations)
    .slice(0, 3)
    .map((label) => {
      const { conversations, example } = examples.labels.get(label)!;
      return {
        title: words(label),
        detail: `(${LABEL_SEVERITY[label]}) in ${conversations} of ${examples.conversations} conversations (${pct(conversations, examples.conversations)})`,
        short: `${words(label)} in ${conversations} conversation${conversations === 1 ? '' : 's'}`,
        quote: example ? `turn ${example.turn}: ${example.evidence}` : '',
        anchor: example ? conversationAnchor(example.key) : 'conversations',
        anchorLabel: example ? `conversation ${example.key}, turn ${example.turn}` : 'the conversation list',
        item: example?.key ?? null,
      };
    });
}

/** The first screen of a dialogue run's report (suites and live sessions too), from the store: record, facts and conversations. */
export function dialogueFirstScreen(store: ResultStore, record: RunRecord, summary: RunSummary, examples: FindingExamples, unit: UnitUnderTest): FirstScreen {
  const facts = testedFromFacts(store, record);
  return {
    tested: {
      unit: facts.unit ?? unit.unit,
      build: facts.build,
      kind: `${record.kind}: ${summary.conversations} conversations, ${record.mode} mode`,
      method: summary.preset?.statement ?? 'not recorded',
      judges: facts.judges ?? 'not recorded',
      faults: unit.faults,
    },
    verdict: dialogueVerdict(summary),
    findings: topFindings(examples),
    caveat: null,
    noFindings: summary.conversations === 0 ? 'No conversation was stored.' : examples.completed === 0 ? 'No conversation completed, so none could show a failure.' : 'No judge found a failure in any conversation.',
  };
}
