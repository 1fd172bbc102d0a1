import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadManualQaConfig } from '../../src/kinds/manual-qa/config.ts';
import { readTestSet } from '../../src/manual/testset.ts';
import { runCli } from '../helpers/cli.ts';
import { startFakeLlmServer, systemPromptOf, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { dataPath } from '../helpers/repoData.ts';
import { manualResponder } from './helpers.ts';

/**
 * GEAR's two-call test-set generator as a command (`icabench manual generate`) and as a manual-QA config's
 * `generate:` block, end to end through the CLI against the local fake model server (Ollama and OpenAI-compatible).
 * Without a model it says so first, naming the field to set, and exits 2 with nothing written.
 */
const dir = mkdtempSync(join(tmpdir(), 'manual-generate-'));
const chapter = join(dataPath('bmw-manual/xml'), readdirSync(dataPath('bmw-manual/xml')).filter((f) => f.endsWith('.xml')).sort()[0]);
let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ respond: manualResponder() });
});
afterAll(() => server.close());

const questionCalls = () => server.chatRequests().filter((r) => systemPromptOf(r).includes('question step of the Test Set Generator'));

describe('icabench manual generate', () => {
  it('without --model: says the generator needs a model and the option to set, exit 2, before reading or writing anything', async () => {
    const out = join(dir, 'none.jsonl');
    const result = await runCli(['manual', 'generate', join(dir, 'no-such-manual.xml'), '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(/the test-set generator needs a model and none is configured: set --model to a model reference/);
    expect(existsSync(out)).toBe(false);
  }, 60_000);

  it('with a model that is not there: names it and the fix, exit 2, no call made and nothing written', async () => {
    const out = join(dir, 'absent.jsonl');
    const before = server.chatRequests().length;
    const result = await runCli(['manual', 'generate', chapter, '--model', 'ollama:not-pulled:7b', '--ollama-host', server.url, '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the test set was not generated, nothing was written: a model it names is not available\n.*does not have not-pulled:7b[\s\S]*fix: ollama pull not-pulled:7b/);
    expect(server.chatRequests().length).toBe(before);
    expect(existsSync(out)).toBe(false);
  }, 60_000);

  it('OpenAI-compatible: two calls per question on a seeded sample of sections, written as a valid test set', async () => {
    const out = join(dir, 'openai.jsonl');
    const before = questionCalls().length;
    const result = await runCli(['manual', 'generate', chapter, '--model', `openai-compat:${server.url}/v1#qwen2.5:14b`, '--sections', '3', '--out', out]);
    expect(result.stderr).not.toMatch(/icabench:/);
    expect(result.code).toBe(0);
    const items = await readTestSet(out);
    // the fake model asks one question per section; each answer rests on the main section it was given
    expect(items).toHaveLength(3);
    expect(new Set(items.map((i) => i.sectionIds[0])).size).toBe(3);
    for (const item of items) expect(item.generator).toBe(`llm:openai-compat:${server.url}/v1#qwen2.5:14b`);
    expect(questionCalls().length - before).toBe(3);
    expect(result.stdout).toMatch(/3 questions \(3 procedure\)/);
    expect(result.stdout).toMatch(/3 sections, related sections by /);
  }, 120_000);

  it('Ollama (--ollama-host), one question per section kept', async () => {
    const out = join(dir, 'ollama.jsonl');
    const result = await runCli(['manual', 'generate', chapter, '--model', 'ollama:qwen2.5:14b', '--ollama-host', server.url, '--sections', '2', '--one-per-section', '--out', out]);
    expect(result.code).toBe(0);
    const items = await readTestSet(out);
    expect(items.map((i) => i.generator)).toEqual(['llm:ollama:qwen2.5:14b', 'llm:ollama:qwen2.5:14b']);
    expect(server.chatRequests().some((r) => r.api === 'ollama')).toBe(true);
  }, 120_000);
});

describe('a manual-QA config that generates its test set at run start (generate:)', () => {
  it('generate without a model: the config error names generate.model; icabench run exits 2 before the workspace', async () => {
    const config = join(dir, 'no-model.yaml');
    writeFileSync(config, `kind: manual-qa\nname: gen\nmanual: [${JSON.stringify(chapter)}]\ngenerate: { sections: 2 }\n`);
    expect(() => loadManualQaConfig(config)).toThrow(/no-model\.yaml:4: generate\.model: missing required field "model" \(the test-set generator needs a model and none is configured: set generate\.model/);
    const result = await runCli(['run', config, '--workspace', join(dir, 'ws-none'), '--out', join(dir, 'out-none')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/set generate\.model to a model reference/);
    expect(existsSync(join(dir, 'ws-none'))).toBe(false);
  }, 60_000);

  it('testSet and generate together are refused', () => {
    const config = join(dir, 'both.yaml');
    writeFileSync(config, `kind: manual-qa\nname: gen\nmanual: [${JSON.stringify(chapter)}]\ntestSet: set.jsonl\ngenerate: { model: "ollama:qwen2.5:14b" }\n`);
    expect(() => loadManualQaConfig(config)).toThrow(/generate: give either testSet \(a file\) or generate/);
  });

  it('icabench run generates the questions with the model, asks them, and records the generation with the setup', async () => {
    const config = join(dir, 'gen.yaml');
    const model = `openai-compat:${server.url}/v1#qwen2.5:14b`;
    writeFileSync(config, `kind: manual-qa\nname: gen\nmanual: [${JSON.stringify(chapter)}]\ngenerate: { model: ${JSON.stringify(model)}, sections: 3, seed: 5 }\njudges: [oracle]\nconcurrency: 2\n`);
    const out = join(dir, 'out-gen');
    const result = await runCli(['run', config, '--workspace', join(dir, 'ws-gen'), '--out', out]);
    expect(result.stderr).not.toMatch(/icabench:/);
    expect(result.code).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.planned).toBe(3);
    expect(summary.questions).toBe(3);
    expect(summary.setup.testSet).toBe(`llm:${model}`);
    expect(summary.setup.generation).toMatchObject({ generator: `llm:${model}`, sections: 3, questions: 3, failures: [] });
  }, 180_000);
});
