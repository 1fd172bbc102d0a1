import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSuite } from '../../src/suite/format.ts';
import { CONFIGS_DIR, startHarness, type Harness } from './helpers.ts';

const SMALL_QUICKSTART = readFileSync(join(CONFIGS_DIR, 'quickstart.yaml'), 'utf8').replace(/^conversations: \d+$/m, 'conversations: 6');

describe('pin → suite → run from the app', () => {
  let h: Harness;
  let runId: string;
  let failing: string;

  beforeAll(async () => {
    h = await startHarness();
    const started = await h.api('/api/campaign/start', { body: { configName: 'quickstart.yaml', text: SMALL_QUICKSTART } });
    runId = started.json.runId;
    await h.server.control.settled();
    const page = await h.api(`/api/runs/${runId}/conversations?outcome=fail&limit=1`);
    expect(page.json.rows.length).toBe(1);
    failing = page.json.rows[0].key;
  });
  afterAll(async () => h.close());

  it('pins into the suites folder, never over an earlier pin', async () => {
    const first = await h.api(`/api/runs/${runId}/conversations/${failing}/pin`, { body: {} });
    expect(first.status).toBe(201);
    expect(first.json.folder).toBe(join(h.workspace, 'suites'));
    expect(first.json.path).toBe(join(h.workspace, 'suites', first.json.file));
    expect(loadSuite(first.json.path).suite.conversations.map((c) => c.id)).toEqual([failing]);
    const again = await h.api(`/api/runs/${runId}/conversations/${failing}/pin`, { body: {} });
    expect(again.json.file).toBe(first.json.file.replace('.yaml', '-2.yaml'));
    expect(existsSync(first.json.path)).toBe(true);
  });

  it('runs the pinned suite against the original run\'s unit, judged by its rules, in one request', async () => {
    const pinned = await h.api(`/api/runs/${runId}/conversations/${failing}/pin`, { body: {} });
    const started = await h.api('/api/suites/run', { body: { suite: pinned.json.file, runId } });
    expect(started.status).toBe(202);
    expect(started.json.original).toBe(runId);
    await h.server.control.settled();
    const replay = h.store.getRun(started.json.runId)!;
    expect(replay.status).toBe('completed');
    expect(replay.planned).toBe(1);
    const original = h.store.getRun(runId)!;
    const replayConfig = replay.config as { headUnit: unknown; scoring: unknown };
    const originalConfig = original.config as { headUnit: unknown; scoring: unknown };
    expect(replayConfig.headUnit).toEqual(originalConfig.headUnit);
    expect(replayConfig.scoring).toEqual(originalConfig.scoring);
    // the replayed conversation keeps the original's key, so the two runs pair it
    expect(h.store.pageConversations(replay.id, { limit: 5 }).rows.map((r) => r.key)).toEqual([failing]);
    const compare = await h.api(`/api/compare?a=${runId}&b=${replay.id}`);
    expect(compare.status).toBe(200);
  });

  it('refuses a suite that is not in the folder, and a path for a name', async () => {
    expect((await h.api('/api/suites/run', { body: { suite: 'nope.yaml', runId } })).status).toBe(404);
    const path = await h.api('/api/suites/run', { body: { suite: '../icabench.db.yaml', runId } });
    expect(path.status).toBe(400);
    expect(path.json.error.fields[0].path).toBe('suite');
  });
});
