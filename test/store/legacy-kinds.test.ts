import Database from 'better-sqlite3';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { CampaignConfigSchema } from '../../src/kinds/dialogue/config.ts';
import { LiveSessionConfigSchema } from '../../src/kinds/live/config.ts';
import { LiveSession } from '../../src/kinds/live/session.ts';
import { campaignConfigSchemaFor } from '../../src/kinds/registry.ts';
import { loadSuiteCampaign, SuiteCampaignConfigSchema } from '../../src/kinds/suite/suite-kind.ts';
import { runKindCampaign } from '../../src/run/runner.ts';
import { ResultStore } from '../../src/store/store.ts';
import { runCli } from '../helpers/cli.ts';

/**
 * A store written before suites and live sessions were kinds of their own held their runs as dialogue runs with a run mode
 * ("scripted", "live") and a dialogue config faked for them (`seeds: <the first suite>`, `seeds: live`); a suite run kept its
 * own config in its meta. Such a store opens with both as their own kinds and configs (migration 6), and its runs list,
 * report and resume as runs of those kinds.
 */
it('a store with suite and live runs stored the old way lists, reports and resumes them as suite and live runs', { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-legacy-kinds-'));
  cpSync(resolve('bench-configs/suites/in-car-basics.yaml'), join(dir, 'basics.yaml'));
  const suiteConfig = join(dir, 'suite.yaml');
  writeFileSync(suiteConfig, ['kind: suite', 'name: legacy suite', 'suites: [basics.yaml]', 'concurrency: 1', 'headUnit: { type: reference }'].join('\n'));
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  const db = join(ws, 'icabench.db');

  // the old writes: a suite run as a dialogue run (mode scripted, faked config, its own config in meta.source), left unfinished
  const store = ResultStore.open(db);
  const suite = loadSuiteCampaign(suiteConfig);
  const fakeSuite = CampaignConfigSchema.parse({ name: 'legacy suite', mode: 'baseline', seeds: suite.config.suites[0], conversations: suite.conversations.length, concurrency: 1, headUnit: suite.config.headUnit, simulator: 'script', judges: suite.config.judges, maxTurns: [8] });
  const suiteRun = store.createRun({ name: 'legacy suite', mode: 'scripted', config: fakeSuite, plan: suite.conversations, meta: { source: { kind: 'suite', config: suite.config } } });
  store.setRunStatus(suiteRun, 'interrupted');
  // a live session of one turn, then stored back the old way: a dialogue run with the faked dialogue config
  const session = new LiveSession(LiveSessionConfigSchema.parse({ name: 'legacy live' }));
  const running = runKindCampaign(session.kind, session.loaded, { store, onEvent: (e) => session.onEvent(e) });
  await session.say('Find me a cheap italian restaurant.');
  session.end();
  const liveRun = (await running).runId;
  store.close();
  const fakeLive = CampaignConfigSchema.parse({ name: 'legacy live', description: 'A live session', mode: 'baseline', seeds: 'live', conversations: 1, concurrency: 1, simulator: 'script', maxTurns: [50] });
  const raw = new Database(db);
  raw.prepare("UPDATE runs SET kind = 'dialogue', config = ? WHERE id = ?").run(JSON.stringify(fakeLive), liveRun);
  raw.prepare('DELETE FROM migrations WHERE version = 6').run();
  raw.close();

  const reopened = ResultStore.open(db);
  try {
    expect(reopened.getRun(suiteRun)).toMatchObject({ kind: 'suite', mode: 'scripted', config: suite.config, meta: {} });
    const live = reopened.getRun(liveRun)!;
    expect(live).toMatchObject({ kind: 'live', mode: 'live', status: 'completed', stored: 1 });
    // each config validates as its kind's own: no dialogue field is left
    expect(SuiteCampaignConfigSchema.safeParse(reopened.getRun(suiteRun)!.config).success).toBe(true);
    expect(campaignConfigSchemaFor(live.config).safeParse(live.config).success).toBe(true);
    expect(LiveSessionConfigSchema.parse(live.config)).toMatchObject({ kind: 'live', name: 'legacy live', judges: ['oracle'] });
  } finally {
    reopened.close();
  }

  const listed = await runCli(['runs', '--workspace', ws]);
  expect(listed.code, listed.stderr).toBe(0);
  expect(listed.stdout).toMatch(new RegExp(`${suiteRun}\\s+interrupted\\s+suite\\s+0/\\d+\\s+legacy suite`));
  expect(listed.stdout).toMatch(new RegExp(`${liveRun}\\s+completed\\s+live\\s+1/1\\s+legacy live`));

  const resumed = await runCli(['run', suiteConfig, '--workspace', ws, '--resume', suiteRun, '--out', join(dir, 'suite-out'), '--no-progress']);
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(JSON.parse(readFileSync(join(dir, 'suite-out', 'summary.json'), 'utf8'))).toMatchObject({ kind: 'suite', run: { id: suiteRun, status: 'completed', mode: 'scripted' }, conversations: suite.conversations.length });

  const reported = await runCli(['report', liveRun, '--workspace', ws, '--out', join(dir, 'live-out')]);
  expect(reported.code, reported.stderr).toBe(0);
  expect(JSON.parse(readFileSync(join(dir, 'live-out', 'summary.json'), 'utf8'))).toMatchObject({ kind: 'live', run: { id: liveRun, mode: 'live' }, conversations: 1 });
});
