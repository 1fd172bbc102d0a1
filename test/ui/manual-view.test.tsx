import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reliability } from '../../src/analysis/reliability.ts';
import { loadManualQaConfig } from '../../src/kinds/manual-qa/config.ts';
import type { ManualQaRunSummary } from '../../src/kinds/manual-qa/results.ts';
import { ManualRunApi } from '../../src/kinds/manual-qa/view.ts';
import { writeManualQaOutputs } from '../../src/kinds/manual-qa/outputs.ts';
import type { FirstScreen } from '../../src/report/first-screen.ts';
import { ResultStore } from '../../src/store/store.ts';
import { ReliabilityTable } from '../../src/ui/components/ReliabilityTable.tsx';
import { ManualQuestionPanel, ManualRunPanel, type QuestionData, type QuestionRow } from '../../src/ui/views/ManualRunView.tsx';
import { dataPath } from '../helpers/repoData.ts';
import { runManualQa } from '../helpers/run-kinds.ts';

describe('the bench app views of a manual-QA run (rendered to markup)', () => {
  let store: ResultStore;
  let runId: string;
  let api: ManualRunApi;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'manual-view-'));
    const xml = dataPath('bmw-manual/xml');
    const chapters = readdirSync(xml).filter((f) => f.endsWith('.xml')).sort().slice(0, 3).map((f) => join(xml, f));
    writeFileSync(join(dir, 'c.yaml'), `kind: manual-qa\nname: view\nmanual: ${JSON.stringify(chapters)}\nlimit: 10\nmanualFaults: { profiles: [omit_warning, drop_step], rate: 0.6 }\n`);
    store = ResultStore.open(join(dir, 'icabench.db'));
    runId = (await runManualQa(loadManualQaConfig(join(dir, 'c.yaml')), { store })).runId;
    api = new ManualRunApi(store);
  }, 120_000);
  afterAll(() => store?.close());

  it('the run view: metrics, per-kind table, warning omissions with the manual text, one row per question linking to it', () => {
    const { summary, questions, firstScreen } = api.overview(store.getRun(runId)!) as { summary: ManualQaRunSummary; questions: QuestionRow[]; firstScreen: FirstScreen };
    const html = renderToStaticMarkup(<ManualRunPanel runId={runId} summary={summary} questions={questions} firstScreen={firstScreen} />);
    expect(html).toContain('data-testid="manual-metrics"');
    // one link per question in the list (the first screen's evidence links come on top)
    const list = html.replace(/<section class="first-screen"[\s\S]*?<\/section>/, '');
    expect(list.match(/<a href="#\/runs\/[^"]+\/manual\/[^"]+">/g)).toHaveLength(10);
    const omitted = summary.judgeMetrics[0].warnings.filter((w) => w.omitted > 0);
    expect(omitted.length).toBeGreaterThan(0);
    const warnings = /data-testid="warning-omissions">([\s\S]*?)<\/table>/.exec(html)![1];
    expect(warnings.match(/<tr>/g)!.length - 1).toBe(omitted.length);
    expect(html).toContain('No annotations yet');
  });

  it("the run page opens on report.html's first screen: the same facts from the store, its evidence on the question pages", () => {
    const { firstScreen } = api.overview(store.getRun(runId)!) as { firstScreen: FirstScreen };
    expect(firstScreen).toEqual(writeManualQaOutputs(store, runId, mkdtempSync(join(tmpdir(), 'manual-view-out-'))).firstScreen);
    const { summary, questions } = api.overview(store.getRun(runId)!) as { summary: ManualQaRunSummary; questions: QuestionRow[] };
    const html = renderToStaticMarkup(<ManualRunPanel runId={runId} summary={summary} questions={questions} firstScreen={firstScreen} />);
    const screen = /<section class="first-screen" data-testid="first-screen">[\s\S]*?<\/section>/.exec(html)![0];
    // before the figures
    expect(html.indexOf(screen)).toBeLessThan(html.indexOf('data-testid="manual-metrics"'));
    expect(screen).toContain(`<b>Verdict:</b> ${summary.outcomes.fail} of ${summary.questions} answers failed`);
    expect(screen).toContain('<b>Expected here:</b>');
    expect(screen).toContain('the manual fault profiles omit_warning, drop_step of the reference head unit');
    expect(firstScreen.findings.length).toBeGreaterThan(0);
    for (const f of firstScreen.findings) expect(screen).toContain(`<a href="#/runs/${runId}/manual/${encodeURIComponent(f.item!)}">evidence: question ${f.item} →</a>`);
  });

  it('the question view: the annotation form starts blank, one checkbox per mark, and the evaluators\' judgements stay hidden (blinded)', () => {
    const key = store.itemResults(runId)[0].key;
    const data = api.question(store.getRun(runId)!, key) as QuestionData;
    const evaluation = data.result!.evaluations[0];
    const html = renderToStaticMarkup(<ManualQuestionPanel runId={runId} path="/x" data={data} onSaved={() => undefined} />);
    expect(html).toContain('data-testid="annotation-form"');
    const boxes = html.match(/<input type="checkbox"[^>]*>/g)!;
    // per reference fact covered / essential / safety-critical, per answer fact relevant / correct, then the answer's
    // confidence and actionability and the switch that adds the test-set marks (off: their columns are hidden)
    expect(boxes).toHaveLength(evaluation.referenceFacts.length * 3 + evaluation.answerFacts.length * 2 + 3);
    expect(boxes.filter((b) => /aria-label="(relevantToQuestion|correctInManual) /.test(b))).toHaveLength(0);
    // nothing is pre-checked, whatever the evaluator decided (it covered some facts and tagged some essential)
    expect(evaluation.coverage.some((c) => c.covered) || evaluation.referenceFacts.some((f) => f.essential)).toBe(true);
    expect(boxes.filter((b) => / checked/.test(b))).toEqual([]);
    // the evaluators' facts and labels are not on the page until the rater asks for them
    expect(html).not.toContain('data-testid="reference-facts"');
    expect(html).toContain('data-testid="show-judgements"');
  });

  it('the reliability table shows both conventions per k, and nothing without repeats', () => {
    const rel = reliability([[true, false, true], [false, false, false]]);
    const html = renderToStaticMarkup(<ReliabilityTable runs={[{ name: 'a', reliability: rel }]} />);
    // k = 2: pass^2 unbiased (1/3 + 0)/2, first two trials: none passes both
    expect(html).toContain('16.7 % · 0.0 %');
    expect(html.match(/<tr>/g)).toHaveLength(4);
    expect(renderToStaticMarkup(<ReliabilityTable runs={[{ name: 'a', reliability: undefined }]} />)).toBe('');
  });
});
