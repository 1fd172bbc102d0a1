import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { exportJsonl } from '../../src/store/export.ts';
import { compareRefusal } from '../../src/domain/comparable.ts';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { comparedKindGroups, configModelRefs, campaignConfigSchemaFor, readCampaignKind } from '../../src/kinds/registry.ts';
import { ConfigCatalog } from '../../src/server/configs.ts';
import { loadManualQaConfig, manualSkillFor } from '../../src/kinds/manual-qa/config.ts';
import { ManualCorpus } from '../../src/manual/corpus.ts';
import { buildManualIndex } from '../../src/manual/manual-index.ts';
import type { ConnectedHeadUnit } from '../../src/run/connect.ts';
import { InProcessHeadUnit } from '../../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../../src/headunit/reference/reference-headunit.ts';
import { SutError } from '../../src/headunit/types.ts';
import { MANUAL_QA_FACTS } from '../../src/kinds/manual-qa/item.ts';
import { loadManualQaRun } from '../../src/kinds/manual-qa/results.ts';
import { MANUAL_FAULT_PROFILES } from '../../src/headunit/reference/manual-skill.ts';
import { metricFails } from '../../src/manual/model.ts';
import { writeManualQaOutputs, QUESTION_CSV_COLUMNS } from '../../src/kinds/manual-qa/outputs.ts';
import { ResultStore } from '../../src/store/store.ts';
import { dataPath, REPO_ROOT } from '../helpers/repoData.ts';
import { startHarness, type Harness } from '../server/helpers.ts';
import { campaignFromYaml } from '../kinds/dialogue/helpers.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { manualResponder } from './helpers.ts';
import { runManualQa } from '../helpers/run-kinds.ts';

const dir = mkdtempSync(join(tmpdir(), 'manual-run-'));
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const chapters = readdirSync(dataPath('bmw-manual/xml'))
  .filter((f) => f.endsWith('.xml'))
  .sort()
  .slice(0, 6)
  .map((f) => dataPath(`bmw-manual/xml/${f}`));

describe('campaign kinds: `kind:` selects the run path', () => {
  it('dialogue without kind, manual-qa by name; an unknown kind names the file, the line and the accepted kinds', () => {
    expect(readCampaignKind(resolve(REPO_ROOT, 'bench-configs/quickstart.yaml'))).toBe('dialogue');
    expect(readCampaignKind(resolve(REPO_ROOT, 'bench-configs/manual-qa.yaml'))).toBe('manual-qa');
    expect(readCampaignKind(write('explicit.yaml', 'name: x\nkind: dialogue\n'))).toBe('dialogue');
    // the dialogue loader accepts an explicit `kind: dialogue`
    expect(campaignFromYaml('kind: dialogue\nname: explicit\nconversations: 2\n').config.name).toBe('explicit');
    const bad = write('bad-kind.yaml', 'name: x\n\nkind: sightseeing\n');
    expect(() => readCampaignKind(bad)).toThrow(`${bad}:3: kind: unknown campaign kind "sightseeing"; accepted kinds: dialogue (the default), manual-qa, tool-agents, suite`);
  });

  it('icabench run refuses an unknown kind before touching the workspace', () => {
    const bad = write('bad-kind2.yaml', 'kind: 7\nname: x\n');
    const result = spawnSync(process.execPath, [resolve(REPO_ROOT, 'bin/icabench.js'), 'run', bad, '--workspace', join(dir, 'ws-bad')], { encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`${bad}:1: kind: unknown campaign kind 7; accepted kinds: dialogue (the default), manual-qa`);
  }, 60_000);
});

describe('a manual-QA campaign: questions to the reference head unit over the bridge, stored per question, resumable', () => {
  const config = write(
    'manual.yaml',
    `kind: manual-qa\nname: manual-small\nmanual: ${JSON.stringify(chapters)}\nlimit: 40\nseed: 3\nmanualFaults: { profiles: all, rate: 0.4 }\nomissionSearch: { budget: 25, seed: 2 }\nconcurrency: 2\n`,
  );
  let store: ResultStore;
  let runId: string;
  let harness: Harness;
  beforeAll(async () => {
    store = ResultStore.open(join(dir, 'ws', 'icabench.db'));
    const loaded = loadManualQaConfig(config);
    // stop after a few questions, then resume
    const controller = new AbortController();
    const first = await runManualQa(loaded, { store, signal: controller.signal, onProgress: (done) => done >= 10 && controller.abort() });
    runId = first.runId;
    expect(first.status).toBe('interrupted');
    expect(first.done).toBeLessThan(first.planned);
    expect(first.omission).toBeNull();
    const stored = store.itemResults(runId, { done: true }).length;
    expect(stored).toBe(first.done);
    const second = await runManualQa(loaded, { store, resumeRunId: runId });
    expect(second).toMatchObject({ runId, status: 'completed', done: 40, planned: 40 });
    expect(second.omission?.asked).toBeGreaterThan(0);
  }, 300_000);
  afterAll(async () => {
    await harness?.close();
    store?.close();
  });

  it('stores every planned question exactly once, with the answer, the evaluation and the facts', () => {
    const run = store.getRun(runId)!;
    expect(run).toMatchObject({ kind: 'manual-qa', mode: 'items', status: 'completed', planned: 40, stored: 40 });
    const data = loadManualQaRun(store, runId);
    expect(data.rows).toHaveLength(40);
    for (const row of data.rows) {
      expect(row.result?.status).toBe('completed');
      expect(row.result?.evaluations.map((e) => e.tier)).toEqual(['oracle']);
      expect(row.result?.evaluations[0].referenceFacts.length).toBeGreaterThan(0);
    }
    expect(store.runFacts(runId, MANUAL_QA_FACTS.omission)).toHaveLength(1);
    expect(data.setup).toMatchObject({ judges: ['oracle'], testSet: 'deterministic' });
    expect(data.setup!.retrieval).toMatch(/bm25/i);
  });

  it('the fault a question got is caught by the metric it targets (reference unit diagnostics as ground truth)', () => {
    const data = loadManualQaRun(store, runId);
    let fired = 0;
    let caught = 0;
    for (const row of data.rows) {
      const faults = ((row.result?.diagnostics as { manualFaults?: { profile: keyof typeof MANUAL_FAULT_PROFILES; metric: string }[] })?.manualFaults ?? []);
      for (const fault of faults) {
        fired++;
        const metric = MANUAL_FAULT_PROFILES[fault.profile];
        if (metricFails(row.result!.evaluations[0].metrics[metric])) caught++;
        expect(row.outcome).toBe('fail');
      }
    }
    expect(fired).toBeGreaterThan(5);
    expect(caught / fired).toBeGreaterThanOrEqual(0.95);
  });

  it('writes summary.json (per kind, difficulty, chapter; warning omissions), report.html, junit.xml (one case per question) and questions.csv', () => {
    const out = join(dir, 'out');
    const { summary } = writeManualQaOutputs(store, runId, out);
    const json = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(json).toMatchObject({ kind: 'manual-qa', planned: 40, questions: 40 });
    expect(json.outcomes.pass + json.outcomes.fail + json.outcomes.inconclusive + json.outcomes.error).toBe(40);
    expect(json.outcomes.fail).toBeGreaterThan(0);
    const tier = json.judgeMetrics[0];
    expect(tier.tier).toBe('oracle');
    expect(Object.keys(tier.byKind).length).toBeGreaterThan(1);
    expect(Object.keys(tier.byDifficulty).length).toBeGreaterThan(0);
    expect(Object.keys(tier.byChapter).length).toBeGreaterThan(1);
    // the deterministic tier judges relevance too: every answered question has sentences clearly on or off its topic
    expect(tier.metrics.relevance.judged + tier.metrics.relevance.notJudged).toBe(40);
    expect(tier.metrics.relevance.judged).toBeGreaterThan(30);
    const omitted = summary.judgeMetrics[0].warnings.find((w) => w.omitted > 0);
    expect(omitted?.example).toBeTruthy();
    expect(json.omissionSearch.asked).toBeGreaterThan(0);

    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('Warning omissions: oracle');
    expect(html).toContain('Warning-omission search');
    // the manual's warning text beside the answer that left it out
    const escaped = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
    expect(html).toContain(escaped(omitted!.text));
    expect(html).toContain(escaped(omitted!.example!.answer.slice(0, 60)));
    expect(html.match(/<details class="conv q"/g)).toHaveLength(40);
    expect(html).toContain('reference fact');

    const junit = readFileSync(join(out, 'junit.xml'), 'utf8');
    expect(junit.match(/<testcase /g)).toHaveLength(40);
    expect(junit.match(/<failure /g)).toHaveLength(json.outcomes.fail);
    const csv = readFileSync(join(out, 'questions.csv'), 'utf8').trim().split('\r\n');
    expect(csv[0]).toBe(QUESTION_CSV_COLUMNS.join(','));
    expect(csv).toHaveLength(41);
  });

  it('icabench export streams the stored questions as JSONL', async () => {
    const chunks: string[] = [];
    const out = new Writable({ write: (chunk, _enc, done) => (chunks.push(String(chunk)), done()) });
    expect(await exportJsonl(store, runId, out)).toBe(40);
    const first = JSON.parse(chunks.join('').split('\n')[0]);
    expect(first).toMatchObject({ key: expect.any(String), outcome: expect.stringMatching(/^(pass|fail|inconclusive|error)$/) });
    expect(first.result.evaluations[0].tier).toBe('oracle');
  });

  it('the bench app: lists the config as manual-qa, shows the run, its questions with their facts, and stores a rater\'s annotations with the alignment numbers', async () => {
    harness = await startHarness({ store });
    const configs = await harness.api('/api/configs');
    expect(configs.json.configs.find((c: { name: string }) => c.name === 'manual-qa.yaml')).toMatchObject({ kind: 'manual-qa', valid: true });
    expect(configs.json.configs.find((c: { name: string }) => c.name === 'quickstart.yaml')).toMatchObject({ kind: 'dialogue', valid: true });

    // the app serves the run's summary.json as icabench writes it
    const served = await harness.api(`/api/runs/${runId}/summary.json`);
    writeManualQaOutputs(store, runId, join(dir, 'out-app'));
    expect(`${JSON.stringify(served.json, null, 2)}\n`).toBe(readFileSync(join(dir, 'out-app', 'summary.json'), 'utf8'));

    const compare = await harness.api(`/api/compare?a=${runId}&b=${runId}`);
    expect(compare.status).toBe(400);
    expect(compare.json.error.code).toBe('unsupported_kind');

    const overview = await harness.api(`/api/runs/${runId}/manual`);
    expect(overview.status).toBe(200);
    expect(overview.json.questions).toHaveLength(40);
    expect(overview.json.summary.judgeMetrics[0].tier).toBe('oracle');
    const key = overview.json.questions[0].key;
    const detail = await harness.api(`/api/runs/${runId}/manual/questions/${encodeURIComponent(key)}`);
    expect(detail.status).toBe(200);
    const evaluation = detail.json.result.evaluations[0];
    expect(evaluation.referenceFacts.length).toBeGreaterThan(0);

    const marks = (rater: string, flip: boolean) => ({
      rater,
      referenceFacts: evaluation.referenceFacts.map((f: { id: string; essential: boolean; safetyCritical: boolean }) => ({ factId: f.id, covered: !flip, essential: f.essential, safetyCritical: f.safetyCritical })),
      answerFacts: evaluation.answerFacts.map((f: { id: string }) => ({ factId: f.id, relevant: true, correct: !flip })),
    });
    const saved = await harness.api(`/api/runs/${runId}/manual/questions/${encodeURIComponent(key)}/annotations`, { body: marks('ann', false) });
    expect(saved.status, JSON.stringify(saved.json)).toBe(201);
    await harness.api(`/api/runs/${runId}/manual/questions/${encodeURIComponent(key)}/annotations`, { body: marks('bob', true) });
    const wrong = await harness.api(`/api/runs/${runId}/manual/questions/${encodeURIComponent(key)}/annotations`, {
      body: { ...marks('ann', false), referenceFacts: [{ factId: 'nope', covered: true, essential: true, safetyCritical: false }] },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.message).toContain('referenceFacts.0.factId: "nope" is not a fact of this evaluation');
    const partial = await harness.api(`/api/runs/${runId}/manual/questions/${encodeURIComponent(key)}/annotations`, { body: { ...marks('ann', false), referenceFacts: marks('ann', false).referenceFacts.slice(1) } });
    expect(partial.status).toBe(400);
    expect(partial.json.error.message).toContain(`referenceFacts: fact "${evaluation.referenceFacts[0].id}" is not marked`);
    const after = await harness.api(`/api/runs/${runId}/manual`);
    expect(after.json.summary.alignment).toMatchObject({ tier: 'oracle', annotations: 2, raters: 2 });
    // the rater labels equal the tier's tags: precision and recall 1 where the tier tagged something
    expect(after.json.summary.alignment.report.tags.essential.recall).toBe(1);
    const again = await harness.api(`/api/runs/${runId}/manual/questions/${encodeURIComponent(key)}`);
    expect(again.json.annotations.map((a: { rater: string }) => a.rater).sort()).toEqual(['ann', 'bob']);
  }, 60_000);
});

describe('a manual-QA campaign with an LLM evaluator tier (local fake server; no quality claim)', () => {
  let server: FakeLlmServer | undefined;
  afterAll(async () => server?.close());

  it('runs both tiers on every question and reports each; the first tier decides the outcome; an unavailable model stops the run before anything is stored', async () => {
    server = await startFakeLlmServer({ respond: manualResponder(), models: ['judge-model', 'other-model'] });
    const ref = `openai-compat:${server.url}/v1#judge-model`;
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'manual-llm-')), 'icabench.db'));
    try {
      const yaml = (judges: string[]) => `kind: manual-qa\nname: manual-llm\nmanual: ${JSON.stringify(chapters.slice(0, 2))}\nlimit: 3\njudges: ${JSON.stringify(judges)}\n`;
      const missing = loadManualQaConfig(write('llm-missing.yaml', yaml(['oracle', `openai-compat:${server.url}/v1#no-such-model`])));
      await expect(runManualQa(missing, { store })).rejects.toThrow(/a model it names is not available\n  judge [^\n]*no-such-model/);
      expect(store.listRuns()).toHaveLength(0);

      const loaded = loadManualQaConfig(write('llm.yaml', yaml(['oracle', ref])));
      const result = await runManualQa(loaded, { store });
      expect(result.status).toBe('completed');
      const { summary } = writeManualQaOutputs(store, result.runId, join(dir, 'llm-out'));
      expect(summary.judgeMetrics).toHaveLength(2);
      expect(summary.judgeMetrics[0].tier).toBe('oracle');
      expect(summary.judgeMetrics[1].tier).toMatch(/^openai-compat:.*judge-model$/);
      // each evaluation names its judge by the reference the run's tiers.resolved records
      expect(summary.tiers[0].judges.map((j) => j.ref)).toEqual(['oracle', summary.judgeMetrics[1].tier]);
      expect(summary.setup?.judges).toEqual(['oracle', summary.judgeMetrics[1].tier]);
      // the model calls are stored with the run and summarised from the store
      expect(summary.llm?.calls).toBe(server.chatRequests().length);
      expect(summary.invocations).toHaveLength(1);
      expect(summary.invocations[0].modelHosts).toEqual([{ ref, host: `${server.url}/v1` }]);
      const data = loadManualQaRun(store, result.runId);
      for (const row of data.rows) {
        expect(row.result!.evaluations.map((e) => e.tier)).toEqual(['oracle', summary.judgeMetrics[1].tier]);
        expect(row.result!.evaluations[1].metrics.relevance.status).toBe('judged');
        const oracleFails = Object.values(row.result!.evaluations[0].metrics).some(metricFails);
        expect(row.outcome).toBe(oracleFails ? 'fail' : 'pass');
      }
      expect(store.itemResults(result.runId).map((r) => r.outcome)).toEqual(data.rows.map((r) => r.outcome));
      expect(summary.judgeMetrics[1].metrics.relevance.judged).toBe(3);
      expect(server.chatRequests().length).toBeGreaterThan(0);
      // two tiers: evaluator bias (Kruskal–Wallis across the tiers, GEAR §4.5) per metric, in the summary and the report
      expect(summary.evaluatorBias?.completeness_hard?.n).toEqual({ oracle: summary.judgeMetrics[0].metrics.completeness_hard.judged, [summary.judgeMetrics[1].tier]: 3 });
      expect(summary.preset.method).toBe('lab');
      expect(readFileSync(join(dir, 'llm-out', 'report.html'), 'utf8')).toContain('Evaluator bias (Kruskal–Wallis across the evaluator tiers)');
    } finally {
      store.close();
    }
  }, 120_000);
});

describe('the GEAR paper preset (bench-configs/manual-qa-paper.yaml)', () => {
  it('runs offline through icabench run and its summary states the preset', () => {
    const shipped = readFileSync(resolve(REPO_ROOT, 'bench-configs/manual-qa-paper.yaml'), 'utf8');
    const config = write('manual-qa-paper.yaml', shipped.replace('manual: [../data/bmw-manual/xml]', `manual: ${JSON.stringify(chapters.slice(0, 2))}`).replace('limit: 60', 'limit: 6'));
    expect(loadManualQaConfig(config).config).toMatchObject({ method: 'paper', retrieval: 'dense' });
    const out = join(dir, 'paper-out');
    const result = spawnSync(process.execPath, [resolve(REPO_ROOT, 'bin/icabench.js'), 'run', config, '--workspace', join(dir, 'paper-ws'), '--out', out], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.preset).toEqual({ method: 'paper', statement: expect.stringMatching(/^paper preset: Beyranvand et al\., GEAR/) });
    expect(summary.questions).toBe(6);
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain('paper preset: Beyranvand et al.');
    // GEAR's evaluation set: one question per main section
    expect(loadManualQaConfig(config).config.onePerSection).toBe(true);
    const store = ResultStore.open(join(dir, 'paper-ws', 'icabench.db'));
    const sections = store.itemResults(summary.run.id).map((row) => (row.item as { sectionIds: string[] }).sectionIds[0]);
    store.close();
    expect(new Set(sections).size).toBe(6);
    // the bias test is GEAR's family pairs, not one test across the tiers; offline it says what it needs
    expect(summary.evaluatorBias).toBeUndefined();
    expect(summary.familyBias).toMatchObject({ assistantFamily: null, pairs: [], undecided: expect.stringMatching(/assistantFamily/) });
    expect(report).toContain('Not tested: the assistant&#39;s model family is not set');
  }, 180_000);
});

describe('compare on a manual-QA run', () => {
  it('refuses it by run id with the rule the bench app shows (src/domain/comparable.ts), before reading anything', async () => {
    const config = write('compared.yaml', `kind: manual-qa\nname: compared\nmanual: ${JSON.stringify(chapters.slice(0, 1))}\nlimit: 2\n`);
    const workspace = join(dir, 'compared-ws');
    const ran = spawnSync(process.execPath, [resolve(REPO_ROOT, 'bin/icabench.js'), 'run', config, '--workspace', workspace, '--out', join(dir, 'compared-out')], { encoding: 'utf8' });
    expect(ran.status, ran.stderr).toBe(0);
    const runId = JSON.parse(readFileSync(join(dir, 'compared-out', 'summary.json'), 'utf8')).run.id;
    const result = spawnSync(process.execPath, [resolve(REPO_ROOT, 'bin/icabench.js'), 'compare', runId, runId, '--workspace', workspace], { encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`compare: ${compareRefusal('manual-qa', await comparedKindGroups())}`);
  }, 120_000);

  it('refuses it with the reason, by run directory', () => {
    const out = join(dir, 'not-dialogue');
    writeFileSync(join(dir, 'x.json'), JSON.stringify({ schemaVersion: 1, kind: 'manual-qa' }));
    const result = spawnSync(process.execPath, [resolve(REPO_ROOT, 'bin/icabench.js'), 'compare', join(dir, 'x.json'), join(dir, 'x.json'), '--workspace', out], { encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('x.json: the summary of a manual-qa run; compare and the conversation report read runs of conversations only (dialogue, suite, live)');
  }, 60_000);
});

describe('a manual-QA run whose head unit leaves', () => {
  it('stops (interrupted, with the reason) instead of recording the rest as errors, and resumes when the unit is back', async () => {
    const loaded = loadManualQaConfig(write('leaving.yaml', `kind: manual-qa\nname: leaving\nmanual: ${JSON.stringify(chapters.slice(0, 2))}\nlimit: 12\nconcurrency: 1\n`));
    const corpus = new ManualCorpus(await buildManualIndex(loaded.files));
    const { skill } = await manualSkillFor(loaded.config, corpus);
    const unit = new InProcessHeadUnit(new ReferenceHeadUnit({ manual: { skill } }));
    let readyChecks = 0;
    const connected = (leavesAfter: number): ConnectedHeadUnit => ({
      connection: unit,
      bridge: null,
      reference: null,
      ensureReady: async () => {
        if (++readyChecks > leavesAfter) throw new SutError('unavailable', 'head unit "ref" left and did not dial in again within 5 s');
      },
      close: async () => undefined,
    });
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'manual-leave-')), 'icabench.db'));
    try {
      const first = await runManualQa(loaded, { store, headUnit: connected(5) });
      expect(first).toMatchObject({ status: 'interrupted', done: 5, planned: 12 });
      expect(first.stopReason).toContain('did not dial in again');
      expect(store.itemResults(first.runId, { done: true }).every((r) => r.outcome !== 'error')).toBe(true);
      readyChecks = 0;
      const second = await runManualQa(loaded, { store, resumeRunId: first.runId, headUnit: connected(Infinity) });
      expect(second).toMatchObject({ status: 'completed', stopReason: null, done: 12 });
      expect(store.getRun(first.runId)).toMatchObject({ stored: 12, status: 'completed' });
    } finally {
      store.close();
    }
  }, 120_000);
});

describe('the command line on a manual-QA config', () => {
  it('icabench run writes the four outputs; runs lists it by kind; report re-renders it; --simulator is refused', () => {
    const cli = (args: string[]) => spawnSync(process.execPath, [resolve(REPO_ROOT, 'bin/icabench.js'), ...args], { encoding: 'utf8' });
    const config = write('cli.yaml', `kind: manual-qa\nname: manual-cli\nmanual: ${JSON.stringify(chapters.slice(0, 2))}\nlimit: 5\n`);
    const ws = join(dir, 'ws-cli');
    const run = cli(['run', config, '--workspace', ws, '--out', join(dir, 'cli-out')]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^run (\S+) completed: 5\/5 questions, \d+ failed, 0 head unit errors; oracle: completeness [\d.]+/m);
    const runId = /^run (\S+) completed/m.exec(run.stdout)![1];
    for (const file of ['summary.json', 'report.html', 'junit.xml', 'questions.csv']) expect(readFileSync(join(dir, 'cli-out', file), 'utf8').length).toBeGreaterThan(0);
    const runs = cli(['runs', '--workspace', ws]);
    expect(runs.stdout).toMatch(new RegExp(`${runId}\\s+completed\\s+manual-qa\\s+5/5\\s+manual-cli`));
    const report = cli(['report', runId, '--workspace', ws, '--out', join(dir, 'cli-again')]);
    expect(report.status, report.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'cli-again', 'summary.json'), 'utf8'))).toMatchObject({ kind: 'manual-qa', questions: 5 });
    const refused = cli(['run', config, '--workspace', ws, '--simulator', 'template']);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('--simulator: a manual-qa campaign asks the questions of its test set; it has no user simulator');
  }, 120_000);
});

describe('a manual-QA campaign against an OpenAI-compatible chat endpoint (the HTTP chat adapter)', () => {
  let server: FakeLlmServer | undefined;
  afterAll(async () => server?.close());

  it('sends each question as a user turn and judges the endpoint’s answer', async () => {
    server = await startFakeLlmServer({ respond: () => 'Maybe check the settings menu, I think.' });
    const loaded = loadManualQaConfig(
      write('http.yaml', `kind: manual-qa\nname: manual-http\nmanual: ${JSON.stringify(chapters.slice(0, 2))}\nlimit: 4\nheadUnit: { type: http, baseUrl: "${server.url}/v1", model: assistant }\n`),
    );
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'manual-http-')), 'icabench.db'));
    try {
      const result = await runManualQa(loaded, { store });
      expect(result).toMatchObject({ status: 'completed', done: 4 });
      const data = loadManualQaRun(store, result.runId);
      expect(data.setup?.retrieval).toBe("the head unit's own (http)");
      const questions = server.chatRequests().map((r) => r.body.messages.at(-1).content);
      expect(questions.sort()).toEqual(data.rows.map((r) => r.item.question).sort());
      for (const row of data.rows) {
        expect(row.result?.answer).toBe('Maybe check the settings menu, I think.');
        expect(row.result?.evaluations[0].metrics.confidence).toMatchObject({ status: 'judged', value: 0 });
        expect(row.outcome).toBe('fail');
      }
    } finally {
      store.close();
    }
  }, 60_000);
});

describe('the bench app config catalog with campaign kinds', () => {
  it('validates each config by its kind, names the kind, reports an unknown kind at its field, and counts evaluator models', async () => {
    const configs = mkdtempSync(join(tmpdir(), 'catalog-'));
    writeFileSync(join(configs, 'm.yaml'), `kind: manual-qa\nname: m\nmanual: [x.xml]\njudges: [oracle, "ollama:qwen3:14b"]\n`);
    writeFileSync(join(configs, 'bad.yaml'), `name: b\nkind: sightseeing\n`);
    writeFileSync(join(configs, 'm-bad.yaml'), `kind: manual-qa\nname: m\nmanual: []\n`);
    const catalog = new ConfigCatalog(configs, campaignConfigSchemaFor);
    const list = await catalog.list();
    expect(list.find((c) => c.name === 'm.yaml')).toMatchObject({ kind: 'manual-qa', valid: true });
    expect(list.find((c) => c.name === 'bad.yaml')).toMatchObject({ kind: null, valid: false, errors: [{ path: 'kind', line: 2, message: expect.stringContaining('accepted kinds: dialogue (the default), manual-qa, tool-agents, suite') }] });
    expect(list.find((c) => c.name === 'm-bad.yaml')).toMatchObject({ kind: 'manual-qa', valid: false, errors: [{ path: 'manual', line: 3 }] });
    expect(await catalog.modelRefs(configModelRefs)).toEqual(['ollama:qwen3:14b']);
    // a tool-agents config's deterministic tiers are not model references (the rig status showed `model rule: FAIL`)
    writeFileSync(join(configs, 't.yaml'), `kind: tool-agents\nname: t\ntasks: [t.json]\nsimulator: "ollama:user-model"\njudges: [rule, "ollama:judge-model"]\n`);
    expect((await catalog.modelRefs(configModelRefs)).sort()).toEqual(['ollama:judge-model', 'ollama:qwen3:14b', 'ollama:user-model']);
  });
});
