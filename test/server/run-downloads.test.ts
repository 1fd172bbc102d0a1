import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaignKind } from '../../src/kinds/registry.ts';
import { CONFIGS_DIR, startHarness, type Harness } from './helpers.ts';

const SMALL_QUICKSTART = readFileSync(join(CONFIGS_DIR, 'quickstart.yaml'), 'utf8').replace(/^conversations: \d+$/m, 'conversations: 4');

describe('downloads of a run from the app', () => {
  let h: Harness;
  let runId: string;
  let cliDir: string;

  beforeAll(async () => {
    h = await startHarness();
    const started = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: SMALL_QUICKSTART } });
    expect(started.status).toBe(202);
    runId = started.json.runId;
    await h.server.control.settled();
    // what `icabench report RUN` writes for the same run
    cliDir = mkdtempSync(join(tmpdir(), 'icabench-report-'));
    await (await campaignKind('dialogue')).outputs.write(h.store, runId, cliDir);
  });
  afterAll(async () => {
    await h.close();
    rmSync(cliDir, { recursive: true, force: true });
  });

  it('lists every file `icabench report` writes, and the JSONL export', async () => {
    const listed = await h.api(`/api/runs/${runId}/outputs`);
    expect(listed.status).toBe(200);
    const names = listed.json.files.map((f: { name: string }) => f.name);
    expect(names).toEqual([...readdirSync(cliDir).sort(), 'export.jsonl']);
    expect(names).toEqual(expect.arrayContaining(['report.html', 'summary.json', 'junit.xml', 'conversations.csv', 'export.jsonl']));
  });

  it('serves summary.json, junit.xml and the CSV as the CLI writes them, as attachments', async () => {
    for (const name of ['summary.json', 'junit.xml', 'conversations.csv']) {
      const res = await fetch(`${h.server.url}/api/runs/${runId}/outputs/${name}`, { headers: { authorization: `Bearer ${h.server.token}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${runId}-${name}"`);
      expect(await res.text()).toBe(readFileSync(join(cliDir, name), 'utf8'));
    }
  });

  it('opens report.html inline with a policy that lets its own chart script run and nothing else', async () => {
    const res = await fetch(`${h.server.url}/api/runs/${runId}/outputs/report.html?inline=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-disposition')).toMatch(/^inline;/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await res.text()).toContain('<html');
  });

  it('streams the JSONL export, one stored conversation a line', async () => {
    const res = await fetch(`${h.server.url}/api/runs/${runId}/outputs/export.jsonl`);
    expect(res.status).toBe(200);
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { spec: { key: string } });
    expect(lines.map((l) => l.spec.key).sort()).toEqual(h.store.pageConversations(runId, { limit: 10 }).rows.map((r) => r.key).sort());
  });

  it('refuses an output the run does not have, and a name that is no file name', async () => {
    const missing = await h.api(`/api/runs/${runId}/outputs/questions.csv`);
    expect(missing.status).toBe(404);
    expect(missing.json.error.message).toContain('report.html');
    expect((await h.api(`/api/runs/${runId}/outputs/..%2Fsecret`)).status).toBe(400);
    expect((await h.api('/api/runs/nope/outputs')).status).toBe(404);
  });
});
