import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectHeadUnit, type BridgeClient } from '../../packages/bridge-sdk/src/index.ts';
import { goodHandler } from '../conformance/units.ts';
import { startHarness, type Harness } from './helpers.ts';

let harness: Harness | null = null;
let unit: BridgeClient | null = null;
afterEach(async () => {
  await unit?.close();
  await harness?.close();
  unit = null;
  harness = null;
});

describe('the bench app conformance screen API', () => {
  it('starts a run that waits for a unit, shows its checks, stores the report in the workspace, and lists it', async () => {
    harness = await startHarness();
    expect((await harness.api('/api/conformance')).json).toEqual({ current: { state: 'idle', bridgeUrl: null, checks: [], reportId: null, error: null }, reports: [], damaged: [] });
    const started = await harness.api('/api/conformance/start', { body: { port: 0, token: 'app-token', waitSeconds: 30, turnTimeoutMs: 3000, reconnectWaitMs: 8000 } });
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ state: 'waiting', bridgeUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    expect((await harness.api('/api/conformance/start', { body: { port: 0, token: 'app-token' } })).status).toBe(409);

    unit = await connectHeadUnit({ url: started.json.bridgeUrl, token: 'app-token', handler: goodHandler(), reconnect: true });
    let listing = (await harness.api('/api/conformance')).json;
    for (let i = 0; i < 600 && listing.current.state !== 'done'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      listing = (await harness.api('/api/conformance')).json;
    }
    expect(listing.current.state).toBe('done');
    expect(listing.reports).toEqual([{ id: listing.current.reportId, unit: expect.objectContaining({ name: 'test-unit' }), startedAt: expect.any(String), passed: true, failed: [] }]);
    const { json } = await harness.api(`/api/conformance/${listing.current.reportId}`);
    expect(json.report.checks.map((c: { id: string; status: string }) => `${c.id}:${c.status}`)).toEqual([
      'hello:pass', 'capabilities:pass', 'text_turn:pass', 'reply_schema:pass', 'turn_ids:pass', 'timing:pass', 'reconnect:pass', 'audio:skipped', 'vehicle_context:pass', 'tools:skipped', 'bus_actions:skipped',
    ]);
  }, 120_000);

  it('refuses a bad request with the field, an unknown report with 404, a malformed id with 400', async () => {
    harness = await startHarness();
    const bad = await harness.api('/api/conformance/start', { body: { port: 'x', token: 't' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('port');
    expect((await harness.api('/api/conformance/2026-01-01T00-00-00-000Z')).status).toBe(404);
    expect((await harness.api('/api/conformance/..%2F..%2Fetc')).status).toBe(400);
  });

  it('lists the readable reports and marks a truncated one as damaged (never a 500); asking for it is a 422 naming the file', async () => {
    harness = await startHarness();
    const dir = join(harness.workspace, 'conformance');
    const good = { kind: 'icabench-conformance/1', protocol: 'p', startedAt: '2026-01-02T00:00:00.000Z', bridgeUrl: 'http://127.0.0.1:1', unit: { name: 'u', version: '1', address: 'a' }, declared: null, limits: { turnTimeoutMs: 1, reconnectWaitMs: 1 }, checks: [], passed: true };
    mkdirSync(join(dir, 'good'), { recursive: true });
    mkdirSync(join(dir, 'truncated'), { recursive: true });
    writeFileSync(join(dir, 'good', 'conformance.json'), JSON.stringify(good));
    writeFileSync(join(dir, 'truncated', 'conformance.json'), JSON.stringify(good).slice(0, 40));
    const listing = await harness.api('/api/conformance');
    expect(listing.status).toBe(200);
    expect(listing.json.reports.map((r: { id: string }) => r.id)).toEqual(['good']);
    expect(listing.json.damaged).toEqual([{ id: 'truncated', problem: expect.stringMatching(/truncated\/conformance\.json: not readable as JSON \(.+\)$/) }]);
    const one = await harness.api('/api/conformance/truncated');
    expect([one.status, one.json.error.code]).toEqual([422, 'report_invalid']);
    expect(one.json.error.message).toContain('truncated/conformance.json: not readable as JSON');
  });
});
