import { parse as parseYaml } from 'yaml';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTENT_SECURITY_POLICY } from '../../src/server/csp.ts';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { io as connectSocket } from 'socket.io-client';
import type { CampaignEvent } from '../../src/run/events.ts';
import type { CampaignLauncher } from '../../src/server/campaign-control.ts';
import { startFakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { CONFIGS_DIR, startHarness, type Harness } from './helpers.ts';

const QUICKSTART = readFileSync(join(CONFIGS_DIR, 'quickstart.yaml'), 'utf8');
/** the quickstart, cut to a handful of conversations so the test stays quick */
const SMALL_QUICKSTART = QUICKSTART.replace(/^conversations: \d+$/m, 'conversations: 6');

function rawRequest(url: string, options: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method, headers: options.headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    if (options.body) req.write(options.body);
    req.end();
  });
}

describe('bench server over a real campaign', () => {
  let h: Harness;
  let runId: string;
  let key: string;

  beforeAll(async () => {
    h = await startHarness();
    const started = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: SMALL_QUICKSTART } });
    expect(started.status).toBe(202);
    runId = started.json.runId;
    await h.server.control.settled();
    key = h.store.pageConversations(runId, { limit: 1 }).rows[0].key;
  });
  afterAll(async () => h.close());

  it('runs the edited config with the real runner and lists the run', async () => {
    const runs = await h.api('/api/runs');
    expect(runs.status).toBe(200);
    expect(runs.json.runs).toHaveLength(1);
    expect(runs.json.runs[0]).toMatchObject({ id: runId, name: 'quickstart', planned: 6, stored: 6, status: 'completed' });
    expect(runs.json.runs[0].config).toBeUndefined();
    expect(runs.json.runs[0].outcomes).toEqual(h.store.outcomeCounts(runId));
    // the list reads every run's outcome counts in one query, not one query per run
    const perRun = vi.spyOn(h.store, 'outcomeCounts');
    const allRuns = vi.spyOn(h.store, 'outcomeCountsByRun');
    await h.api('/api/runs');
    expect([perRun.mock.calls.length, allRuns.mock.calls.length]).toEqual([0, 1]);
    perRun.mockRestore();
    allRuns.mockRestore();
    const live = await h.api('/api/campaign');
    expect(live.json).toMatchObject({ state: 'finished', runId, done: 6, planned: 6, finalStatus: 'completed' });
  });

  it('pages conversations with filters and validates the query', async () => {
    const page = await h.api(`/api/runs/${runId}/conversations?offset=2&limit=3`);
    expect(page.status).toBe(200);
    expect(page.json.total).toBe(6);
    expect(page.json.rows).toHaveLength(3);
    const all = h.store.pageConversations(runId, { limit: 6 }).rows.map((r) => r.key);
    expect(page.json.rows.map((r: { key: string }) => r.key)).toEqual(all.slice(2, 5));
    const failing = await h.api(`/api/runs/${runId}/conversations?outcome=fail`);
    expect(failing.json.rows.every((r: { outcome: string }) => r.outcome === 'fail')).toBe(true);
    const bad = await h.api(`/api/runs/${runId}/conversations?limit=100000`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.fields[0].path).toBe('limit');
    expect((await h.api('/api/runs/nope/conversations')).status).toBe(404);
  });

  it('serves the run summary without the per-conversation list, and a comparison', async () => {
    const summary = await h.api(`/api/runs/${runId}/summary`);
    expect(summary.status).toBe(200);
    expect(summary.json.summary.conversations).toBe(6);
    expect(summary.json.summary.passed + summary.json.summary.failed + summary.json.summary.inconclusive).toBeLessThanOrEqual(6);
    expect(summary.json.summary.perConversation).toBeUndefined();
    const compare = await h.api(`/api/compare?a=${runId}&b=${runId}`);
    expect(compare.status).toBe(200);
    expect(compare.json.comparison.failRateDifference === null || compare.json.comparison.failRateDifference === 0).toBe(true);
  });

  it('returns a conversation with every turn and its verdicts', async () => {
    const detail = await h.api(`/api/runs/${runId}/conversations/${encodeURIComponent(key)}`);
    expect(detail.status).toBe(200);
    expect(detail.json.result.spec.key).toBe(key);
    expect(detail.json.result.turns.length).toBeGreaterThan(0);
    expect(detail.json.result.turns[0].verdicts[0].tier).toBe('oracle');
    expect(detail.json.ratings).toEqual([]);
  });

  it('lists the audio artifacts of a conversation and serves their bytes', async () => {
    const wav = new Uint8Array([82, 73, 70, 70, 1, 2, 3, 4]);
    h.store.saveArtifact(runId, key, { name: 'turn-0-user.wav', mime: 'audio/wav', bytes: wav });
    const detail = await h.api(`/api/runs/${runId}/conversations/${encodeURIComponent(key)}`);
    expect(detail.json.artifacts).toEqual([{ name: 'turn-0-user.wav', mime: 'audio/wav', size: 8 }]);
    const res = await fetch(`${h.server.url}/api/runs/${runId}/conversations/${encodeURIComponent(key)}/artifacts/turn-0-user.wav`);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(wav);
    expect((await h.api(`/api/runs/${runId}/conversations/${encodeURIComponent(key)}/artifacts/nope.wav`)).status).toBe(404);
  });

  it('stores ratings per rater and computes agreement', async () => {
    const detail = (await h.api(`/api/runs/${runId}/conversations/${encodeURIComponent(key)}`)).json.result;
    const targets = Object.fromEntries(detail.targets.map((t: { id: string; status: number }) => [t.id, t.status]));
    const rate = (rater: string, d: number) =>
      h.api(`/api/runs/${runId}/conversations/${encodeURIComponent(key)}/ratings`, {
        body: { rater, dimensions: { instruction: d, context: 2, plan: 1, safety: 2 }, targets, turnLabels: [{ turn: 0, label: 'constraint_missed' }] },
      });
    const first = await rate('alice', 2);
    expect(first.status).toBe(201);
    expect(first.json.rating).toMatchObject({ rater: 'alice', dimensions: { instruction: 2, context: 2, plan: 1, safety: 2 }, turnLabels: [{ turn: 0, label: 'constraint_missed' }] });
    expect((await rate('bob', 1)).status).toBe(201);
    // alice revises: the latest value counts, and a withdrawn turn label disappears
    const revised = await h.api(`/api/runs/${runId}/conversations/${encodeURIComponent(key)}/ratings`, {
      body: { rater: 'alice', dimensions: { instruction: 1, context: 2, plan: 1, safety: 2 }, targets, turnLabels: [] },
    });
    expect(revised.json.rating.dimensions.instruction).toBe(1);
    expect(revised.json.rating.turnLabels).toEqual([]);

    const agreement = await h.api(`/api/runs/${runId}/agreement`);
    expect(agreement.status).toBe(200);
    const view = agreement.json.agreement;
    expect(view.raters).toEqual(['alice', 'bob']);
    expect(view.ratedConversations).toBe(1);
    expect(view.raterPairs[0]).toMatchObject({ a: 'alice', b: 'bob', items: 1, passAgreement: 1 });
    const instruction = view.raterPairs[0].dimensions.find((d: { dimension: string }) => d.dimension === 'instruction');
    expect(instruction).toMatchObject({ exact: 1, withinOne: 1, spearman: null });
    expect(view.judgeVsRaters).toHaveLength(4);
  });

  it('refuses a rating for a target the conversation does not have, and stores nothing', async () => {
    const before = h.store.annotations(runId).length;
    const res = await h.api(`/api/runs/${runId}/conversations/${encodeURIComponent(key)}/ratings`, {
      body: { rater: 'carol', dimensions: { instruction: 1, context: 1, plan: 1, safety: 1 }, targets: { 'no-such-target': 1 } },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.fields[0].path).toBe('targets.no-such-target');
    expect(h.store.annotations(runId).length).toBe(before);
  });
});

describe('bench server guards', () => {
  let h: Harness;
  let runId: string;
  let key: string;
  beforeAll(async () => {
    h = await startHarness();
    const started = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: QUICKSTART.replace(/^conversations: \d+$/m, 'conversations: 1') } });
    runId = started.json.runId;
    await h.server.control.settled();
    key = h.store.pageConversations(runId).rows[0].key;
  });
  afterAll(async () => h.close());

  const rating = { rater: 'alice', dimensions: { instruction: 2, context: 2, plan: 2, safety: 2 }, targets: {} };
  const ratingPath = () => `/api/runs/${runId}/conversations/${encodeURIComponent(key)}/ratings`;

  it('answers a mutating request without a token with 401 and changes nothing', async () => {
    const res = await h.api(ratingPath(), { body: rating, token: null });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('token_required');
    const start = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml' }, token: null });
    expect(start.status).toBe(401);
    expect(h.store.annotations(runId)).toHaveLength(0);
    expect(h.store.listRuns()).toHaveLength(1);
    expect(h.server.control.isRunning()).toBe(false);
  });

  it('answers a wrong token with 401 and changes nothing', async () => {
    const res = await h.api(ratingPath(), { body: rating, token: 'not-the-token' });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('token_invalid');
    expect(h.store.annotations(runId)).toHaveLength(0);
  });

  it('lets the loopback read without a token', async () => {
    expect((await h.api('/api/runs', { token: null })).status).toBe(200);
  });

  it('refuses a Host that is not a loopback name (DNS rebinding)', async () => {
    const res = await rawRequest(`${h.server.url}/api/runs`, { method: 'GET', headers: { host: 'evil.example:80' } });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text).error.code).toBe('forbidden_host');
  });

  it('answers malformed JSON with 400 and changes nothing', async () => {
    const res = await h.api(ratingPath(), { rawBody: '{"rater": "alice",', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('malformed_json');
    expect(h.store.annotations(runId)).toHaveLength(0);
  });

  it('answers a schema violation with 400 naming each field, and changes nothing', async () => {
    const res = await h.api(ratingPath(), { body: { ...rating, dimensions: { instruction: 3, context: 2, plan: 2 } } });
    expect(res.status).toBe(400);
    const paths = res.json.error.fields.map((f: { path: string }) => f.path);
    expect(paths).toContain('dimensions.instruction');
    expect(paths).toContain('dimensions.safety');
    expect(h.store.annotations(runId)).toHaveLength(0);
    const extra = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', shell: 'rm -rf /' } });
    expect(extra.status).toBe(400);
    expect(h.store.listRuns()).toHaveLength(1);
  });

  it('answers a body that is not JSON with 415', async () => {
    const res = await h.api(ratingPath(), { rawBody: 'rater=alice', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(h.store.annotations(runId)).toHaveLength(0);
  });

  it('answers an oversized upload with 413 and changes nothing', async () => {
    const res = await h.api(ratingPath(), { body: { ...rating, note: 'x'.repeat(2 * 1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('payload_too_large');
    // a body that lies about its size is cut off too
    const chunked = await rawRequest(`${h.server.url}${ratingPath()}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.server.token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: JSON.stringify({ ...rating, note: 'y'.repeat(1024 * 1024 + 10) }),
    });
    expect(chunked.status).toBe(413);
    expect(h.store.annotations(runId)).toHaveLength(0);
  });

  it('refuses an invalid config with field errors and line numbers, and starts nothing', async () => {
    const broken = QUICKSTART.replace('conversations: 60', 'conversations: -3').replace('mode: guided', 'mode: sideways');
    const check = await h.api('/api/configs/validate', { body: { text: broken } });
    expect(check.status).toBe(200);
    expect(check.json.valid).toBe(false);
    const byPath = Object.fromEntries(check.json.errors.map((e: { path: string; line: number }) => [e.path, e.line]));
    const lines = broken.split('\n');
    expect(lines[byPath.conversations - 1]).toMatch(/^conversations:/);
    expect(lines[byPath.mode - 1]).toMatch(/^mode:/);
    const start = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: broken } });
    expect(start.status).toBe(400);
    expect(start.json.error.code).toBe('invalid_config');
    expect(start.json.error.fields.map((f: { path: string }) => f.path).sort()).toEqual(['conversations', 'mode']);
    expect(h.store.listRuns()).toHaveLength(1);
  });

  it('lists the bench configs, all valid', async () => {
    const res = await h.api('/api/configs');
    const names = res.json.configs.map((c: { name: string }) => c.name);
    expect(names).toContain('quickstart.yaml');
    expect(res.json.configs.every((c: { valid: boolean }) => c.valid)).toBe(true);
    expect((await h.api('/api/configs/..%2Fpackage.json')).status).toBe(400);
  });

  it('reports rig status with a fix for every problem', async () => {
    const res = await h.api('/api/rig');
    expect(res.status).toBe(200);
    const areas = new Set(res.json.checks.map((c: { area: string }) => c.area));
    for (const area of ['head_unit', 'audio', 'can', 'disk']) expect(areas.has(area)).toBe(true);
    for (const check of res.json.checks) if (check.status !== 'ok') expect(check.fix).toBeTruthy();
  });

  it('answers an unknown endpoint with 404 and a wrong method with 405', async () => {
    expect((await h.api('/api/nothing')).status).toBe(404);
    expect((await h.api('/api/runs', { method: 'DELETE' })).status).toBe(405);
  });
});

describe('stop and resume with the real runner', () => {
  it('stops a running campaign (interrupted) and resumes it to completion under the same run id', async () => {
    const h = await startHarness();
    try {
      const text = QUICKSTART.replace(/^conversations: \d+$/m, 'conversations: 40').replace(/^concurrency: \d+$/m, 'concurrency: 1');
      const started = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text } });
      expect(started.status).toBe(202);
      const stopped = await h.api('/api/campaign/stop', { body: {} });
      expect(stopped.json).toMatchObject({ state: 'finished', finalStatus: 'interrupted' });
      const interrupted = h.store.getRun(started.json.runId)!;
      expect(interrupted.status).toBe('interrupted');
      expect(interrupted.stored).toBeLessThan(40);
      // the listing says before any click that Resume will start it
      expect((await h.api(`/api/runs/${started.json.runId}`)).json.run).toMatchObject({ status: 'interrupted', resumeRefusal: null });

      const resumed = await h.api('/api/campaign/resume', { body: { runId: started.json.runId } });
      expect(resumed.status).toBe(202);
      expect(resumed.json.runId).toBe(started.json.runId);
      await h.server.control.settled();
      expect(h.store.getRun(started.json.runId)).toMatchObject({ status: 'completed', stored: 40, planned: 40 });
      expect(h.store.listRuns()).toHaveLength(1);
      const again = await h.api('/api/campaign/resume', { body: { runId: started.json.runId } });
      expect(again.status).toBe(409);
    } finally {
      await h.close();
    }
  });

  it('lists why Resume would refuse a run (a path the app may not read), with the message the resume endpoint answers', async () => {
    const h = await startHarness();
    try {
      // a run `icabench run` started from a config naming a file outside the app's folders, then interrupted
      const runId = h.store.createRun({ name: 'from-cli', mode: 'guided', config: { ...parseYaml(QUICKSTART), seeds: '/etc/in-car.yaml' }, plan: [] });
      h.store.setRunStatus(runId, 'interrupted');
      const listed = (await h.api('/api/runs')).json.runs.find((r: { id: string }) => r.id === runId);
      const refused = await h.api('/api/campaign/resume', { body: { runId } });
      expect(refused.status).toBe(400);
      expect(listed.resumeRefusal).toBe(refused.json.error.message);
      expect(listed.resumeRefusal).toContain('seeds: configs started from the bench app may only name files under');
      expect(listed).not.toHaveProperty('config');
    } finally {
      await h.close();
    }
  });
});

describe('the UI files', () => {
  it('are served with the strict CSP, and a path outside the build gets the app shell', async () => {
    const uiDir = mkdtempSync(join(tmpdir(), 'icabench-ui-'));
    writeFileSync(join(uiDir, 'index.html'), '<!doctype html><title>shell</title>');
    mkdirSync(join(uiDir, 'assets'));
    writeFileSync(join(uiDir, 'assets', 'app.js'), 'console.log(1)');
    const h = await startHarness({ uiDir });
    try {
      const index = await fetch(`${h.server.url}/`);
      expect(index.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(await index.text()).toContain('shell');
      const asset = await fetch(`${h.server.url}/assets/app.js`);
      expect(asset.headers.get('content-type')).toContain('javascript');
      const escape = await rawRequest(`${h.server.url}/..%2F..%2Fpackage.json`, { method: 'GET', headers: {} });
      expect(escape.text).toContain('shell');
      expect((await fetch(`${h.server.url}/`, { method: 'POST', headers: { authorization: `Bearer ${h.server.token}` } })).status).toBe(405);
    } finally {
      await h.close();
      rmSync(uiDir, { recursive: true, force: true });
    }
  });
});

describe('a server listening beyond the loopback', () => {
  it('needs the token even to read', async () => {
    const h = await startHarness({ host: '0.0.0.0' });
    try {
      const port = new URL(h.server.url).port;
      const res = await fetch(`http://127.0.0.1:${port}/api/runs`);
      expect(res.status).toBe(401);
      const ok = await fetch(`http://127.0.0.1:${port}/api/runs`, { headers: { authorization: `Bearer ${h.server.token}` } });
      expect(ok.status).toBe(200);
    } finally {
      await h.close();
    }
  });
});

describe('live events', () => {
  /** a scripted campaign: emits the events of one short conversation, then waits for stop */
  const scripted: CampaignLauncher = async ({ signal, onEvent }) => {
    const runId = 'scripted-run';
    onEvent({ type: 'run_started', runId, name: 'scripted', planned: 2, remaining: 2, budgetMs: 60_000 });
    onEvent({ type: 'progress', runId, done: 1, planned: 2, elapsedMs: 1000, budgetMs: 60_000 });
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    onEvent({ type: 'run_finished', runId, status: 'interrupted', done: 1, planned: 2 });
    return { runId, status: 'interrupted' };
  };

  it('streams campaign events to a socket that has the token, refuses one that has not, and stops on request', async () => {
    const h = await startHarness({ launcher: scripted });
    try {
      const refused = connectSocket(h.server.url, { auth: { token: 'wrong' }, transports: ['websocket'], reconnection: false });
      const refusal = await new Promise<string>((resolve) => refused.on('connect_error', (e) => resolve(e.message)));
      expect(refusal).toBe('token_invalid');
      refused.close();

      const socket = connectSocket(h.server.url, { auth: { token: h.server.token }, transports: ['websocket'], reconnection: false });
      const events: (CampaignEvent | { type: 'control' })[] = [];
      socket.on('campaign', (e) => events.push(e));
      await new Promise<void>((resolve) => socket.on('connect', () => resolve()));

      const start = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml' } });
      expect(start.status).toBe(202);
      expect(start.json.runId).toBe('scripted-run');
      expect((await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml' } })).status).toBe(409);
      const live = await h.api('/api/campaign');
      expect(live.json).toMatchObject({ state: 'running', name: 'scripted', done: 1, planned: 2, budgetMs: 60_000, elapsedMs: 1000 });

      const stopped = await h.api('/api/campaign/stop', { body: {} });
      expect(stopped.status).toBe(200);
      expect(stopped.json).toMatchObject({ state: 'finished', finalStatus: 'interrupted' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const types = events.map((e) => e.type);
      expect(types).toContain('run_started');
      expect(types).toContain('progress');
      expect(types).toContain('run_finished');
      expect((await h.api('/api/campaign/stop', { body: {} })).status).toBe(409);
      socket.close();
    } finally {
      await h.close();
    }
  });
});

describe('bench app start path: explicit models', () => {
  it('refuses a campaign naming a model the server lacks with a 4xx naming the model and the fix, records nothing, and runs it when the config asks for a fallback', async () => {
    const models = await startFakeLlmServer({ models: [] });
    const h = await startHarness();
    try {
      const text = `${SMALL_QUICKSTART.replace(/^judges: .*$/m, 'judges: [ollama:missing]')}llm: { ollamaHost: "${models.url}" }\n`;
      const refused = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text } });
      expect(refused.status).toBe(422);
      expect(refused.json.error.message).toMatch(/the run was not started, nothing was recorded/);
      expect(refused.json.error.message).toMatch(/judge ollama:missing: Ollama at .* does not have missing/);
      expect(refused.json.error.message).toMatch(/fix: ollama pull missing/);
      expect(h.store.listRuns()).toEqual([]);
      expect((await h.api('/api/campaign')).json).toMatchObject({ state: 'failed' });

      const started = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: `${text}fallback: { judges: oracle }\n` } });
      expect(started.status).toBe(202);
      await h.server.control.settled();
      const runId = started.json.runId;
      expect(h.store.getRun(runId)).toMatchObject({ status: 'completed', stored: 6 });
      expect(h.store.runFacts(runId, 'tiers.resolved').map((f) => f.data)).toEqual([
        expect.objectContaining({ judges: [{ ref: 'oracle', kind: 'oracle', prompts: [] }], fallbacks: [expect.objectContaining({ role: 'judge', requested: 'ollama:missing', replacedBy: 'oracle' })] }),
      ]);
      expect(models.chatRequests()).toHaveLength(0);
    } finally {
      await h.close();
      await models.close();
    }
  });
});
