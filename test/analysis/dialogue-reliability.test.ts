import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/analysis/compare.ts';
import { computeRunSummary } from '../../src/analysis/profile.ts';
import { reliability } from '../../src/analysis/reliability.ts';
import { conversationPlanOfKey } from '../../src/domain/plan-key.ts';
import { buildTiers } from '../../src/kinds/dialogue/tiers.ts';
import { comparisonHtml, RunHtmlWriter } from '../../src/report/html.ts';
import { campaignFromYaml, tempStore } from '../kinds/dialogue/helpers.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

describe('pass^k / pass@k of dialogue campaigns with repeats', () => {
  it('groups a stored key with its repeats by removing only the repeat segment', () => {
    expect(conversationPlanOfKey('c00003-nav-r2-r1')).toBe('c00003-nav-r2');
    expect(conversationPlanOfKey('c00003-nav-r2-r1-snr10')).toBe('c00003-nav-r2-snr10');
    expect(conversationPlanOfKey('c00003-nav-r12-clean')).toBe('c00003-nav-clean');
    expect(conversationPlanOfKey('no-repeat-here')).toBe('no-repeat-here');
  });

  it('summary.json, the report and compare carry them; a run without repeats has none', async () => {
    const loaded = campaignFromYaml('name: rep\nconversations: 6\nrepeats: 3\nconcurrency: 2\nheadUnit: { type: reference, faults: { profiles: all, rate: 0.4 } }\n');
    const store = tempStore((close) => cleanups.push(close));
    const { runId } = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config) });
    const conversations = [...store.conversations(runId)];
    const summary = computeRunSummary(conversations);
    expect(summary.reliability).toBeDefined();
    const rel = summary.reliability!;
    expect(rel).toMatchObject({ items: 6, trials: 18, minTrials: 3, maxTrials: 3 });
    // by hand: the conversation index is the key's first segment; trials in repeat order
    const byPlan = new Map<string, boolean[]>();
    for (const row of summary.perConversation) {
      const plan = row.key.split('-')[0];
      byPlan.set(plan, [...(byPlan.get(plan) ?? []), row.outcome === 'pass']);
    }
    expect(rel).toEqual(reliability(byPlan));
    // the faults make some trials fail and some pass, so the figures are not trivial
    expect(rel.byK[0].passAtK.unbiased).toBeGreaterThan(0);
    expect(rel.byK[0].passAtK.unbiased).toBeLessThan(1);
    // pass^k never rises with k, pass@k never falls (unbiased estimator)
    for (let k = 1; k < rel.byK.length; k++) {
      expect(rel.byK[k].passHatK.unbiased).toBeLessThanOrEqual(rel.byK[k - 1].passHatK.unbiased + 1e-12);
      expect(rel.byK[k].passAtK.unbiased).toBeGreaterThanOrEqual(rel.byK[k - 1].passAtK.unbiased - 1e-12);
    }

    const html = join(mkdtempSync(join(tmpdir(), 'icabench-reliability-')), 'report.html');
    const writer = new RunHtmlWriter(html);
    for (const c of conversations) writer.add(c);
    writer.write({ id: 'r', name: 'rep', mode: 'guided', status: 'completed', createdAt: 'now', finishedAt: null }, summary);
    expect(readFileSync(html, 'utf8')).toContain('Reliability over repeats (pass^k / pass@k)');

    const single = computeRunSummary(conversations.filter((c) => c.spec.repeat === 0));
    expect(single.reliability).toBeUndefined();
    const comparison = compareRuns(summary, single);
    expect(comparison.reliability).toEqual({ a: rel, b: null });
    expect(comparisonHtml(comparison)).toContain('pass^k A: ');
    expect(compareRuns(single, single).reliability).toBeUndefined();
  }, 120_000);
});

describe('icabench run / compare with repeats', () => {
  it('summary.json carries reliability and compare prints pass^k and pass@k per k', () => {
    const dir = mkdtempSync(join(tmpdir(), 'reliability-cli-'));
    writeFileSync(join(dir, 'rep.yaml'), `name: rep\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 4\nrepeats: 2\nheadUnit: { type: reference, faults: { profiles: all, rate: 0.4 } }\n`);
    const cli = (args: string[]) => spawnSync(process.execPath, [resolve('bin/icabench.js'), ...args], { encoding: 'utf8' });
    const run = cli(['run', join(dir, 'rep.yaml'), '--workspace', join(dir, 'ws'), '--out', join(dir, 'out'), '--no-progress']);
    expect(run.status, run.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.reliability).toMatchObject({ items: 4, trials: 8, maxTrials: 2 });
    expect(readFileSync(join(dir, 'out', 'report.html'), 'utf8')).toContain('Reliability over repeats');
    const compared = cli(['compare', join(dir, 'out'), join(dir, 'out')]);
    expect(compared.status, compared.stderr).toBe(0);
    expect(compared.stdout).toMatch(/^A pass\^k \(unbiased\) k=1 [\d.]+%, k=2 [\d.]+%; pass@k k=1 [\d.]+%, k=2 [\d.]+%$/m);
  }, 120_000);
});
