import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoadedCampaign } from '../../src/kinds/dialogue/config.ts';
import type { CampaignLauncher } from '../../src/server/campaign-control.ts';
import { CONFIGS_DIR, startHarness, type Harness } from './helpers.ts';

const QUICKSTART = readFileSync(join(CONFIGS_DIR, 'quickstart.yaml'), 'utf8');
const withSeeds = (seeds: string) => QUICKSTART.replace(/^seeds: .*$/m, `seeds: ${seeds}`);

/** A campaign launcher that records what it was asked to run and fails or holds as told. */
function scriptedLauncher(behaviour: 'fail' | 'hold'): { launch: CampaignLauncher; launched: LoadedCampaign[] } {
  const launched: LoadedCampaign[] = [];
  const launch: CampaignLauncher = async ({ loaded: campaign, signal, onEvent }) => {
    launched.push(campaign as LoadedCampaign);
    if (behaviour === 'fail') throw new Error('no head unit dialled in');
    onEvent({ type: 'run_started', runId: 'held', name: campaign.config.name, planned: 1, remaining: 1, budgetMs: null });
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    return { runId: 'held', status: 'interrupted' };
  };
  return { launch, launched };
}

const harnesses: Harness[] = [];
afterEach(async () => {
  while (harnesses.length) await harnesses.pop()!.close();
});

async function harness(launcher?: CampaignLauncher, uiDir?: string): Promise<Harness> {
  const h = await startHarness({ ...(launcher ? { launcher } : {}), ...(uiDir ? { uiDir } : {}) });
  harnesses.push(h);
  return h;
}

/** A built UI of two files, enough for the static routes. */
function builtUi(): string {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-ui-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>bench</title>');
  writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
  return dir;
}

/** A POST whose JSON body is written in `chunks` pieces of `chunkBytes` (Transfer-Encoding: chunked), read to the end of the answer. */
function chunkedPost(url: string, token: string, chunks: number, chunkBytes: number): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    // written at once, as curl does: the server must not reset the connection while the client is still sending
    const body = `{"text":"${'z'.repeat(chunks * chunkBytes)}"}`;
    for (let at = 0; at < body.length; at += chunkBytes) req.write(body.slice(at, at + chunkBytes));
    req.end();
  });
}

function editedConfigs(h: Harness): string[] {
  const dir = join(h.workspace, 'edited-configs');
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe('malformed requests get 400, never 500', () => {
  it('answers malformed percent-encoding in the path with 400', async () => {
    const h = await harness();
    for (const path of ['/api/runs/%E0%A4%A', '/api/runs/%', '/api/configs/%ZZ.yaml', '/api/runs/x/conversations/%C3%28']) {
      const res = await h.api(path);
      expect(res.status, path).toBe(400);
      expect(res.json.error.code, path).toBe('malformed_url');
    }
    expect((await h.api('/api/health')).status).toBe(200);
  });

  it('answers malformed percent-encoding on the static routes of a built UI with 400 (not 500)', async () => {
    const ui = builtUi();
    try {
      const h = await harness(undefined, ui);
      for (const path of ['/%', '/%E0%A4%A', '/assets/%', '/assets/%C3%28.js']) {
        const res = await h.api(path);
        expect(res.status, path).toBe(400);
        expect(res.json.error.code, path).toBe('malformed_url');
      }
      expect((await h.api('/assets/app.js')).json).toBe('console.log(1)');
      expect((await h.api('/runs%20list')).json).toMatch(/<title>bench/);
    } finally {
      rmSync(ui, { recursive: true, force: true });
    }
  });

  it('answers a 2 MiB chunked body with a readable 413 (not a connection reset), then serves the next request', async () => {
    const h = await harness(scriptedLauncher('hold').launch);
    // twice: the second one goes over the kept-alive connection of the first
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await chunkedPost(`${h.server.url}/api/configs/validate`, h.server.token, 128, 16 * 1024);
      expect(res.status).toBe(413);
      expect(res.json.error).toMatchObject({ code: 'payload_too_large' });
      expect(res.json.error.message).toMatch(/exceeds the limit of \d+ bytes/);
    }
    expect((await h.api('/api/health')).status).toBe(200);
  });

  it('answers a YAML alias bomb with an invalid config (validate) and 400 (start), and keeps nothing', async () => {
    const h = await harness(scriptedLauncher('hold').launch);
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...'bcdefghi'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`)].join('\n');
    const check = await h.api('/api/configs/validate', { body: { text: bomb } });
    expect(check.status).toBe(200);
    expect(check.json.valid).toBe(false);
    expect(check.json.errors[0]).toMatchObject({ path: '(yaml)' });
    expect(check.json.errors[0].message).toMatch(/alias/i);
    const start = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: bomb } });
    expect(start.status).toBe(400);
    expect(start.json.error.code).toBe('invalid_config');
    expect(editedConfigs(h)).toEqual([]);
  });

  it('answers YAML and JSON nested 100,000 deep with 400', async () => {
    const h = await harness(scriptedLauncher('hold').launch);
    const deepYaml = `name: x\nseeds: ${'['.repeat(50_000)}${']'.repeat(50_000)}\n`;
    const start = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: deepYaml } });
    expect(start.status).toBe(400);
    const deepJson = `{"text":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const validate = await h.api('/api/configs/validate', { rawBody: deepJson, headers: { 'content-type': 'application/json' } });
    expect(validate.status).toBe(400);
    expect(validate.json.error).toMatchObject({ code: 'invalid_request', message: 'request body: nested deeper than 32 levels' });
    expect(editedConfigs(h)).toEqual([]);
  });
});

describe('configs started from the app', () => {
  it('may not name files outside the workspace, bench-configs/, data/, hardware/ or models/, and the answer does not tell whether a file exists', async () => {
    const { launch, launched } = scriptedLauncher('hold');
    const h = await harness(launch);
    const answers = [];
    for (const seeds of ['/etc/passwd', '/etc/no-such-file', '../../../../etc/passwd', '../package.json']) {
      const res = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: withSeeds(seeds) } });
      expect(res.status, seeds).toBe(400);
      expect(res.json.error.code).toBe('path_not_allowed');
      answers.push(res.json.error.fields);
    }
    // the same answer for a file that exists and one that does not
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]).toEqual([{ path: 'seeds', message: 'configs started from the bench app may only name files under the workspace, bench-configs/, data/, hardware/ or models/' }]);
    const other = QUICKSTART.replace('judges: [oracle]', 'judges: [oracle, "gguf:/etc/judge.gguf"]').replace('seeds: seeds/in-car.yaml', 'seeds: seeds/in-car.yaml\nllm: { cacheDir: /tmp/cache }');
    const refused = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: other } });
    expect(refused.json.error.fields.map((f: { path: string }) => f.path).sort()).toEqual(['judges.1', 'llm.cacheDir']);
    expect(launched).toEqual([]);
    expect(editedConfigs(h)).toEqual([]);
  });

  it('shows a path the app refuses on its line while editing (Start is disabled before any click), and reads the vendored data/', async () => {
    const h = await harness(scriptedLauncher('hold').launch);
    const text = withSeeds('/etc/passwd');
    const check = await h.api('/api/configs/validate', { body: { text } });
    expect(check.json.valid).toBe(false);
    expect(check.json.errors).toEqual([{ path: 'seeds', line: text.split('\n').findIndex((l) => l.startsWith('seeds:')) + 1, message: expect.stringContaining('may only name files under the workspace') }]);
    // the shipped manual-QA and tool-agents configs read data/: listed valid, so their Start runs them
    const listed = (await h.api('/api/configs')).json.configs as { name: string; kind: string; valid: boolean }[];
    expect(listed.filter((c) => c.kind === 'manual-qa' || c.kind === 'tool-agents').map((c) => [c.name, c.valid])).toEqual([
      ['carbench-paper.yaml', true],
      ['carbench-train.yaml', true],
      ['manual-qa-paper.yaml', true],
      ['manual-qa.yaml', true],
    ]);
  });

  it('keeps nothing in edited-configs when a start fails, and writes paths the copy can load from anywhere', async () => {
    const failing = scriptedLauncher('fail');
    const h = await harness(failing.launch);
    // fails while loading: a seed id the pool does not have
    const unknownSeed = QUICKSTART.replace('strategies: all', 'strategies: all\nseedIds: [no-such-seed]');
    expect((await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: unknownSeed } })).status).toBe(400);
    // fails in the launcher, before the run starts
    const failed = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: QUICKSTART } });
    expect(failed.status).toBe(422);
    expect(failing.launched).toHaveLength(1);
    expect(editedConfigs(h)).toEqual([]);

    const held = scriptedLauncher('hold');
    const h2 = await harness(held.launch);
    const highway = readFileSync(join(CONFIGS_DIR, 'highway-safety.yaml'), 'utf8');
    const first = await h2.api('/api/campaign/start', { body: { configName: 'highway-safety.yaml', text: highway } });
    expect(first.status).toBe(202);
    // a second start while one runs is refused (409) and leaves no copy either
    expect((await h2.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: QUICKSTART } })).status).toBe(409);
    const copies = editedConfigs(h2);
    expect(copies).toHaveLength(1);
    const copy = parse(readFileSync(join(h2.workspace, 'edited-configs', copies[0]), 'utf8'));
    expect(copy.seeds).toBe(join(CONFIGS_DIR, 'seeds/in-car.yaml'));
    expect(copy.vehicle).toMatchObject({ scenario: 'highway', mapping: 'icabench_vehicle', transport: 'bridge' });
    expect(held.launched[0].config.vehicle?.transport).toEqual({ kind: 'bridge' });
    await h2.api('/api/campaign/stop', { body: {} });
  });
});
