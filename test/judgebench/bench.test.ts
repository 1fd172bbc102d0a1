import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { createProvider } from '../../src/llm/index.ts';
import type { LlmProvider } from '../../src/llm/types.ts';
import { toJsonl } from '../../src/judgebench/dataset.ts';
import { generateDataset } from '../../src/judgebench/generator.ts';
import { llmConfiguration, runConfiguration, summarize, type ConfigurationSummary } from '../../src/judgebench/runner.ts';
import { TECHNIQUES } from '../../src/judgebench/techniques.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { fakeJudgeModel } from './fakeJudgeModel.ts';

const generated = generateDataset({ seed: 42 });
let server: FakeLlmServer;
let provider: LlmProvider;
let dir: string;

beforeAll(async () => {
  server = await startFakeLlmServer({ respond: fakeJudgeModel(generated) });
  provider = createProvider(`openai-compat:${server.url}/v1#truthful`, { maxConcurrent: 16 });
  dir = mkdtempSync(join(tmpdir(), 'judgebench-'));
});
afterAll(async () => {
  await provider.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('adaptive self-consistency on the generated 600-pair set', () => {
  it('makes at least 35% fewer calls than SC-5 with identical verdicts when the model is consistent', async () => {
    const sc5 = llmConfiguration('fake', 'sc-5', [provider]);
    const adaptive = llmConfiguration('fake', 'adaptive-sc-5', [provider]);
    const sc5Results = await runConfiguration(sc5, generated, { concurrency: 16 });
    const adaptiveResults = await runConfiguration(adaptive, generated, { concurrency: 16 });
    expect(adaptiveResults.map((r) => r.fits)).toEqual(sc5Results.map((r) => r.fits));
    const sc5Calls = summarize(sc5, sc5Results).calls;
    const adaptiveCalls = summarize(adaptive, adaptiveResults).calls;
    expect(sc5Calls).toBe(3000);
    const saving = 1 - adaptiveCalls / sc5Calls;
    expect(saving).toBeGreaterThanOrEqual(0.35);
    expect(adaptiveCalls).toBe(1800); // 3 of 5 paths settle a unanimous majority: 40% fewer
  }, 120_000);
});

describe('icabench judge-bench', () => {
  it('runs every technique from a config against the fake server and writes summary.json, results.json and report.html', async () => {
    const small = generated.slice(0, 12);
    const datasetPath = join(dir, 'small.jsonl');
    writeFileSync(datasetPath, toJsonl(small));
    const configPath = join(dir, 'judge-bench.yaml');
    const ref = (name: string) => `openai-compat:${server.url}/v1#${name}`;
    writeFileSync(
      configPath,
      [
        'name: fake-bench',
        'dataset: small.jsonl',
        'concurrency: 4',
        'prices:',
        `  "${ref('truthful')}": { inputPerMTokUsd: 1.0, outputPerMTokUsd: 2.0 }`,
        'judges:',
        '  - kind: oracle',
        '  - kind: llm',
        '    name: fake',
        `    models: ["${ref('truthful')}"]`,
        `    techniques: [${TECHNIQUES.filter((t) => t !== 'ar').join(', ')}]`,
        '  - kind: llm',
        '    name: ensemble',
        `    models: ["${ref('truthful')}", "${ref('truthful-b')}", "${ref('contrary')}"]`,
        '    techniques: [ar]',
      ].join('\n'),
    );
    const out = join(dir, 'out');
    await main(['node', 'icabench', 'judge-bench', configPath, '--out', out]);
    expect(process.exitCode ?? 0).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as ConfigurationSummary[];
    expect(summary.map((s) => `${s.judge}/${s.technique}`)).toEqual(['oracle/rules', ...TECHNIQUES.filter((t) => t !== 'ar').map((t) => `fake/${t}`), 'ensemble/ar']);
    for (const s of summary) {
      expect(s.pairs).toBe(12);
      expect(s.f1).toBe(1);
      for (const key of ['judge', 'technique', 'precision', 'recall', 'f1', 'perCategoryAccuracy', 'meanLatencyMs', 'tokensIn', 'tokensOut', 'costPerRequest', 'calls']) {
        expect(s).toHaveProperty(key);
      }
    }
    const io = summary.find((s) => s.technique === 'io')!;
    expect(io.costPerRequest).toBeCloseTo((io.tokensIn * 1 + io.tokensOut * 2) / 1e6 / 12, 12);
    expect(summary.find((s) => s.technique === 'rules')!.costPerRequest).toBe(0);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('F1 vs time');
    expect(html).toContain('F1 vs cost');
    expect(html).toMatch(/Chart\.js v4/);
    expect(html).not.toMatch(/<script[^>]+src=/);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(results.pairs['fake/io']).toHaveLength(12);
  }, 60_000);

  it('runs one judge on a dataset without a config (--dataset --judges oracle)', async () => {
    const datasetPath = join(dir, 'generated.jsonl');
    writeFileSync(datasetPath, toJsonl(generated));
    const out = join(dir, 'oracle-out');
    await main(['node', 'icabench', 'judge-bench', '--dataset', datasetPath, '--judges', 'oracle', '--out', out]);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as ConfigurationSummary[];
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({ judge: 'oracle', technique: 'rules', pairs: 600, f1: 1, calls: 0 });
  });

  it('reports a config error with the file, line and field', async () => {
    const configPath = join(dir, 'bad.yaml');
    writeFileSync(configPath, ['generate: { seed: 1 }', 'judges:', '  - kind: llm', '    models: [x]', '    techniques: [sc-7]'].join('\n'));
    const errors: string[] = [];
    const original = console.error;
    console.error = (message: string) => errors.push(message);
    try {
      await main(['node', 'icabench', 'judge-bench', configPath, '--out', join(dir, 'never')]);
    } finally {
      console.error = original;
    }
    expect(process.exitCode).toBe(2);
    process.exitCode = 0;
    expect(errors.join('\n')).toMatch(/bad\.yaml:5: judges\.0\.techniques\.0/);
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });
});

describe('icabench judge-bench with its model server down', () => {
  it('checks every model once before judging: it stops at once naming the model and the fix, and writes nothing', async () => {
    const down = await startFakeLlmServer({ respond: fakeJudgeModel(generated) });
    const deadUrl = down.url;
    await down.close();
    const datasetPath = join(dir, 'down.jsonl');
    writeFileSync(datasetPath, toJsonl(generated.slice(0, 6)));
    const errors: string[] = [];
    const original = console.error;
    console.error = (message: string) => errors.push(message);
    try {
      await main(['node', 'icabench', 'judge-bench', '--dataset', datasetPath, '--judges', `oracle,openai-compat:${deadUrl}/v1#truthful`, '--techniques', 'io,cot-3', '--out', join(dir, 'down-out')]);
    } finally {
      console.error = original;
    }
    expect(process.exitCode).toBe(2);
    process.exitCode = 0;
    expect(errors.join('\n')).toMatch(/judge-bench was not started, nothing was written: a model it names is not available\n {2}openai-compat:http:\/\/127\.0\.0\.1:\d+\/v1#truthful: no OpenAI-compatible server at http:\/\/127\.0\.0\.1:\d+\/v1 \(.*\)\n {4}fix: /);
    expect(existsSync(join(dir, 'down-out'))).toBe(false);
  });
});

describe('shipped judge-bench configs', () => {
  it('validate', async () => {
    const { loadJudgeBenchConfig } = await import('../../src/judgebench/config.ts');
    const root = new URL('../../bench-configs/judge-bench/', import.meta.url);
    const full = loadJudgeBenchConfig(new URL('judge-bench.yaml', root).pathname);
    expect(full.judges.map((j) => j.kind)).toEqual(['oracle', 'llm', 'llm']);
    const oracleOnly = loadJudgeBenchConfig(new URL('judge-bench-oracle.yaml', root).pathname);
    expect(oracleOnly.generate).toEqual({ seed: 42, users: 100, includePreferences: false });
  });
});
