import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTestSet } from '../../src/manual/testset.ts';
import { startFakeLlmServer, systemPromptOf, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { manualResponder } from '../manual/helpers.ts';
import { dataPath } from '../helpers/repoData.ts';
import { startHarness, type Harness } from './helpers.ts';

/** The bench app's action for GEAR's test-set generator (POST /api/manual/testsets), against the local fake model server. */
const configs = mkdtempSync(join(tmpdir(), 'app-testsets-'));
let h: Harness;
let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ respond: manualResponder() });
  // the app reads only under its allowed folders: one chapter of the vendored manual beside the configs
  const xml = dataPath('bmw-manual/xml');
  mkdirSync(join(configs, 'manual'));
  for (const chapter of readdirSync(xml).filter((f) => f.endsWith('.xml')).sort().slice(0, 2)) copyFileSync(join(xml, chapter), join(configs, 'manual', chapter));
  writeFileSync(join(configs, 'manual.yaml'), 'kind: manual-qa\nname: m\nmanual: [manual]\n');
  writeFileSync(join(configs, 'outside.yaml'), `kind: manual-qa\nname: m\nmanual: [/etc/icabench-outside.md]\n`);
  mkdirSync(join(configs, 'seeds'));
  copyFileSync(join(import.meta.dirname, '../../bench-configs/seeds/in-car.yaml'), join(configs, 'seeds', 'in-car.yaml'));
  writeFileSync(join(configs, 'dialogue.yaml'), 'name: d\nseeds: seeds/in-car.yaml\nconversations: 2\n');
  h = await startHarness({ configsDir: configs });
});
afterAll(async () => {
  await h.close();
  await server.close();
  rmSync(configs, { recursive: true, force: true });
});

const generate = (body: unknown) => h.api('/api/manual/testsets', { body });

describe('POST /api/manual/testsets', () => {
  it('without a model: 400 model_required naming the field, before the config is read', async () => {
    const res = await generate({ configName: 'no-such-config.yaml' });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('model_required');
    expect(res.json.error.fields.map((f: { path: string }) => f.path)).toEqual(['model']);
    expect(res.json.error.message).toMatch(/the test-set generator needs a model and none is configured: set model/);
  });

  it('a manual outside the allowed folders is refused by the path policy; a config without a manual is refused', async () => {
    const before = server.chatRequests().length;
    const outside = await generate({ configName: 'outside.yaml', model: 'ollama:qwen2.5:14b' });
    expect([outside.status, outside.json.error.code]).toEqual([400, 'invalid_config']);
    expect(outside.json.error.message).toMatch(/manual\.0/);
    const dialogue = await generate({ configName: 'dialogue.yaml', model: 'ollama:qwen2.5:14b' });
    expect([dialogue.status, dialogue.json.error.code]).toEqual([400, 'no_manual']);
    expect(server.chatRequests().length).toBe(before);
  });

  it('a model that is not there: 400 model_unavailable with the fix, no call made', async () => {
    const before = server.chatRequests().length;
    const res = await generate({ configName: 'manual.yaml', model: `ollama:not-pulled:7b` });
    expect([res.status, res.json.error.code]).toEqual([400, 'model_unavailable']);
    expect(res.json.error.message).toMatch(/not-pulled:7b/);
    expect(server.chatRequests().length).toBe(before);
  });

  it('generates with the model on a sample of sections and writes the test set under the workspace', async () => {
    const model = `openai-compat:${server.url}/v1#qwen2.5:14b`;
    const res = await generate({ configName: 'manual.yaml', model, sections: 2, seed: 3 });
    expect(res.status).toBe(201);
    expect(res.json.file.startsWith(join(h.workspace, 'testsets', 'manual-'))).toBe(true);
    expect(res.json.questions).toBe(2);
    expect(res.json.generation).toMatchObject({ generator: `llm:${model}`, sections: 2, questions: 2, failures: [] });
    const items = await readTestSet(res.json.file);
    expect(items.map((i) => i.generator)).toEqual([`llm:${model}`, `llm:${model}`]);
    expect(server.chatRequests().filter((r) => systemPromptOf(r).includes('question step of the Test Set Generator')).length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
