import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ClassificationScores } from '../../domain/stats.ts';
import type { ManualQaSummary, MetricAggregate } from './item.ts';
import type { ManualEvaluation } from '../../manual/evaluate.ts';
import { MANUAL_METRICS, METRIC_TITLES, metricFails, type ManualMetric, type MetricValue } from '../../manual/model.ts';
import { computeManualQaSummary, loadManualQaRun, type ManualQaRow, type ManualQaRunSummary } from './results.ts';
import type { ResultStore } from '../../store/store.ts';
import { csvRow, escapeHtml as h, escapeXml, escapeXmlAttribute as attr } from '../../report/escape.ts';
import { page } from '../../report/html.ts';
import { writeAtomically } from '../../report/write.ts';
import { DRILL_DOWN_LIMIT, firstScreenHtml, type FirstScreen } from '../../report/first-screen.ts';
import { manualQaFirstScreen, questionAnchor } from './first-screen.ts';

/**
 * The outputs of a manual-QA run (docs/manual-qa.md, "Campaigns"): summary.json, report.html (metrics
 * per question kind, difficulty and chapter; the warning-omission table with the manual's text
 * beside the answer; the omission search; human alignment; a fact-level drill-down per question),
 * junit.xml (one test case per question) and questions.csv (one row per question).
 */

const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
const badge = (outcome: string) => `<span class="badge b-${h(outcome)}">${h(outcome)}</span>`;

function metricCell(value: MetricValue | undefined): string {
  if (!value) return '<td class="n muted">–</td>';
  if (value.status !== 'judged') return `<td class="n muted" title="${h(value.reason)}">${value.status === 'not_judged' ? 'not judged' : 'n/a'}</td>`;
  return `<td class="n${metricFails(value) ? ' err' : ''}" title="${h(value.reason)}">${value.value.toFixed(2)}</td>`;
}

function metricsTable(metrics: Record<ManualMetric, MetricAggregate>): string {
  const rows = MANUAL_METRICS.map((m) => {
    const a = metrics[m];
    return `<tr><td>${h(METRIC_TITLES[m])}</td><td class="n">${a.mean === null ? '–' : a.mean.toFixed(3)}</td><td class="n">${a.judged}</td><td class="n">${a.notJudged}</td><td class="n">${a.notApplicable}</td><td class="n">${a.flagged}</td></tr>`;
  }).join('');
  return `<table><thead><tr><th>metric</th><th class="n">mean (judged)</th><th class="n">judged</th><th class="n">not judged</th><th class="n">n/a</th><th class="n">flagged (&lt; 1)</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function groupTable(title: string, groups: Record<string, Record<ManualMetric, MetricAggregate>>): string {
  const head = `<tr><th>${h(title)}</th><th class="n">answers</th>${MANUAL_METRICS.map((m) => `<th class="n">${h(METRIC_TITLES[m])}</th>`).join('')}</tr>`;
  const rows = Object.entries(groups)
    .map(([group, metrics]) => {
      const n = metrics.completeness_hard.judged + metrics.completeness_hard.notJudged + metrics.completeness_hard.notApplicable;
      return `<tr><td>${h(group)}</td><td class="n">${n}</td>${MANUAL_METRICS.map((m) => `<td class="n">${metrics[m].mean === null ? '–' : metrics[m].mean!.toFixed(2)}</td>`).join('')}</tr>`;
    })
    .join('');
  return `<table><thead>${head}</thead><tbody>${rows}</tbody></table>`;
}

function warningTable(tier: ManualQaSummary): string {
  if (tier.warnings.length === 0) return '<p class="muted">No question of this run required a warning.</p>';
  const rows = tier.warnings
    .map(
      (w) =>
        `<tr><td><code>${h(w.warningId)}</code><br><span class="muted">${h(w.type ?? '')}</span></td><td class="n">${w.asked}</td><td class="n${w.omitted ? ' err' : ''}">${w.omitted}</td><td>${h(w.text)}</td><td>${w.example ? `<b>${h(w.example.question)}</b><br>${h(w.example.answer)}` : '<span class="muted">always carried</span>'}</td></tr>`,
    )
    .join('');
  return `<table class="warnings"><thead><tr><th>warning</th><th class="n">asked</th><th class="n">omitted</th><th>the manual's text</th><th>a question that made the answer leave it out, and the answer</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function omissionHtml(summary: ManualQaRunSummary): string {
  const o = summary.omissionSearch;
  if (!o) return '';
  const rows = o.findings
    .map((f) => `<tr><td>${h(f.operator)}</td><td>${h(f.question)}</td><td>${f.omittedWarningIds.map((id) => `<code>${h(id)}</code>`).join(' ')}</td><td>${h(f.answer)}</td></tr>`)
    .join('');
  return `<h2>Warning-omission search</h2><div class="panel"><p>${o.asked} phrasings asked (budget ${o.budget}); ${o.omissions} left a required warning out (${pct(o.omissionRate)}); ${o.findings.length} distinct failing questions, ${o.warningsOmitted} distinct warnings omitted.</p>
<table><thead><tr><th>operator</th><th>question</th><th>warnings left out</th><th>answer</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function alignmentHtml(summary: ManualQaRunSummary): string {
  const a = summary.alignment;
  if (!a) return '';
  const metrics = Object.keys(a.report.pearson) as (keyof typeof a.report.pearson)[];
  const num = (x: number | null) => (x === null ? '–' : x.toFixed(3));
  const rows = metrics.map((m) => `<tr><td>${h(METRIC_TITLES[m])}</td><td class="n">${num(a.report.pearson[m].r)}</td><td class="n">${a.report.pearson[m].n}</td><td class="n">${num(a.report.icc[m].icc)}</td><td class="n">${a.report.icc[m].n}</td></tr>`).join('');
  const tag = (name: string, s: ClassificationScores | null) =>
    `<tr><td>${h(name)}</td><td class="n">${s ? num(s.precision) : '–'}</td><td class="n">${s ? num(s.recall) : '–'}</td><td class="n">${s ? num(s.f1) : '–'}</td></tr>`;
  return `<h2>Human alignment (${h(a.tier)} vs ${a.raters} rater(s), ${a.annotations} annotations)</h2><div class="grid"><div class="panel"><table><thead><tr><th>metric</th><th class="n">Pearson r</th><th class="n">n</th><th class="n">ICC(3,1) raters</th><th class="n">n</th></tr></thead><tbody>${rows}</tbody></table></div>
<div class="panel"><table><thead><tr><th>tag / label</th><th class="n">precision</th><th class="n">recall</th><th class="n">F1</th></tr></thead><tbody>${tag('essential', a.report.tags.essential)}${tag('safety-critical', a.report.tags.safetyCritical)}${tag('confidence', a.report.binary.confidence)}${tag('actionability', a.report.binary.actionability)}</tbody></table><p class="note">The tier's tags and binary labels against the raters' majority label.</p></div>
<div class="panel"><h3>Test-set generator</h3><table><tbody><tr><td>raters' own essential facts the reference states (completeness)</td><td class="n">${pct(a.report.testSet.completeness.value)}</td><td class="n">n ${a.report.testSet.completeness.n}</td></tr><tr><td>reference facts on the question (relevance)</td><td class="n">${pct(a.report.testSet.relevance.value)}</td><td class="n">n ${a.report.testSet.relevance.n}</td></tr><tr><td>reference facts the manual states (correctness)</td><td class="n">${pct(a.report.testSet.correctness.value)}</td><td class="n">n ${a.report.testSet.correctness.n}</td></tr></tbody></table><p class="note">Raters' marks on the reference facts, averaged over raters (GEAR's Table 3).</p></div></div>`;
}

function biasHtml(summary: ManualQaRunSummary): string {
  const bias = summary.evaluatorBias;
  if (!bias) return '';
  const rows = Object.entries(bias)
    .map(([m, b]) => `<tr><td>${h(METRIC_TITLES[m as keyof typeof METRIC_TITLES])}</td><td class="n">${b!.p === null ? '–' : b!.p.toFixed(3)}</td><td class="n">${b!.h === null ? '–' : b!.h.toFixed(2)}</td><td>${Object.entries(b!.n).map(([t, n]) => `${h(t)} ${n}`).join(', ')}</td></tr>`)
    .join('');
  return `<h2>Evaluator bias (Kruskal–Wallis across the evaluator tiers)</h2><div class="panel"><table><thead><tr><th>metric</th><th class="n">p</th><th class="n">H</th><th>judged answers per tier</th></tr></thead><tbody>${rows}</tbody></table><p class="note">p &lt; 0.05: the tiers score the same answers differently (GEAR §4.5). – : fewer than two tiers judged the metric, or every value is tied.</p></div>`;
}

function familyBiasHtml(summary: ManualQaRunSummary): string {
  const bias = summary.familyBias;
  if (!bias) return '';
  const title = `<h2>Evaluator bias (GEAR: the assistant's family${bias.assistantFamily ? ` ${h(bias.assistantFamily)}` : ''} as evaluator vs each other family)</h2>`;
  if (bias.undecided) return `${title}<div class="panel"><p>Not tested: ${h(bias.undecided)}.</p></div>`;
  const metrics = Object.keys(bias.pairs[0].metrics) as (keyof (typeof bias.pairs)[number]['metrics'])[];
  const head = bias.pairs.map((p) => `<th class="n">${h(bias.sameFamily!)} vs ${h(p.other)} (${h(p.otherFamily)}): p</th>`).join('');
  const rows = metrics.map((m) => `<tr><td>${h(METRIC_TITLES[m])}</td>${bias.pairs.map((p) => `<td class="n">${p.metrics[m].p === null ? '–' : p.metrics[m].p!.toFixed(3)} <span class="muted">(n ${p.metrics[m].n.same}/${p.metrics[m].n.other})</span></td>`).join('')}</tr>`).join('');
  return `${title}<div class="panel"><table><thead><tr><th>metric</th>${head}</tr></thead><tbody>${rows}</tbody></table><p class="note">Kruskal–Wallis of the two evaluators' scores of the same answers (GEAR §4.5, Table 7); p &lt; 0.05: they score them differently. – : a side judged nothing, or every value is tied.</p></div>`;
}

/** The fact-level evidence of one evaluation: reference facts with their tags and coverage, answer facts with their judgements. */
export function evaluationDetailHtml(evaluation: ManualEvaluation): string {
  const yes = (v: boolean | null) => (v === null ? '<span class="muted">?</span>' : v ? '✓' : '<span class="err">✗</span>');
  const refs = evaluation.referenceFacts
    .map((f) => {
      const c = evaluation.coverage.find((x) => x.factId === f.id);
      return `<tr><td><code>${h(f.id)}</code></td><td>${h(f.text)}</td><td>${f.essential ? 'essential' : 'optional'}${f.safetyCritical ? ' · <b>safety-critical</b>' : ''}</td><td>${yes(c?.covered ?? null)}${c?.by.length ? ` <span class="muted">by ${c.by.map(h).join(', ')}</span>` : ''}</td></tr>`;
    })
    .join('');
  const answer = evaluation.answerFacts
    .map((f) => `<tr><td><code>${h(f.id)}</code></td><td>${h(f.text)}</td><td>${f.instruction ? 'step' : ''}</td><td>${yes(f.relevant)}</td><td>${yes(f.correct)}</td><td>${yes(f.grounded)}</td></tr>`)
    .join('');
  const metrics = MANUAL_METRICS.map((m) => {
    const v = evaluation.metrics[m];
    return `<tr><td>${h(METRIC_TITLES[m])}</td>${metricCell(v)}<td class="muted">${h(v?.reason ?? '')}</td></tr>`;
  }).join('');
  return `<h4>${h(evaluation.tier)}${evaluation.outcome === 'judge_error' ? ' <span class="err">(judge error)</span>' : ''}</h4>
<table><thead><tr><th>metric</th><th class="n">value</th><th>why</th></tr></thead><tbody>${metrics}</tbody></table>
<table><thead><tr><th>reference fact</th><th></th><th>tags</th><th>covered</th></tr></thead><tbody>${refs}</tbody></table>
<table><thead><tr><th>answer fact</th><th></th><th></th><th>relevant</th><th>correct</th><th>in the manual</th></tr></thead><tbody>${answer}</tbody></table>`;
}

function questionHtml(row: ManualQaRow, detailed: boolean): string {
  const { item, result, outcome } = row;
  const search = `${item.id} ${item.kind} ${item.difficulty} ${item.chapter} ${item.question}`.toLowerCase();
  const first = result?.evaluations[0];
  const cells = `<span><b>${h(item.id)}</b></span><span class="muted">${h(item.kind)} · ${h(item.difficulty)}</span><span>${badge(outcome ?? 'pending')}</span>${MANUAL_METRICS.slice(0, 3).map((m) => `<span class="n">${first?.metrics[m]?.status === 'judged' ? (first.metrics[m] as { value: number }).value.toFixed(2) : '–'}</span>`).join('')}<span>${h(item.question)}</span>`;
  const attrs = `class="conv q" id="${h(questionAnchor(item.id))}" data-outcome="${h(outcome ?? 'pending')}" data-search="${h(search)}"`;
  if (!detailed || !result) return `<div ${attrs}><div class="row">${cells}</div></div>`;
  const body = `<p class="muted">chapter ${h(item.chapter)} · sections ${item.sectionIds.map(h).join(', ')} · ${result.latencyMs.toFixed(0)} ms</p>
${result.error ? `<p class="err">${h(result.status)}: ${h(result.error)}</p>` : ''}
<div class="grid"><div><h4>answer</h4><pre>${h(result.answer ?? '')}</pre></div><div><h4>reference answer</h4><pre>${h(item.answer)}</pre></div></div>
${result.evaluations.map(evaluationDetailHtml).join('')}`;
  return `<details ${attrs}><summary>${cells}</summary><div class="body">${body}</div></details>`;
}

const QUESTION_CSS = `<style>.conv.q summary,.conv.q .row,.head.q{grid-template-columns:minmax(160px,1.6fr) 1.2fr 100px 60px 60px 60px 4fr}.warnings td{max-width:420px;white-space:pre-wrap}</style>`;

/** report.html: the first screen (what was tested, the verdict, the top findings), then the figures and every question. */
export function manualQaReportHtml(summary: ManualQaRunSummary, rows: readonly ManualQaRow[], firstScreen: FirstScreen, drillDownLimit = DRILL_DOWN_LIMIT): string {
  const { run } = summary;
  const card = (value: string, key: string) => `<div class="card"><div class="v">${value}</div><div class="k">${h(key)}</div></div>`;
  const cards = [
    card(`${summary.questions}/${summary.planned}`, 'questions asked'),
    card(String(summary.outcomes.pass), 'passed (first tier)'),
    card(String(summary.outcomes.fail), 'failed: a metric below 1'),
    card(String(summary.outcomes.inconclusive), 'inconclusive: nothing judged'),
    card(String(summary.outcomes.error), 'head unit errors'),
    ...(summary.omissionSearch ? [card(pct(summary.omissionSearch.omissionRate), 'warning omissions in the search')] : []),
  ].join('');
  const tiers = summary.judgeMetrics
    .map(
      (t) => `<h2>Metrics: ${h(t.tier)}</h2>
<div class="grid"><div class="panel"><h3>All answers</h3>${metricsTable(t.metrics)}<p class="note">Means over the answers where the metric was judged; "not judged" (the tier cannot decide it) is never counted as passed.</p></div>
<div class="panel"><h3>By question kind</h3>${groupTable('kind', t.byKind)}</div>
<div class="panel"><h3>By difficulty</h3>${groupTable('difficulty', t.byDifficulty)}</div>
<div class="panel"><h3>By chapter</h3>${groupTable('chapter', t.byChapter)}</div></div>
<h2>Warning omissions: ${h(t.tier)}</h2><div class="panel">${warningTable(t)}</div>`,
    )
    .join('\n');
  const setup = summary.setup ? `<p class="muted">retrieval: ${h(summary.setup.retrieval)} · judges: ${summary.setup.judges.map(h).join(', ')} · test set: ${h(summary.setup.testSet)} · ${summary.setup.manual.length} manual file(s)</p>` : '';
  const capped = rows.length > drillDownLimit ? `<p class="muted">Fact-level detail is included for the first ${drillDownLimit} of ${rows.length} questions; questions.csv and the store hold all of them.</p>` : '';
  const body = `${firstScreenHtml(firstScreen)}${QUESTION_CSS}
<div class="cards">${cards}</div>${setup}<p class="muted">method: ${h(summary.preset.statement)}</p>
${tiers}
${omissionHtml(summary)}
${biasHtml(summary)}${familyBiasHtml(summary)}
${alignmentHtml(summary)}
<h2 id="questions">Questions</h2>
<p class="muted">Click a question to open the answer beside the reference answer, each tier's metrics, the reference facts with their tags and coverage, and the answer's facts.</p>
${capped}
<div class="toolbar"><input id="conv-filter" placeholder="filter by id, kind, chapter, question…" size="40">
<select id="conv-outcome"><option value="">all outcomes</option><option>pass</option><option>fail</option><option>inconclusive</option><option>error</option><option>pending</option></select></div>
<div class="head q"><span>question</span><span>kind · difficulty</span><span>outcome</span><span>compl. hard</span><span>compl. soft</span><span>risk</span><span>question</span></div>
${rows.map((row, i) => questionHtml(row, i < drillDownLimit)).join('\n')}`;
  const subtitle = `${h(run.name)} · manual-QA run ${h(run.id)} · ${h(run.status)} · started ${h(run.createdAt)}${run.finishedAt ? ` · finished ${h(run.finishedAt)}` : ''}`;
  return page(`icabench manual-QA report: ${run.name}`, subtitle, body, { charts: {} });
}

/** JUnit XML: one test case per question (classname manual-qa.<kind>); failure = a metric of the first tier below 1, error = the head unit failed, skipped = inconclusive or not asked. */
export function manualQaJunit(summary: ManualQaRunSummary, rows: readonly ManualQaRow[]): string {
  let failures = 0;
  let errors = 0;
  let skipped = 0;
  let totalMs = 0;
  const cases = rows.map(({ item, result, outcome }) => {
    const ms = result?.latencyMs ?? 0;
    totalMs += ms;
    const attrs = `name="${attr(item.id)}" classname="${attr(`manual-qa.${item.kind}`)}" time="${(ms / 1000).toFixed(3)}"`;
    let body = '';
    if (!result) {
      skipped++;
      body = '<skipped message="not asked (the run stopped before this question)"/>';
    } else if (outcome === 'error') {
      errors++;
      body = `<error type="sut_error" message="${attr(`sut_error: ${result.error ?? 'no detail recorded'}`)}"/>`;
    } else if (outcome === 'fail' && result.manipulation?.length) {
      failures++;
      const lines = result.manipulation.map((f) => `${f.field}: ${f.text} (${f.why.join('; ')})`);
      body = `<failure type="prompt_injection" message="${attr('the answer addresses the bench, not the driver')}">${escapeXml(`${lines.join('\n')}\n\nquestion: ${item.question}\nanswer: ${result.answer ?? ''}`)}</failure>`;
    } else if (outcome === 'fail') {
      failures++;
      const e = result.evaluations[0];
      const flagged = MANUAL_METRICS.filter((m) => metricFails(e.metrics[m]));
      const lines = flagged.map((m) => `${m} = ${(e.metrics[m] as { value: number }).value.toFixed(2)}: ${e.metrics[m].reason}`);
      body = `<failure type="${attr(flagged.join(','))}" message="${attr(`${e.tier}: ${flagged.join(', ')} below 1`)}">${escapeXml(`${lines.join('\n')}\n\nquestion: ${item.question}\nanswer: ${result.answer ?? ''}`)}</failure>`;
    } else if (outcome === 'inconclusive') {
      skipped++;
      body = '<skipped message="inconclusive: the first evaluator tier judged no metric"/>';
    }
    return body ? `    <testcase ${attrs}>\n      ${body}\n    </testcase>` : `    <testcase ${attrs}/>`;
  });
  const counts = `tests="${rows.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${(totalMs / 1000).toFixed(3)}"`;
  const properties = Object.entries({ 'run.id': summary.run.id, 'run.kind': summary.kind, 'run.status': summary.run.status, judges: summary.setup?.judges.join(',') ?? '' })
    .map(([name, value]) => `      <property name="${name}" value="${attr(value)}"/>`)
    .join('\n');
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="icabench" ${counts}>`, `  <testsuite name="${attr(summary.run.name)}" ${counts} timestamp="${attr(summary.run.createdAt)}">`, `    <properties>\n${properties}\n    </properties>`, ...cases, '  </testsuite>', '</testsuites>', ''].join('\n');
}

export const QUESTION_CSV_COLUMNS = ['key', 'kind', 'difficulty', 'chapter', 'question', 'status', 'outcome', 'latency_ms', ...MANUAL_METRICS, 'warnings_required', 'warnings_omitted', 'answer'] as const;

/** questions.csv: one row per question; the metric columns are the first tier's values (empty when not judged or not applicable). */
export function manualQaCsv(rows: readonly ManualQaRow[]): string {
  const lines = [csvRow([...QUESTION_CSV_COLUMNS])];
  for (const { item, result, outcome } of rows) {
    const e = result?.evaluations[0];
    const omitted = e ? item.facts.filter((f) => f.safetyCritical && e.coverage.find((c) => c.factId === f.id)?.covered === false).map((f) => f.warningId ?? f.id) : [];
    lines.push(
      csvRow([
        item.id,
        item.kind,
        item.difficulty,
        item.chapter,
        item.question,
        result?.status ?? 'not_asked',
        outcome,
        result ? Math.round(result.latencyMs) : null,
        ...MANUAL_METRICS.map((m) => (e?.metrics[m]?.status === 'judged' ? (e.metrics[m] as { value: number }).value : null)),
        item.warningIds.join(' '),
        omitted.join(' '),
        result?.answer ?? null,
      ]),
    );
  }
  return lines.join('');
}

/** summary.json's bytes, the same for `icabench run`, `icabench report` and the bench app's /api/runs/:id/summary.json. */
export function manualQaSummaryJson(summary: ManualQaRunSummary): string {
  return `${JSON.stringify(summary, null, 2)}\n`;
}

export interface ManualQaFiles {
  summary: string;
  html: string;
  junit: string;
  csv: string;
}

/** Computes the summary of a stored manual-QA run and writes summary.json, report.html, junit.xml and questions.csv into `outDir`. */
export function writeManualQaOutputs(store: ResultStore, runId: string, outDir: string): { summary: ManualQaRunSummary; files: ManualQaFiles; firstScreen: FirstScreen } {
  const data = loadManualQaRun(store, runId);
  const summary = computeManualQaSummary(data);
  mkdirSync(outDir, { recursive: true });
  const files = { summary: join(outDir, 'summary.json'), html: join(outDir, 'report.html'), junit: join(outDir, 'junit.xml'), csv: join(outDir, 'questions.csv') };
  writeAtomically(files.summary, manualQaSummaryJson(summary));
  writeAtomically(files.junit, manualQaJunit(summary, data.rows));
  writeAtomically(files.csv, manualQaCsv(data.rows));
  const firstScreen = manualQaFirstScreen(store, data.run, summary, data.rows, DRILL_DOWN_LIMIT);
  writeAtomically(files.html, manualQaReportHtml(summary, data.rows, firstScreen));
  return { summary, files, firstScreen };
}
