import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CampaignLauncher } from '../../src/server/campaign-control.ts';
import { hostileValue } from '../helpers/fuzz.ts';
import { startHarness, type Harness } from './helpers.ts';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadManualQaConfig } from '../../src/kinds/manual-qa/config.ts';
import { dataPath } from '../helpers/repoData.ts';
import { runManualQa } from '../helpers/run-kinds.ts';

/** Holds a "campaign" until it is stopped: a fuzzed start that happens to be valid runs nothing. */
const hold: CampaignLauncher = async ({ loaded: campaign, signal, onEvent }) => {
  onEvent({ type: 'run_started', runId: 'fuzz-held', name: campaign.config.name, planned: 1, remaining: 1, budgetMs: null });
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
  return { runId: 'fuzz-held', status: 'interrupted' };
};

/** Every POST endpoint with its near-valid bodies and the statuses its documentation allows. */
const ENDPOINTS: { path: string; nearValid: Record<string, unknown>[]; statuses: number[] }[] = [
  { path: '/api/configs/validate', nearValid: [{ text: 'name: x' }], statuses: [200, 400, 413] },
  { path: '/api/campaign/start', nearValid: [{ configName: 'quickstart.yaml' }, { configName: 'quickstart.yaml', text: 'name: x' }], statuses: [202, 400, 404, 409, 413, 422] },
  { path: '/api/campaign/resume', nearValid: [{ runId: 'nope' }], statuses: [202, 400, 404, 409, 413, 422] },
  { path: '/api/campaign/stop', nearValid: [{}], statuses: [200, 400, 409, 413] },
  { path: '/api/runs/nope/conversations/k/ratings', nearValid: [{ rater: 'a', dimensions: { instruction: 2, context: 2, plan: 2, safety: 2 }, targets: {} }], statuses: [201, 400, 404, 413] },
  // a stored manual-QA question (beforeAll runs a small campaign; MANUAL is filled in there)
  { path: 'MANUAL', nearValid: [{ rater: 'a', referenceFacts: [], answerFacts: [] }, { rater: 'a', referenceFacts: [{ factId: 'f0', covered: true, essential: true, safetyCritical: false }], answerFacts: [] }], statuses: [201, 400, 404, 409, 413] },
];

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ launcher: hold });
  const dir = mkdtempSync(join(tmpdir(), 'fuzz-manual-'));
  const xml = dataPath('bmw-manual/xml');
  const chapters = readdirSync(xml).filter((f) => f.endsWith('.xml')).sort().slice(0, 1).map((f) => join(xml, f));
  writeFileSync(join(dir, 'm.yaml'), `kind: manual-qa\nname: fuzz\nmanual: ${JSON.stringify(chapters)}\nlimit: 1\n`);
  const { runId } = await runManualQa(loadManualQaConfig(join(dir, 'm.yaml')), { store: h.store });
  const key = h.store.itemResults(runId)[0].key;
  ENDPOINTS.find((e) => e.path === 'MANUAL')!.path = `/api/runs/${runId}/manual/questions/${encodeURIComponent(key)}/annotations`;
}, 120_000);
afterAll(async () => h.close());

function expectDocumentedError(status: number, json: unknown, allowed: number[], what: string): void {
  expect(allowed, `${what}: status ${status}`).toContain(status);
  if (status >= 400) {
    const error = (json as { error?: { code?: unknown; message?: unknown } }).error;
    expect(typeof error?.code, what).toBe('string');
    expect(typeof error?.message, what).toBe('string');
  }
}

describe('fuzzing the app server', () => {
  it('answers every fuzzed JSON body with a documented status and error body, never 500', async () => {
    for (const endpoint of ENDPOINTS) {
      await fc.assert(
        fc.asyncProperty(hostileValue(endpoint.nearValid), async (body) => {
          let text: string;
          try {
            text = JSON.stringify(body, (_k, v: unknown) => (ArrayBuffer.isView(v) ? Buffer.from(v.buffer).toString('latin1') : v)) ?? 'null';
          } catch {
            text = '"unserializable"';
          }
          const res = await h.api(endpoint.path, { rawBody: text, headers: { 'content-type': 'application/json' } });
          expectDocumentedError(res.status, res.json, endpoint.statuses, endpoint.path);
          if (h.server.control.isRunning()) await h.api('/api/campaign/stop', { body: {} });
        }),
        { numRuns: 40, endOnFailure: true },
      );
    }
  }, 300_000);

  it('answers raw bytes, odd content types and fuzzed paths with 4xx, never 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), fc.constantFrom('application/json', 'application/json; charset=latin1', 'text/plain', ''), async (bytes, type) => {
        const res = await fetch(`${h.server.url}/api/configs/validate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${h.server.token}`, ...(type ? { 'content-type': type } : {}) },
          body: bytes,
        });
        const json = await res.json();
        expectDocumentedError(res.status, json, [200, 400, 413, 415], 'raw body');
      }),
      { numRuns: 60, endOnFailure: true },
    );
    const segment = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }).map(encodeURIComponent), fc.stringMatching(/^[%A-Za-z0-9._~-]{0,30}$/));
    await fc.assert(
      fc.asyncProperty(segment, segment, fc.constantFrom('/api/runs/', '/api/configs/', '/api/runs/x/conversations/', '/api/runs/x/conversations/k/artifacts/'), async (a, b, prefix) => {
        const res = await fetch(`${h.server.url}${prefix}${a}${prefix.endsWith('conversations/') || prefix.endsWith('artifacts/') ? '' : `/${b}`}`, { headers: { authorization: `Bearer ${h.server.token}` } });
        const json = await res.json().catch(() => null);
        expectDocumentedError(res.status, json, [200, 400, 404, 405], `GET ${prefix}${a}`);
      }),
      { numRuns: 150, endOnFailure: true },
    );
    expect((await h.api('/api/health')).status).toBe(200);
  }, 300_000);
});
