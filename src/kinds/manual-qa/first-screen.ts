import { SEVERITIES, type Severity } from '../../domain/taxonomy.ts';
import { MANUAL_METRICS, metricFails, type ManualMetric } from '../../manual/model.ts';
import { anchorOf, testedFromFacts, type FirstScreen, type InjectedFaults, type TopFinding } from '../../report/first-screen.ts';
import { describeHeadUnit, HeadUnitConfigSchema } from '../../run/headunit-config.ts';
import type { ResultStore } from '../../store/store.ts';
import type { RunRecord } from '../../store/types.ts';
import { ManualFaultConfigSchema, manualFaultRates } from '../../headunit/reference/manual-skill.ts';
import type { ManualQaRow, ManualQaRunSummary } from './results.ts';

/** The anchor of a question's row (and its fact-level drill-down) in a manual-QA report.html. */
export const questionAnchor = (key: string) => anchorOf('q', key);

/**
 * What a failed metric means for the driver, and how grave it is: a warning left out can hurt someone, a wrong or
 * missing fact misleads, the rest make an answer worse to use. The first screen ranks findings by this.
 */
const METRIC_FINDINGS: Record<ManualMetric, { title: string; severity: Severity }> = {
  risk_awareness: { title: 'safety warning left out', severity: 'critical' },
  correctness: { title: 'wrong or invented statements', severity: 'major' },
  completeness_hard: { title: 'essential facts missing', severity: 'major' },
  completeness_soft: { title: 'steps or details missing', severity: 'minor' },
  relevance: { title: 'off-topic content', severity: 'minor' },
  confidence: { title: 'hedged answer', severity: 'minor' },
  actionability: { title: 'nothing the driver can act on', severity: 'minor' },
};

/** One kind of finding over the answers: how many show it, and the first (with its drill-down in the report) that does. */
interface FindingTally {
  title: string;
  what: string;
  severity: Severity;
  answers: number;
  example: { key: string; quote: string } | null;
}

/** Why an answer shows a finding of this kind, quoted; null when it does not. */
type FindingCheck = (row: ManualQaRow) => string | null;

const FINDING_CHECKS: ReadonlyArray<{ title: string; what: string; severity: Severity; check: FindingCheck }> = [
  {
    title: 'answer addresses the bench, not the driver',
    what: 'manipulation',
    severity: 'critical',
    check: ({ result }) => (result?.manipulation?.length ? `${result.manipulation[0].field}: ${result.manipulation[0].text}` : null),
  },
  ...MANUAL_METRICS.map((metric) => ({
    ...METRIC_FINDINGS[metric],
    what: metric,
    check: ({ result }: ManualQaRow) => {
      const value = result?.evaluations[0]?.metrics[metric];
      return value && metricFails(value) ? `${metric} ${value.status === 'judged' ? value.value.toFixed(2) : ''}: ${value.reason}` : null;
    },
  })),
];

/** The findings of the answers: each kind counted over every answer; its example the first answer with a drill-down. */
function tallyFindings(rows: readonly ManualQaRow[], drillDownLimit: number): FindingTally[] {
  return FINDING_CHECKS.map(({ title, what, severity, check }) => {
    const tally: FindingTally = { title, what, severity, answers: 0, example: null };
    rows.forEach((row, index) => {
      const why = check(row);
      if (why === null) return;
      tally.answers += 1;
      if (!tally.example && index < drillDownLimit) tally.example = { key: row.item.id, quote: `${row.item.id} "${row.item.question}": ${why}` };
    });
    return tally;
  });
}

const pct = (part: number, whole: number) => (whole === 0 ? 'n/a' : `${((part / whole) * 100).toFixed(1)} %`);

/** The three most important findings: the gravest first, then the most widespread. */
function topFindings(rows: readonly ManualQaRow[], answered: number, drillDownLimit: number): TopFinding[] {
  const rank = (t: FindingTally) => SEVERITIES.indexOf(t.severity);
  return tallyFindings(rows, drillDownLimit)
    .filter((t) => t.answers > 0)
    .sort((a, b) => rank(a) - rank(b) || b.answers - a.answers)
    .slice(0, 3)
    .map((t) => ({
      title: t.title,
      detail: `(${t.severity}, ${t.what}) in ${t.answers} of ${answered} answers (${pct(t.answers, answered)})`,
      short: `${t.title} in ${t.answers} answer${t.answers === 1 ? '' : 's'}`,
      quote: t.example?.quote ?? '',
      anchor: t.example ? questionAnchor(t.example.key) : 'questions',
      anchorLabel: t.example ? `question ${t.example.key}` : 'the question list',
      item: t.example?.key ?? null,
    }));
}

/** The manual-QA verdict in plain words, with the rule that made it. */
function manualVerdict(summary: ManualQaRunSummary): FirstScreen['verdict'] {
  const { pass, fail, inconclusive, error } = summary.outcomes;
  const n = summary.questions;
  const tier = summary.judgeMetrics[0]?.tier ?? summary.setup?.judges[0] ?? 'the first judge tier';
  const notAsked = summary.planned - n;
  const rest = [`${pass} passed`, ...(inconclusive ? [`${inconclusive} need review (no metric could be judged)`] : []), ...(error ? [`${error} got no answer (head unit error)`] : []), ...(notAsked ? [`${notAsked} of ${summary.planned} planned were not asked`] : [])].join(', ');
  const rule = ` An answer fails when a metric of ${tier} falls below 1 (a fact missing, a wrong step, a warning left out) or when it addresses the bench instead of the driver.`;
  const search = summary.omissionSearch ? ` The warning-omission search asked ${summary.omissionSearch.asked} more phrasings; ${summary.omissionSearch.omissions} left a required warning out.` : '';
  if (n === 0) return { tone: 'error', headline: 'no question was asked', text: 'No question was asked: nothing was tested.' };
  if (fail > 0) {
    const headline = `${fail} of ${n} answers failed (${pct(fail, n)})`;
    return { tone: 'fail', headline, text: `${headline}; ${rest}.${rule}${search}` };
  }
  if (error === n) return { tone: 'error', headline: `none of the ${n} questions got an answer`, text: `None of the ${n} questions got an answer: the head unit was not reached or failed on every one.` };
  if (inconclusive > 0) {
    const headline = `no answer failed, ${inconclusive} of ${n} need review`;
    return { tone: 'inconclusive', headline, text: `No answer failed, but ${inconclusive} of ${n} need review: no metric of ${tier} could be judged on them; ${rest}.${search}` };
  }
  const headline = `all ${pass} judged answers passed`;
  return { tone: 'pass', headline, text: `All ${pass} judged answers passed${error ? ` (${error} got no answer)` : ''}: every judged metric was 1.${rule}${search}` };
}

/** The unit as the stored config names it, and the manual fault profiles the reference unit was told to use. */
function unitOf(config: unknown): { unit: string; faults: InjectedFaults | null } {
  const stored = (config ?? {}) as { headUnit?: unknown; manualFaults?: unknown };
  const headUnit = HeadUnitConfigSchema.safeParse(stored.headUnit ?? { type: 'reference' });
  if (!headUnit.success) return { unit: 'not recorded with the run', faults: null };
  const unit = describeHeadUnit(headUnit.data);
  const faults = ManualFaultConfigSchema.safeParse(stored.manualFaults ?? {});
  if (headUnit.data.type !== 'reference' || !faults.success) return { unit, faults: null };
  const rates = manualFaultRates(faults.data);
  if (rates.size === 0) return { unit, faults: null };
  const { rate } = faults.data;
  const others = [...rates].filter(([, r]) => r !== rate).map(([profile, r]) => `${profile} ${r}`);
  return {
    unit,
    faults: {
      what: `the manual fault profile${rates.size > 1 ? 's' : ''} ${[...rates.keys()].join(', ')} of the reference head unit's manual skill, each firing at rate ${rate}${others.length ? ` (${others.join(', ')})` : ''} where it can change the answer`,
      short: `${rates.size} manual profile${rates.size > 1 ? 's' : ''} at rate ${rate}${others.length ? `, ${others.length} of them at other rates` : ''}`,
    },
  };
}

/** The first screen of a manual-QA run's report and run page, from the store: record, facts, setup and answers. */
export function manualQaFirstScreen(store: ResultStore, record: RunRecord, summary: ManualQaRunSummary, rows: readonly ManualQaRow[], drillDownLimit: number): FirstScreen {
  const facts = testedFromFacts(store, record);
  const unit = unitOf(record.config);
  const setup = summary.setup;
  return {
    tested: {
      unit: facts.unit ?? unit.unit,
      build: facts.build,
      kind: `manual-qa: ${summary.questions} of ${summary.planned} questions asked${setup ? ` over ${setup.manual.length} manual file${setup.manual.length === 1 ? '' : 's'}; retrieval ${setup.retrieval}` : ''}`,
      method: summary.preset.statement,
      // the evaluator tiers as the run recorded them (no simulator plays a user here)
      judges: setup ? setup.judges.join(' → ') : (facts.judges ?? 'not recorded'),
      faults: unit.faults,
    },
    verdict: manualVerdict(summary),
    findings: topFindings(rows, summary.questions, drillDownLimit),
    caveat: null,
    noFindings: summary.questions === 0 ? 'No question was asked.' : 'No metric of the first judge tier fell below 1 on any answer.',
  };
}
