import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { describeInBrowser, screenshot, startBenchApp, type BenchApp } from './app.ts';

/**
 * The bench app shows the verdict, C and the findings (issue #21): highway-safety under the defaults
 * (every safety violation fails, though C = 0.80 passes θ) and under the paper's pure-score rule.
 */
describeInBrowser('verdict, C and findings in the bench app (Chromium)', () => {
  let app: BenchApp;
  const runs: Record<'defaults' | 'pure', string> = { defaults: '', pure: '' };

  beforeAll(async () => {
    app = await startBenchApp('icabench-e2e-findings-', async (workspace) => {
      const dir = mkdtempSync(join(tmpdir(), 'icabench-findings-cfg-'));
      const text = readFileSync(join(REPO_ROOT, 'bench-configs', 'highway-safety.yaml'), 'utf8').replace('seeds: seeds/in-car.yaml', `seeds: ${join(REPO_ROOT, 'bench-configs', 'seeds', 'in-car.yaml')}`);
      for (const [which, scoring] of [
        ['defaults', ''],
        ['pure', 'scoring: { failOn: [] }\n'],
      ] as const) {
        const config = join(dir, `${which}.yaml`);
        writeFileSync(config, text.replace(/^name: .*$/m, `name: highway-${which}`) + scoring);
        const run = await runCli(['run', config, '--workspace', workspace, '--out', join(dir, `out-${which}`), '--no-progress']);
        if (run.code !== 0) throw new Error(`icabench run ${which}: ${run.stderr}`);
        runs[which] = /run (\S+) completed/.exec(run.stdout)![1];
      }
    });
  }, 240_000);

  afterAll(() => app?.close());

  it('the run view shows the fail rate beside the conversations with findings and the findings rule', async () => {
    const { page, errors } = await app.newPage();
    await page.goto(app.url);
    await page.evaluate((id) => (window.location.hash = `#/runs/${encodeURIComponent(id)}`), runs.defaults);
    await page.getByTestId('stat-findings').waitFor({ timeout: 60_000 });
    expect(await page.locator('[data-testid=stat-fail-rate] .stat-value').innerText()).toMatch(/^100\.0\s?%$/);
    expect(await page.locator('[data-testid=stat-findings] .stat-value').innerText()).toMatch(/^24 \(100\.0\s?%\)$/);
    expect(await page.locator('[data-testid=stat-fail-on] .stat-value').innerText()).toBe('every label');
    expect(await page.locator('[data-testid=stat-passed] .stat-value').innerText()).toBe('0');
    await screenshot(page, 'findings-01-run');

    // a conversation: the verdict that counts, C beside it, and every finding with its turn and evidence
    await page.locator('[data-testid=conversation-table] tbody tr a').first().click();
    await page.getByTestId('conversation-outcome').waitFor();
    const outcome = await page.getByTestId('conversation-outcome').innerText();
    expect(outcome).toMatch(/^fail\b/);
    expect(outcome).toContain('failed by its findings (failOn: safety_violation)');
    expect(await page.getByTestId('conversation-score').innerText()).toBe('0.80');
    const finding = await page.getByTestId('finding-row').first().innerText();
    expect(finding).toMatch(/^\d+\s+safety_violation\s+critical\s+oracle\s+Complied with/);
    await screenshot(page, 'findings-02-conversation');
    expect(errors).toEqual([]);
  });

  it('the same conversations under failOn: [] pass by C, with their findings still listed', async () => {
    const { page, errors } = await app.newPage();
    await page.goto(app.url);
    await page.evaluate((id) => (window.location.hash = `#/runs/${encodeURIComponent(id)}`), runs.pure);
    await page.getByTestId('stat-findings').waitFor({ timeout: 60_000 });
    expect(await page.locator('[data-testid=stat-fail-rate] .stat-value').innerText()).toMatch(/^0\.0\s?%$/);
    expect(await page.locator('[data-testid=stat-findings] .stat-value').innerText()).toMatch(/^24 \(100\.0\s?%\)$/);
    expect(await page.locator('[data-testid=stat-fail-on] .stat-value').innerText()).toBe('none');
    await page.locator('[data-testid=conversation-table] tbody tr a').first().click();
    await page.getByTestId('conversation-outcome').waitFor();
    expect(await page.getByTestId('conversation-outcome').innerText()).toMatch(/^pass\b/);
    expect(await page.getByTestId('finding-row').count()).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });

  it('compare shows both rules, the fail rates and the conversations with findings side by side', async () => {
    const { page, errors } = await app.newPage();
    await page.goto(app.url);
    await page.evaluate(([a, b]) => (window.location.hash = `#/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}`), [runs.defaults, runs.pure]);
    await page.getByTestId('comparison-table').waitFor({ timeout: 120_000 });
    const table = await page.getByTestId('comparison-table').innerText();
    expect(table).toMatch(/Fail rate\s+100\.0\s?%\s+0\.0\s?%/);
    expect(table).toMatch(/Conversations with findings\s+24 \(100\.0\s?%\)\s+24 \(100\.0\s?%\)/);
    expect(table).toMatch(/Findings that fail \(scoring\.failOn\)\s+every label\s+none/);
    expect(table).toMatch(/Unique conversations with findings\s+\d+\s+\d+/);
    await screenshot(page, 'findings-03-compare');
    expect(errors).toEqual([]);
  });
});
