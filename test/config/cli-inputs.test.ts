import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { planConversations } from '../../src/kinds/dialogue/sampling.ts';
import { startBenchApp } from '../../src/server/bench.ts';
import { ResultStore } from '../../src/store/store.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

const CLI = join(REPO_ROOT, 'bin/icabench.js');
const run = (args: string[], cwd = REPO_ROOT) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd });

/** A small campaign in its own folder, with its seed pool and scenario beside it (named relative to the config). */
function miniCampaign(extra = ''): { dir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-cli-inputs-'));
  mkdirSync(join(dir, 'pools'));
  copyFileSync(join(REPO_ROOT, 'bench-configs/seeds/in-car.yaml'), join(dir, 'pools/seeds.yaml'));
  const config = join(dir, 'mini.yaml');
  writeFileSync(config, `name: cli-mini\nseeds: pools/seeds.yaml\nconversations: 2\nmaxTurns: [2]\nconcurrency: 1\n${extra}`);
  return { dir, config };
}

describe('failing commands leave no store behind', () => {
  it('--resume nosuchrun fails with the reason and creates no workspace or icabench.db', () => {
    const { dir, config } = miniCampaign();
    const workspace = join(dir, 'ws');
    const result = run(['run', config, '--resume', 'nosuchrun', '--workspace', workspace, '--no-progress']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/no results store at .*icabench\.db, so no run to continue/);
    expect(existsSync(workspace)).toBe(false);
  }, 60_000);

  it('--resume with an unknown id in an existing store names the id, and the store keeps its runs', () => {
    const { dir, config } = miniCampaign();
    const workspace = join(dir, 'ws');
    const store = ResultStore.open(join(workspace, 'icabench.db'));
    const campaign = loadCampaignConfig(config);
    store.createRun({ name: 'cli-mini', mode: 'guided', config: campaign.config, plan: planConversations(campaign) });
    store.close();
    const result = run(['run', config, '--resume', 'nosuchrun', '--workspace', workspace, '--no-progress']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/--resume nosuchrun: no such run in/);
    const reopened = ResultStore.open(join(workspace, 'icabench.db'));
    expect(reopened.listRuns()).toHaveLength(1);
    reopened.close();
  }, 60_000);

  it('an invalid config, /dev/zero and a missing file fail before the store is touched', () => {
    const { dir, config } = miniCampaign('concurency: 2\n');
    const workspace = join(dir, 'ws');
    const typo = run(['run', config, '--workspace', workspace, '--no-progress']);
    expect(typo.status).not.toBe(0);
    expect(typo.stderr).toMatch(/mini\.yaml:6: concurency: unknown key "concurency" \(did you mean "concurrency"\?\)/);
    const zero = run(['run', '/dev/zero', '--workspace', workspace, '--no-progress']);
    expect(zero.status).not.toBe(0);
    expect(zero.stderr).toMatch(/\/dev\/zero: the campaign config is more than 1 MiB \(read up to the cap and stopped\), larger than the limit of 1 MiB/);
    const missing = run(['run', join(dir, 'nope.yaml'), '--workspace', workspace, '--no-progress']);
    expect(missing.stderr).toMatch(/nope\.yaml: cannot read the campaign config \(no such file\)/);
    expect(existsSync(workspace)).toBe(false);
  }, 60_000);
});

describe('the bench app that cannot start', () => {
  it('leaves no store behind (port already taken)', async () => {
    const blocker = createServer();
    await new Promise<void>((done) => blocker.listen(0, '127.0.0.1', done));
    const port = (blocker.address() as AddressInfo).port;
    const workspace = join(mkdtempSync(join(tmpdir(), 'icabench-serve-')), 'ws');
    try {
      await expect(startBenchApp({ workspace, port, host: '127.0.0.1' })).rejects.toThrow();
      expect(existsSync(workspace)).toBe(false);
    } finally {
      blocker.close();
    }
  });
});

describe('--resume without an id', () => {
  it('continues the latest unfinished run of the config', () => {
    const { dir, config } = miniCampaign();
    const workspace = join(dir, 'ws');
    const store = ResultStore.open(join(workspace, 'icabench.db'));
    const campaign = loadCampaignConfig(config);
    const plan = planConversations(campaign);
    const older = store.createRun({ name: 'cli-mini', mode: 'guided', config: campaign.config, plan });
    store.setRunStatus(older, 'interrupted');
    const newer = store.createRun({ name: 'cli-mini', mode: 'guided', config: campaign.config, plan });
    store.setRunStatus(newer, 'interrupted');
    expect(store.listRuns()[0].id).toBe(newer);
    store.close();
    const result = run(['run', config, '--resume', '--workspace', workspace, '--out', join(dir, 'out'), '--no-progress']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain(`run ${newer} completed`);
    const reopened = ResultStore.open(join(workspace, 'icabench.db'));
    expect(reopened.getRun(older)?.status).toBe('interrupted');
    expect(reopened.getRun(newer)?.status).toBe('completed');
    reopened.close();
  }, 120_000);
});

describe('paths resolve against the config file, not the working directory', () => {
  it('a vehicle campaign run from another folder finds its seeds and its scenario beside the config', () => {
    const { dir, config } = miniCampaign('vehicle:\n  scenario: scenes/parked.yaml\n  transport: bridge\n');
    mkdirSync(join(dir, 'scenes'));
    writeFileSync(join(dir, 'scenes/parked.yaml'), readFileSync(join(REPO_ROOT, 'bench-configs/scenarios/parked.yaml'), 'utf8'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'icabench-cwd-'));
    const result = run(['run', config, '--workspace', join(elsewhere, 'ws'), '--out', join(elsewhere, 'out'), '--no-progress'], elsewhere);
    expect(result.status, result.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(elsewhere, 'out', 'summary.json'), 'utf8'));
    expect(summary.conversations).toBe(2);
    expect(loadCampaignConfig(config).config.vehicle?.scenario).toBe(join(dir, 'scenes/parked.yaml'));
    expect(loadCampaignConfig(config).config.seeds).toBe(join(dir, 'pools/seeds.yaml'));
  }, 120_000);
});
