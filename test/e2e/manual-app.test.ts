import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { CLI } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { describeInBrowser, screenshot, startBenchApp, type BenchApp } from './app.ts';

describeInBrowser('manual-QA run view in Chromium', () => {
  let app: BenchApp;
  let page: Page;
  let runId: string;
  let pageErrors: string[];

  beforeAll(async () => {
    app = await startBenchApp('icabench-e2e-manual-', (workspace) => {
      const xml = join(REPO_ROOT, 'data', 'bmw-manual', 'xml');
      const chapters = readdirSync(xml).filter((f) => f.endsWith('.xml')).sort().slice(0, 3).map((f) => join(xml, f));
      const config = join(workspace, 'manual.yaml');
      writeFileSync(config, `kind: manual-qa\nname: manual-e2e\nmanual: ${JSON.stringify(chapters)}\nlimit: 12\nmanualFaults: { profiles: all, rate: 0.5 }\n`);
      const run = spawnSync(process.execPath, [CLI, 'run', config, '--workspace', workspace, '--out', join(workspace, 'out')], { cwd: REPO_ROOT, encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      runId = /run (\S+) completed/.exec(run.stdout)![1];
    });
    ({ page, errors: pageErrors } = await app.newPage());
  });

  afterAll(() => app?.close());

  it('lists the run as manual-qa, opens its questions, and a rater annotation shows up in the alignment numbers', async () => {
    await page.goto(app.url);
    await page.goto(`${app.origin}/#/runs`);
    await page.getByTestId('runs-table').waitFor();
    expect(await page.getByTestId('runs-table').innerText()).toContain('manual-qa');
    await page.locator(`a[href="#/runs/${runId}/manual"]`).first().click();
    await page.getByTestId('manual-questions').waitFor();
    expect(await page.locator('[data-testid=manual-questions] tbody tr').count()).toBe(12);
    expect(await page.getByTestId('manual-metrics').innerText()).toContain('Risk awareness');
    await screenshot(page, 'manual-01-run');

    await page.locator('[data-testid=manual-questions] tbody tr a').first().click();
    await page.getByTestId('annotation-form').waitFor();
    // blinded: the evaluators' judgements are hidden until the rater asks for them
    expect(await page.getByTestId('reference-facts').count()).toBe(0);
    await page.getByTestId('rater').fill('ann');
    await page.getByTestId('save-annotation').click();
    await expect.poll(() => page.getByTestId('annotation-message').innerText()).toBe('saved for ann');
    await page.getByTestId('show-judgements').click();
    expect(await page.getByTestId('reference-facts').first().locator('tbody tr').count()).toBeGreaterThan(0);
    await screenshot(page, 'manual-02-question');

    await page.locator('a', { hasText: '← manual-QA run' }).click();
    await page.getByTestId('manual-alignment').waitFor();
    expect(await page.getByTestId('manual-alignment').innerText()).toContain('tag essential');
    expect(pageErrors).toEqual([]);
  });
});
