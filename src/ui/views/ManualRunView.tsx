import { useState } from 'react';
import type { FactAnnotation } from '../../manual/alignment.ts';
import type { ManualQaResult, ManualQaSummary } from '../../kinds/manual-qa/item.ts';
import type { ManualEvaluation } from '../../manual/evaluate.ts';
import { MANUAL_METRICS, METRIC_TITLES, type ManualMetric } from '../../manual/model.ts';
import type { ManualQaRunSummary } from '../../kinds/manual-qa/results.ts';
import type { TestItem } from '../../manual/testset.ts';
import { api, ApiFailure } from '../api.ts';
import { DataTable, ErrorBox, Loading, Pill, Stat, fmt, pct, RunHeader } from '../components/common.tsx';
import { useApi } from '../hooks.ts';
import { ResumeButton } from '../components/CampaignButtons.tsx';
import { RunDownloads } from '../components/RunDownloads.tsx';
import { FirstScreenPanel } from '../components/FirstScreenPanel.tsx';
import type { FirstScreen } from '../../report/first-screen.ts';
import { pageItemHref, type KindPage } from '../kind-page.ts';

export interface QuestionRow {
  key: string;
  kind: string;
  difficulty: string;
  chapter: string;
  question: string;
  outcome: string | null;
  metrics: Record<ManualMetric, number | null>;
  annotated: boolean;
}

const outcomePill = (outcome: string | null) => <Pill kind={outcome === 'pass' ? 'ok' : outcome === 'fail' ? 'fail' : 'muted'}>{outcome ?? 'not asked'}</Pill>;

function GroupTable({ title, groups }: { title: string; groups: ManualQaSummary['byKind'] }) {
  return (
    <DataTable headers={[title, ...MANUAL_METRICS.map((m) => METRIC_TITLES[m])]}>
      {Object.entries(groups).map(([group, metrics]) => (
        <tr key={group}>
          <td>{group}</td>
          {MANUAL_METRICS.map((m) => (
            <td key={m}>{fmt(metrics[m].mean)}</td>
          ))}
        </tr>
      ))}
    </DataTable>
  );
}

/** A manual-QA run: outcomes, the seven metrics per kind / difficulty / chapter, the warning-omission table, alignment, and the questions. */
export function ManualRunView({ runId }: { runId: string }) {
  const data = useApi<{ summary: ManualQaRunSummary; questions: QuestionRow[]; firstScreen: FirstScreen }>(`/api/runs/${encodeURIComponent(runId)}/manual`);
  if (data.error) return <ErrorBox message={data.error} />;
  if (!data.data) return <Loading what="manual-QA run" />;
  return <ManualRunPanel runId={runId} summary={data.data.summary} questions={data.data.questions} firstScreen={data.data.firstScreen} />;
}

export function ManualRunPanel({ runId, summary, questions, firstScreen }: { runId: string; summary: ManualQaRunSummary; questions: readonly QuestionRow[]; firstScreen: FirstScreen }) {
  const tier = summary.judgeMetrics[0];
  return (
    <section data-testid="manual-run">
      <RunHeader title={`Manual-QA run ${summary.run.name}`} actions={<ResumeButton run={summary.run} />}>
        {summary.run.id} · {summary.run.status} · retrieval {summary.setup?.retrieval ?? 'n/a'} · judges {summary.setup?.judges.join(', ') ?? 'n/a'} · {summary.preset.statement}
      </RunHeader>
      <RunDownloads runId={runId} />
      <FirstScreenPanel screen={firstScreen} itemHref={(key) => pageItemHref(MANUAL_PAGE, runId, key)} />
      <div className="stats">
        <Stat label="questions asked" value={`${summary.questions} / ${summary.planned}`} />
        <Stat label="passed" value={summary.outcomes.pass} />
        <Stat label="failed" value={summary.outcomes.fail} testId="manual-failed" />
        <Stat label="inconclusive" value={summary.outcomes.inconclusive} />
        <Stat label="head unit errors" value={summary.outcomes.error} />
        {summary.omissionSearch && <Stat label="omission search: warnings left out" value={pct(summary.omissionSearch.omissionRate)} />}
      </div>
      {tier && <TierMetrics tier={tier} />}
      {summary.evaluatorBias && <EvaluatorBias bias={summary.evaluatorBias} />}
      {summary.familyBias && <FamilyBiasTable bias={summary.familyBias} />}
      <HumanAlignment alignment={summary.alignment} />
      <QuestionList runId={runId} questions={questions} />
    </section>
  );
}

/** The first evaluator tier's metrics, overall, by question kind, difficulty and chapter, and the warnings its answers left out. */
function TierMetrics({ tier }: { tier: ManualQaRunSummary['judgeMetrics'][number] }) {
  return (
      <>
        <h2>Metrics ({tier.tier})</h2>
        <DataTable headers={['Metric', 'Mean (judged)', 'Judged', 'Not judged', 'Flagged']} testId="manual-metrics">
          {MANUAL_METRICS.map((m) => (
            <tr key={m}>
              <td>{METRIC_TITLES[m]}</td>
              <td>{fmt(tier.metrics[m].mean, 3)}</td>
              <td>{tier.metrics[m].judged}</td>
              <td>{tier.metrics[m].notJudged}</td>
              <td>{tier.metrics[m].flagged}</td>
            </tr>
          ))}
        </DataTable>
        <h2>By question kind</h2>
        <GroupTable title="Kind" groups={tier.byKind} />
        <h2>By difficulty</h2>
        <GroupTable title="Difficulty" groups={tier.byDifficulty} />
        <h2>By chapter</h2>
        <GroupTable title="Chapter" groups={tier.byChapter} />
        <h2>Warning omissions</h2>
        <DataTable headers={['Warning', 'Asked', 'Omitted', 'The manual\'s text', 'Question and answer that left it out']} testId="warning-omissions">
          {tier.warnings
            .filter((w) => w.omitted > 0)
            .map((w) => (
              <tr key={w.warningId}>
                <td>
                  <code>{w.warningId}</code> {w.type}
                </td>
                <td>{w.asked}</td>
                <td>{w.omitted}</td>
                <td className="pre">{w.text}</td>
                <td className="pre">
                  <strong>{w.example?.question}</strong>
                  {'\n'}
                  {w.example?.answer}
                </td>
              </tr>
            ))}
        </DataTable>
        <p className="muted">{tier.warnings.filter((w) => w.omitted === 0).length} further warnings were asked about and always carried.</p>
      </>
  );
}

/** Whether the evaluator tiers score alike (Kruskal–Wallis per metric). */
function EvaluatorBias({ bias }: { bias: NonNullable<ManualQaRunSummary['evaluatorBias']> }) {
  return (
      <>
        <h2>Evaluator bias (Kruskal–Wallis across the evaluator tiers)</h2>
        <DataTable headers={['Metric', 'p', 'Judged answers per tier']} testId="manual-bias">
          {Object.entries(bias).map(([m, b]) => (
            <tr key={m}>
              <td>{METRIC_TITLES[m as ManualMetric]}</td>
              <td>{b!.p === null ? 'n/a' : fmt(b!.p, 3)}</td>
              <td>{Object.entries(b!.n).map(([t, n]) => `${t} ${n}`).join(', ')}</td>
            </tr>
          ))}
        </DataTable>
      </>
  );
}

/** GEAR's bias test: the assistant's own family as evaluator against each other family, one p per pair and metric. */
function FamilyBiasTable({ bias }: { bias: NonNullable<ManualQaRunSummary['familyBias']> }) {
  return (
    <>
      <h2>Evaluator bias (the assistant's family {bias.assistantFamily ?? ''} as evaluator vs each other family)</h2>
      {bias.undecided ? (
        <p data-testid="manual-family-bias">Not tested: {bias.undecided}.</p>
      ) : (
        <DataTable headers={['Metric', ...bias.pairs.map((p) => `${bias.sameFamily} vs ${p.other} (${p.otherFamily}): p`)]} testId="manual-family-bias">
          {Object.keys(bias.pairs[0].metrics).map((m) => (
            <tr key={m}>
              <td>{METRIC_TITLES[m as ManualMetric]}</td>
              {bias.pairs.map((p) => {
                const test = p.metrics[m as keyof typeof p.metrics];
                return <td key={p.other}>{test.p === null ? 'n/a' : fmt(test.p, 3)}</td>;
              })}
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

/** The tier against the raters (Pearson, ICC, the tags' and labels' P/R/F1, the test-set generator). */
function HumanAlignment({ alignment }: { alignment: ManualQaRunSummary['alignment'] }) {
  return (
    <>
      <h2>Human alignment</h2>
      {alignment ? (
        <DataTable headers={['Metric', 'Pearson r (tier vs raters)', 'ICC(3,1) among raters']} testId="manual-alignment">
          {Object.entries(alignment.report.pearson).map(([m, p]) => (
            <tr key={m}>
              <td>{METRIC_TITLES[m as ManualMetric]}</td>
              <td>
                {fmt(p.r, 3)} (n {p.n})
              </td>
              <td>
                {fmt(alignment!.report.icc[m as keyof typeof alignment.report.icc].icc, 3)} (n {alignment!.report.icc[m as keyof typeof alignment.report.icc].n})
              </td>
            </tr>
          ))}
          {(['essential', 'safetyCritical'] as const).map((tag) => {
            const s = alignment!.report.tags[tag];
            return (
              <tr key={tag}>
                <td>tag {tag === 'essential' ? 'essential' : 'safety-critical'}</td>
                <td colSpan={2}>{s ? `P ${fmt(s.precision)} · R ${fmt(s.recall)} · F1 ${fmt(s.f1)}` : 'n/a'}</td>
              </tr>
            );
          })}
          {(['confidence', 'actionability'] as const).map((label) => {
            const s = alignment!.report.binary[label];
            return (
              <tr key={label}>
                <td>label {label}</td>
                <td colSpan={2}>{s ? `P ${fmt(s.precision)} · R ${fmt(s.recall)} · F1 ${fmt(s.f1)}` : 'n/a'}</td>
              </tr>
            );
          })}
          {(['completeness', 'relevance', 'correctness'] as const).map((field) => {
            const t = alignment!.report.testSet[field];
            const what = { completeness: "raters' own essential facts the reference states", relevance: 'reference facts on the question', correctness: 'reference facts stated by the manual' }[field];
            return (
              <tr key={`testset-${field}`}>
                <td>test-set generator: {what}</td>
                <td colSpan={2}>{t.value === null ? 'n/a' : `${pct(t.value)} (n ${t.n})`}</td>
              </tr>
            );
          })}
        </DataTable>
      ) : (
        <p className="muted">No annotations yet: open a question and mark its facts.</p>
      )}
    </>
  );
}

/** The questions, filtered by id, kind, chapter, question or outcome, each linking to its page. */
function QuestionList({ runId, questions }: { runId: string; questions: readonly QuestionRow[] }) {
  const [filter, setFilter] = useState('');
  const shown = questions.filter((q) => !filter || `${q.key} ${q.kind} ${q.chapter} ${q.question} ${q.outcome}`.toLowerCase().includes(filter.toLowerCase()));
  return (
    <>
      <h2>Questions</h2>
      <input placeholder="filter by id, kind, chapter, question, outcome…" value={filter} onChange={(e) => setFilter(e.target.value)} size={40} />
      <DataTable headers={['Question', 'Kind', 'Outcome', 'Completeness', 'Risk awareness', 'Annotated']} testId="manual-questions">
        {shown.map((q) => (
          <tr key={q.key}>
            <td>
              <a href={`#/runs/${encodeURIComponent(runId)}/manual/${encodeURIComponent(q.key)}`}>{q.question}</a>
            </td>
            <td>
              {q.kind} · {q.difficulty}
            </td>
            <td>{outcomePill(q.outcome)}</td>
            <td>{fmt(q.metrics.completeness_hard)}</td>
            <td>{fmt(q.metrics.risk_awareness)}</td>
            <td>{q.annotated ? '✓' : ''}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

function Facts({ evaluation }: { evaluation: ManualEvaluation }) {
  const yes = (v: boolean | null) => (v === null ? '?' : v ? '✓' : '✗');
  return (
    <div className="card">
      <h3>{evaluation.tier}</h3>
      <table className="table">
        <tbody>
          {MANUAL_METRICS.map((m) => {
            const v = evaluation.metrics[m];
            return (
              <tr key={m}>
                <td>{METRIC_TITLES[m]}</td>
                <td>{v.status === 'judged' ? fmt(v.value) : v.status === 'not_judged' ? 'not judged' : 'n/a'}</td>
                <td className="muted">{v.reason}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <DataTable headers={['Reference fact', 'Tags', 'Covered']} testId="reference-facts">
        {evaluation.referenceFacts.map((f) => (
          <tr key={f.id}>
            <td>{f.text}</td>
            <td>
              {f.essential ? 'essential' : 'optional'}
              {f.safetyCritical ? ' · safety-critical' : ''}
            </td>
            <td>{yes(evaluation.coverage.find((c) => c.factId === f.id)?.covered ?? null)}</td>
          </tr>
        ))}
      </DataTable>
      <DataTable headers={['Answer fact', 'Relevant', 'Correct', 'In the manual']}>
        {evaluation.answerFacts.map((f) => (
          <tr key={f.id}>
            <td>{f.text}</td>
            <td>{yes(f.relevant)}</td>
            <td>{yes(f.correct)}</td>
            <td>{yes(f.grounded)}</td>
          </tr>
        ))}
      </DataTable>
    </div>
  );
}

type Marks = Omit<FactAnnotation, 'itemId'>;
type OwnFact = NonNullable<FactAnnotation['ownFacts']>[number];

/**
 * The rater's own key facts for the question (GEAR's Table 3: annotators answered each question themselves), each
 * tagged essential or not and marked when the reference answer states it: the test-set generator's completeness.
 */
function OwnFactsForm({ facts, onChange }: { facts: readonly OwnFact[]; onChange: (facts: OwnFact[]) => void }) {
  const set = (i: number, change: Partial<OwnFact>) => onChange(facts.map((f, j) => (j === i ? { ...f, ...change } : f)));
  return (
    <div data-testid="own-facts">
      <h4>Your own key facts (answer the question yourself, one fact per row)</h4>
      <DataTable headers={['Key fact', 'Essential', 'The reference answer states it']}>
        {facts.map((f, i) => (
          <tr key={i}>
            <td>
              <input value={f.text} onChange={(e) => set(i, { text: e.target.value })} aria-label={`own fact ${i}`} />
            </td>
            <td>
              <input type="checkbox" checked={f.essential} onChange={(e) => set(i, { essential: e.target.checked })} aria-label={`own fact ${i} essential`} />
            </td>
            <td>
              <input type="checkbox" checked={f.inReference} onChange={(e) => set(i, { inReference: e.target.checked })} aria-label={`own fact ${i} in the reference`} />
            </td>
          </tr>
        ))}
      </DataTable>
      <button onClick={() => onChange([...facts, { text: '', essential: false, inReference: false }])} data-testid="add-own-fact">
        Add a key fact
      </button>
    </div>
  );
}

/**
 * The rater's form starts blank: every box unchecked, nothing taken from the machine's labels (coverage, tags,
 * relevance, correctness, confidence, actionability), as GEAR's annotators labelled without seeing the evaluator's
 * answers; a form pre-filled with them would pull the raters toward the machine and inflate the alignment.
 */
export function blankMarks(evaluation: ManualEvaluation, rater: string): Marks {
  return {
    rater,
    referenceFacts: evaluation.referenceFacts.map((f) => ({ factId: f.id, covered: false, essential: false, safetyCritical: false })),
    answerFacts: evaluation.answerFacts.map((f) => ({ factId: f.id, relevant: false, correct: false })),
    confidence: false,
    actionability: false,
  };
}

/** One question: the answer beside the reference answer, every tier's facts, and the annotation form. */
export interface QuestionData {
  item: TestItem;
  result: ManualQaResult | null;
  outcome: string | null;
  annotations: FactAnnotation[];
}

export function ManualQuestionView({ runId, questionKey }: { runId: string; questionKey: string }) {
  const path = `/api/runs/${encodeURIComponent(runId)}/manual/questions/${encodeURIComponent(questionKey)}`;
  const data = useApi<QuestionData>(path);
  if (data.error) return <ErrorBox message={data.error} />;
  if (!data.data) return <Loading what="question" />;
  return <ManualQuestionPanel runId={runId} path={path} data={data.data} onSaved={data.reload} />;
}

export function ManualQuestionPanel({ runId, path, data, onSaved }: { runId: string; path: string; data: QuestionData; onSaved: () => void }) {
  const { item, result, outcome, annotations } = data;
  const evaluation = result?.evaluations[0] ?? null;
  return (
    <section data-testid="manual-question">
      <div className="title-row">
        <h1>{item.question}</h1>
        <a href={`#/runs/${encodeURIComponent(runId)}/manual`}>← manual-QA run</a>
      </div>
      <p className="muted">
        {item.id} · {item.kind} · {item.difficulty} · {item.chapter} · {outcomePill(outcome)}
      </p>
      <div className="grid2">
        <div className="card">
          <h3>Answer</h3>
          <p className="pre">{result?.answer ?? result?.error ?? 'not asked yet'}</p>
        </div>
        <div className="card">
          <h3>Reference answer</h3>
          <p className="pre">{item.answer}</p>
        </div>
      </div>
      {evaluation && <AnnotationForm evaluation={evaluation} path={path} annotations={annotations} onSaved={onSaved} />}
      <EvaluatorJudgements evaluations={result?.evaluations ?? []} />
    </section>
  );
}

/** The evaluators' own judgements, hidden until asked for: a rater fills the form first, without them (blinded). */
function EvaluatorJudgements({ evaluations }: { evaluations: readonly ManualEvaluation[] }) {
  const [shown, setShown] = useState(false);
  if (evaluations.length === 0) return null;
  return shown ? (
    <>{evaluations.map((e) => <Facts key={e.tier} evaluation={e} />)}</>
  ) : (
    <p>
      <button onClick={() => setShown(true)} data-testid="show-judgements">
        Show the evaluators' judgements
      </button>{' '}
      <span className="muted">hidden while you rate, so that the machine's labels do not lead yours</span>
    </p>
  );
}

/** The rater's marks on a tier's facts (starting blank), and optionally on the reference answer and with their own key facts. */
function AnnotationForm({ evaluation, path, annotations, onSaved }: { evaluation: ManualEvaluation; path: string; annotations: readonly FactAnnotation[]; onSaved: () => void }) {
  const [marks, setMarks] = useState<Marks>(() => blankMarks(evaluation, ''));
  const [ownFacts, setOwnFacts] = useState<OwnFact[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const facts = new Map(evaluation.referenceFacts.map((f) => [f.id, f.text]));
  const answerFacts = new Map(evaluation.answerFacts.map((f) => [f.id, f.text]));
  const [rateTestSet, setRateTestSet] = useState(false);
  const save = async () => {
    // the test-set marks are saved only when the rater rated the reference answer too (then an unticked box is a "no")
    const referenceFacts = marks.referenceFacts.map(({ relevantToQuestion, correctInManual, ...rest }) =>
      rateTestSet ? { ...rest, relevantToQuestion: relevantToQuestion ?? false, correctInManual: correctInManual ?? false } : rest,
    );
    try {
      await api.post(`${path}/annotations`, { ...marks, referenceFacts, ...(rateTestSet && ownFacts.length ? { ownFacts: ownFacts.filter((f) => f.text.trim()) } : {}) });
      setMessage(`saved for ${marks.rater}`);
      onSaved();
    } catch (error) {
      setMessage(error instanceof ApiFailure ? error.message : String(error));
    }
  };
  const setRef = (i: number, field: 'covered' | 'essential' | 'safetyCritical' | 'relevantToQuestion' | 'correctInManual', value: boolean) =>
    setMarks((m) => ({ ...m, referenceFacts: m.referenceFacts.map((f, j) => (j === i ? { ...f, [field]: value } : f)) }));
  const setAns = (i: number, field: 'relevant' | 'correct', value: boolean) => setMarks((m) => ({ ...m, answerFacts: m.answerFacts.map((f, j) => (j === i ? { ...f, [field]: value } : f)) }));
  return (
    <div className="card" data-testid="annotation-form">
      <h3>Annotate ({evaluation.tier}'s facts)</h3>
      <label>
        Rater <input value={marks.rater} onChange={(e) => setMarks({ ...marks, rater: e.target.value })} data-testid="rater" />
      </label>
      <p>
        <label>
          <input type="checkbox" checked={rateTestSet} onChange={(e) => setRateTestSet(e.target.checked)} aria-label="rate the reference answer" /> also rate the reference answer
          (test-set generator: is each reference fact on the question, and does the manual state it)
        </label>
      </p>
      <DataTable headers={['Reference fact', 'Covered', 'Essential', 'Safety-critical', ...(rateTestSet ? ['On the question', 'Stated by the manual'] : [])]}>
        {marks.referenceFacts.map((f, i) => (
          <tr key={f.factId}>
            <td>{facts.get(f.factId)}</td>
            {(['covered', 'essential', 'safetyCritical', ...(rateTestSet ? (['relevantToQuestion', 'correctInManual'] as const) : [])] as const).map((field) => (
              <td key={field}>
                <input type="checkbox" checked={f[field] ?? false} onChange={(e) => setRef(i, field, e.target.checked)} aria-label={`${field} ${f.factId}`} />
              </td>
            ))}
          </tr>
        ))}
      </DataTable>
      {rateTestSet && <OwnFactsForm facts={ownFacts} onChange={setOwnFacts} />}
      <DataTable headers={['Answer fact', 'Relevant', 'Correct']}>
        {marks.answerFacts.map((f, i) => (
          <tr key={f.factId}>
            <td>{answerFacts.get(f.factId)}</td>
            {(['relevant', 'correct'] as const).map((field) => (
              <td key={field}>
                <input type="checkbox" checked={f[field]} onChange={(e) => setAns(i, field, e.target.checked)} aria-label={`${field} ${f.factId}`} />
              </td>
            ))}
          </tr>
        ))}
      </DataTable>
      <p>
        <label>
          <input type="checkbox" checked={marks.confidence ?? false} onChange={(e) => setMarks({ ...marks, confidence: e.target.checked })} aria-label="confidence" /> the answer is
          clear and certain (confidence)
        </label>{' '}
        <label>
          <input type="checkbox" checked={marks.actionability ?? false} onChange={(e) => setMarks({ ...marks, actionability: e.target.checked })} aria-label="actionability" /> the
          answer lets the driver act (actionability)
        </label>
      </p>
      <button onClick={save} disabled={!marks.rater.trim()} data-testid="save-annotation">
        Save annotation
      </button>
      {message && <p data-testid="annotation-message">{message}</p>}
      <p className="muted">Annotated by: {annotations.map((a) => a.rater).join(', ') || 'nobody yet'}</p>
    </div>
  );
}

/** The manual-QA page (a kind's view names it `manual`): the run at `#/runs/<id>/manual`, a question at `…/manual/<key>`. */
export const MANUAL_PAGE: KindPage = {
  name: 'manual',
  run: 'manual',
  items: 'manual',
  RunView: ManualRunView,
  ItemView: ({ runId, itemKey }) => <ManualQuestionView runId={runId} questionKey={itemKey} />,
};
