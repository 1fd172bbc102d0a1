import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareRuns, RunComparisonSchema } from '../../src/analysis/compare.ts';
import { computeRunSummary, RunSummarySchema, type RunInfo } from '../../src/analysis/profile.ts';
import { csvField, escapeXml } from '../../src/report/escape.ts';
import { compareSummaryFiles, readRunSummary, writeComparisonReport, writeRunOutputs, writeRunReport } from '../../src/report/write.ts';
import { ResultStore } from '../../src/store/store.ts';
import { conversationVerdict, result, spec } from '../store/fixtures.ts';
import { findAll, parseCsv, parseXml } from './formats.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NASTY = `<script>alert("x")</script> & 'quoted', "comma, line\nbreak" ]]> \u0001 café 🚗`;
const run: RunInfo = { id: '20260302-183000-ab12', name: 'guided <quickstart> & co', mode: 'guided', status: 'completed', createdAt: '2026-03-02T18:30:00Z', finishedAt: null };

function conversations() {
  return [
    result('k-pass', [{ strategy: 'constraint_stacking', labels: [] }, {}], { score: 0.95 }),
    result('k-fail', [{ strategy: 'safety_probe', labels: ['safety_violation'], utterance: NASTY }, { labels: ['constraint_missed', 'context_forgotten'], reply: NASTY }], {
      score: 0.4,
      spec: spec('k-fail', { seed: { id: 'seed "7" <b>', text: 'x', requests: [{ intent: 'set_climate', setpointC: 21 }] } }),
    }),
    result('k-err', [{}], { status: 'sut_error', error: `head unit closed the socket\n${NASTY}`, verdicts: [] }),
    result('=k-inc', [{}], { verdicts: [conversationVerdict('oracle', null, null, 'inconclusive')], spec: spec('=k-inc', { persona: 'elderly' }) }),
  ];
}

describe('escaping helpers', () => {
  it('escapes XML and replaces forbidden characters', () => {
    expect(escapeXml(`a<b>&"'\u0001\r`)).toBe('a&lt;b&gt;&amp;&quot;&apos;\uFFFD&#13;');
  });
  it('quotes CSV fields only when needed and defuses formulas', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(' edge')).toBe('" edge"');
    expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvField(-0.5)).toBe('-0.5');
    expect(csvField(null)).toBe('');
  });
});

describe('writeRunReport', () => {
  const out = join(dir, 'run');
  const summary = computeRunSummary(conversations(), run);
  const files = writeRunReport(out, { run, summary, conversations: conversations(), extraSections: [{ title: 'Vehicle context', html: '<p id="vehicle-extra">CAN replay ok</p>' }] });

  it('writes summary.json as the validated RunSummary', () => {
    const written = JSON.parse(readFileSync(files.summary, 'utf8'));
    expect(RunSummarySchema.parse(written)).toEqual(summary);
    expect(readRunSummary(out)).toEqual(summary);
  });

  it('writes JUnit XML that parses, one testcase per conversation, with escaped labels and evidence', () => {
    const xml = parseXml(readFileSync(files.junit, 'utf8'));
    expect(xml.name).toBe('testsuites');
    // the inconclusive conversation needs review: a failure, not a skip
    expect(xml.attributes).toMatchObject({ tests: '4', failures: '2', errors: '1', skipped: '0' });
    const suite = findAll(xml, 'testsuite')[0];
    expect(suite.attributes.name).toBe(run.name);
    const cases = findAll(xml, 'testcase');
    expect(cases.map((c) => c.attributes.name)).toEqual(['k-pass', 'k-fail', 'k-err', '=k-inc']);
    expect(cases[1].attributes.classname).toBe('seed "7" <b>');
    // the rule that failed it, then one failure per finding with its turn, severity, judge and evidence
    const failures = findAll(cases[1], 'failure');
    expect(failures.map((f) => f.attributes.type)).toEqual(['findings', 'safety_violation', 'constraint_missed', 'context_forgotten']);
    expect(failures[0].attributes.message).toBe('failed by its findings (failOn: constraint_missed, context_forgotten, safety_violation); score 0.40 (oracle) is below θ too; 3 finding(s)');
    expect(failures.slice(1).map((f) => f.attributes.message)).toEqual([
      'turn 1: safety_violation [t1] (critical, oracle): safety_violation evidence',
      'turn 2: constraint_missed [t1] (major, oracle): constraint_missed evidence',
      'turn 2: context_forgotten [t1] (major, oracle): context_forgotten evidence',
    ]);
    expect(failures[1].text).toBe('safety_violation evidence');
    const error = findAll(cases[2], 'error')[0];
    expect(error.attributes.type).toBe('sut_error');
    // the control character cannot travel in XML; everything else arrives intact, line break included
    expect(error.attributes.message).toBe(`sut_error: head unit closed the socket\n${NASTY.replace('\u0001', '\uFFFD')}`);
    expect(findAll(cases[3], 'failure').map((f) => [f.attributes.type, f.attributes.message])).toEqual([['needs_review', 'needs review: no judge reached a verdict on C']]);
    expect(cases[0].children).toEqual([]);
  });

  it('writes conversations.csv with proper quoting', () => {
    const rows = parseCsv(readFileSync(files.csv, 'utf8'));
    expect(rows).toHaveLength(5);
    const header = rows[0];
    const col = (row: string[], name: string) => row[header.indexOf(name)];
    expect(rows.slice(1).map((r) => col(r, 'key'))).toEqual(['k-pass', 'k-fail', 'k-err', "'=k-inc"]);
    expect(col(rows[2], 'seed_id')).toBe('seed "7" <b>');
    expect(col(rows[2], 'labels')).toBe('safety_violation;constraint_missed;context_forgotten');
    expect(col(rows[2], 'outcome')).toBe('fail');
    expect(col(rows[2], 'score')).toBe('0.4');
    expect(col(rows[3], 'error')).toBe(`head unit closed the socket\n${NASTY}`);
    expect(col(rows[3], 'outcome')).toBe('error');
    expect(col(rows[4], 'outcome')).toBe('inconclusive');
    expect(rows.every((r) => r.length === header.length)).toBe(true);
  });

  it('writes a self-contained HTML report with the chart data and escaped content', () => {
    const html = readFileSync(files.html, 'utf8');
    expect(html).not.toMatch(/<(script|img|iframe)[^>]*\ssrc=/i);
    expect(html).not.toMatch(/<link\b/i);
    expect(html).not.toMatch(/(href|src)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(\s*['"]?https?:/i);
    expect(html).toContain('Chart.defaults'); // our chart script
    expect(html.length).toBeGreaterThan(200_000); // Chart.js inlined
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).toContain('<p id="vehicle-extra">CAN replay ok</p>');
    const data = JSON.parse(/<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]);
    expect(Object.keys(data.charts).sort()).toEqual(['dimensions', 'failureTypes', 'judgeTiers', 'positionAbsolute', 'positionRelative', 'scores', 'strategies']);
    expect(data.charts.failureTypes.series[0].data).toEqual([0, 0, 0, 1, 1, 0, 0, 1, 0, 0]);
    expect(data.charts.scores.series[0].data).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
    expect(data.charts.strategies.series[0].data).toEqual([0, 0, 0, 100, 0]);
    // every conversation listed, each with a drill-down
    expect(html.match(/<details class="conv"/g)).toHaveLength(4);
  });

  it('caps the drill-down and says so', () => {
    const capped = writeRunReport(join(dir, 'capped'), { run, summary, conversations: conversations(), drillDownLimit: 2 });
    const html = readFileSync(capped.html, 'utf8');
    expect(html.match(/<details class="conv"/g)).toHaveLength(2);
    expect(html.match(/<div class="conv"/g)).toHaveLength(2);
    expect(html).toContain('first 2 of 4 conversations');
  });

  it('renders extension sections of the summary that no extra section covers', () => {
    const extended = { ...summary, voice: { werPct: 7.5 } };
    const html = readFileSync(writeRunReport(join(dir, 'ext'), { run, summary: extended, conversations: [] }).html, 'utf8');
    expect(html).toContain('<h2>voice</h2>');
    expect(html).toContain('&quot;werPct&quot;: 7.5');
  });

  it('rejects an invalid summary naming the field', () => {
    const broken = { ...summary, failRate: 3 };
    expect(() => writeRunReport(join(dir, 'bad'), { run, summary: broken, conversations: [] })).toThrow(/summary: failRate/);
  });
});

describe('reports from the store and comparisons', () => {
  it('summarises and reports a stored run', async () => {
    const store = ResultStore.open(join(dir, 'ws', 'results.sqlite'));
    const all = conversations();
    const id = store.createRun({ name: 'stored', mode: 'guided', config: {}, plan: all.map((c) => c.spec) });
    for (const c of all.slice(0, 3)) store.saveConversation(id, c);
    const summary = (await writeRunOutputs(store, id, join(dir, 'stored'), { unit: 'the built-in reference head unit', faults: null })).summary;
    store.close();
    expect(summary).toMatchObject({ conversations: 3, passed: 1, failed: 1, errors: { sut_error: 1 }, run: { id, name: 'stored', status: 'running' } });
    expect(JSON.parse(readFileSync(join(dir, 'stored', 'summary.json'), 'utf8'))).toEqual(summary);
    expect(findAll(parseXml(readFileSync(join(dir, 'stored', 'junit.xml'), 'utf8')), 'testcase')).toHaveLength(3);
  });

  it('writes comparison.json and a self-contained comparison.html, and compares run directories', () => {
    const a = join(dir, 'run');
    const b = join(dir, 'baseline');
    const baselineRun = { ...run, id: 'b', name: 'baseline' };
    const baseline = [result('b1', [{}], { score: 0.9 }), result('b2', [{ labels: ['constraint_missed'] }], { score: 0.8 })];
    writeRunReport(b, { run: baselineRun, summary: computeRunSummary(baseline, baselineRun), conversations: baseline });
    const comparison = compareSummaryFiles(a, join(b, 'summary.json'));
    expect(comparison).toEqual(compareRuns(readRunSummary(a), readRunSummary(b)));
    expect(comparison.a.name).toBe(run.name);
    expect(comparison.b.name).toBe('baseline');
    const files = writeComparisonReport(join(dir, 'cmp'), comparison);
    expect(RunComparisonSchema.parse(JSON.parse(readFileSync(files.json, 'utf8')))).toEqual(comparison);
    const html = readFileSync(files.html, 'utf8');
    expect(html).not.toMatch(/(href|src)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).toContain('guided &lt;quickstart&gt; &amp; co');
    expect(html).toContain('Mann–Whitney');
    const data = JSON.parse(/<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]);
    expect(data.charts.enrichment.series[1].data).toEqual([0, 0, 0, 50, 0, 0, 0, 0, 0, 0]);
  });

  it('reads a summary.json written before the gate and judge references as judged by C alone', () => {
    const pure = conversations().map((c) => ({ ...c, failOn: [] }));
    const summary = computeRunSummary(pure, run);
    const { gate: _gate, ...withoutGate } = summary;
    const old = {
      ...withoutGate,
      judgeTiers: { conversation: summary.judgeTiers.conversation, turn: summary.judgeTiers.turn, decidedBy: summary.judgeTiers.decidedBy },
      perConversation: summary.perConversation.map(({ scorePass: _s, gate: _g, failedBy: _f, ...row }) => row),
    };
    const file = join(dir, 'pre-gate-summary.json');
    writeFileSync(file, JSON.stringify(old));
    expect(readRunSummary(file)).toEqual(summary);
    expect(compareRuns(readRunSummary(file), summary).a).toMatchObject({ failOn: [], failedByGate: 0, scoreOnlyFailRate: summary.failRate });
  });

  it('reads a summary.json written before findings and prompt_injection: findings counted from its rows, the new label at zero', () => {
    const summary = computeRunSummary(conversations(), run);
    const { conversationsWithFindings: _c, findingsRate: _r, ...rest } = summary;
    const dropLabel = <T extends Record<string, unknown>>(counts: T) => Object.fromEntries(Object.entries(counts).filter(([l]) => l !== 'prompt_injection'));
    const old = {
      ...rest,
      failureTypes: dropLabel(summary.failureTypes),
      strategies: Object.fromEntries(Object.entries(summary.strategies).map(([s, stats]) => [s, { ...stats, collateral: dropLabel(stats.collateral) }])),
      perConversation: summary.perConversation.map(({ findings: _f, undecidedTurns: _u, ...row }) => row),
    };
    const file = join(dir, 'pre-findings-summary.json');
    writeFileSync(file, JSON.stringify(old));
    const read = readRunSummary(file);
    // k-fail is the one completed conversation with labels, of three completed
    expect([read.conversationsWithFindings, read.findingsRate]).toEqual([1, 1 / 3]);
    expect([summary.conversationsWithFindings, summary.findingsRate]).toEqual([1, 1 / 3]);
    expect(read.failureTypes.prompt_injection).toEqual({ count: 0, share: 0, conversations: 0, prevalence: 0 });
    expect(read.perConversation[1].findings).toEqual([]);
  });

  it('names the file when a summary cannot be read', () => {
    const bad = join(dir, 'bad-summary.json');
    writeFileSync(bad, JSON.stringify({ schemaVersion: 1, conversations: -1 }));
    expect(() => readRunSummary(bad)).toThrow(/bad-summary\.json: .*conversations/);
    writeFileSync(bad, '{not json');
    expect(() => readRunSummary(bad)).toThrow(/bad-summary\.json: not valid JSON/);
    expect(() => readRunSummary(join(dir, 'missing'))).toThrow(/missing: cannot read/);
  });
});
