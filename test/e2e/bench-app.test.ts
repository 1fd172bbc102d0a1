import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Page } from 'playwright-core';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { describeInBrowser, screenshot, startBenchApp, type BenchApp } from './app.ts';

/** how many conversations the quickstart plans (the lead may tune it) */
const PLANNED = (parse(readFileSync(join(REPO_ROOT, 'bench-configs', 'quickstart.yaml'), 'utf8')) as { conversations: number }).conversations;

describeInBrowser('bench app in Chromium', () => {
  let app: BenchApp;
  let page: Page;
  let pageErrors: string[];

  beforeAll(async () => {
    app = await startBenchApp('icabench-e2e-');
    ({ page, errors: pageErrors } = await app.newPage({ consoleErrors: true }));
  });

  afterAll(() => app?.close());

  it('shows the rig status with a fix for each problem', async () => {
    await page.goto(app.url);
    await page.getByTestId('rig-table').waitFor();
    expect(page.url()).not.toContain('token=');
    const rows = await page.locator('[data-testid=rig-table] tbody tr').count();
    expect(rows).toBeGreaterThanOrEqual(4);
    await expect.poll(() => page.locator('[data-testid=rig-table]').innerText()).toContain('Disk');
    await screenshot(page, '01-rig-status');
  });

  it('shows field errors next to the config field while editing', async () => {
    await page.goto(`${app.origin}/#/setup`);
    const editor = page.getByTestId('config-editor');
    await expect.poll(() => editor.inputValue()).toContain('name: quickstart');
    const original = await editor.inputValue();
    await editor.fill(original.replace(/^conversations: \d+$/m, 'conversations: -5'));
    await page.getByTestId('field-error').first().waitFor();
    expect(await page.getByTestId('field-error').first().innerText()).toContain('conversations');
    expect(await page.getByTestId('start-campaign').isDisabled()).toBe(true);
    await screenshot(page, '02-setup-field-error');
    await editor.fill(original);
    await expect.poll(() => page.getByTestId('field-error').count()).toBe(0);
  });

  it('starts the quickstart campaign from the UI and watches turns arrive', async () => {
    await page.getByTestId('start-campaign').click();
    await page.waitForURL(/#\/live/);
    await page.getByTestId('live-turn').first().waitFor({ timeout: 60_000 });
    await screenshot(page, '03-live-running');
    await expect.poll(() => page.getByTestId('live-state').innerText(), { timeout: 180_000, interval: 500 }).toBe('completed');
    expect(await page.getByTestId('live-done').innerText()).toBe(`${PLANNED} / ${PLANNED}`);
    expect(await page.locator('[data-testid=turn-feed] [data-testid=live-turn]').count()).toBeGreaterThan(0);
    await screenshot(page, '04-live-finished');
  });

  it('opens the report with its charts and a paged conversation list', async () => {
    await page.getByRole('link', { name: 'quickstart' }).click();
    await page.getByTestId('report-charts').waitFor();
    await expect.poll(() => page.getByTestId('pager-status').innerText()).toContain(`${PLANNED} conversations`);
    expect(await page.locator('[data-testid=conversation-table] tbody tr').count()).toBe(Math.min(50, PLANNED));
    expect(await page.locator('[data-testid=report-charts] canvas').count()).toBe(5);
    const passed = Number(await page.locator('[data-testid=stat-passed] .stat-value').innerText());
    const failed = Number(await page.locator('[data-testid=stat-failed] .stat-value').innerText());
    expect(passed + failed).toBeGreaterThan(0);
    // the reference head unit runs over the bridge: its protocol panel shows a clean link
    await page.getByTestId('protocol-panel').waitFor();
    expect(await page.getByTestId('protocol-panel').innerText()).toMatch(/\b0\s*duplicate replies/i);
    await screenshot(page, '05-run-report');
  });

  it('drills into a conversation with every turn, its labels and the judge reasoning', async () => {
    // a failed conversation, so there are labels to see
    await page.getByLabel('outcome filter').selectOption('fail');
    await expect.poll(() => page.getByTestId('pager-status').innerText()).not.toContain(`${PLANNED} conversations`);
    await page.locator('[data-testid=conversation-table] tbody tr a').first().click();
    await page.getByTestId('conversation-title').waitFor();
    expect(await page.getByTestId('turn').count()).toBeGreaterThan(1);
    expect(await page.getByTestId('turn-label').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('conversation-verdict').first().innerText()).toContain('judge: oracle');
    // the shared target table, with the turns that introduced and completed each target
    expect(await page.getByTestId('target-table').locator('tbody tr').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('target-table').innerText()).toMatch(/(completed|incomplete|dropped)\s+introduced turn/);
    await screenshot(page, '06-conversation');
  });

  it('takes ratings from two raters on two conversations and shows the agreement figures', async () => {
    const rate = async (rater: string, scores: Record<string, number>, targetsCompleted = false) => {
      await page.getByTestId('rater-name').fill(rater);
      if (targetsCompleted) for (const select of await page.locator('select[data-testid^=target-]').all()) await select.selectOption('1');
      for (const [dimension, score] of Object.entries(scores)) await page.getByTestId(`dim-${dimension}-${score}`).check();
      await page.getByTestId('save-rating').click();
      await expect.poll(() => page.getByTestId('rating-message').innerText()).toContain(`Saved for ${rater}`);
    };
    await rate('alice', { instruction: 1, context: 2, plan: 2, safety: 2 });
    await rate('bob', { instruction: 0, context: 2, plan: 1, safety: 2 });
    await expect.poll(() => page.getByTestId('rating-panel').innerText()).toContain('alice, bob');
    await screenshot(page, '07-rating');

    // a second conversation (a passing one), rated by both
    await page.getByRole('link', { name: '← run report' }).click();
    await page.getByLabel('outcome filter').selectOption('pass');
    await expect.poll(() => page.locator('[data-testid=conversation-table] tbody tr td:nth-child(2)').first().innerText()).toBe('pass');
    await page.locator('[data-testid=conversation-table] tbody tr a').first().click();
    await page.getByTestId('conversation-title').waitFor();
    await rate('alice', { instruction: 2, context: 2, plan: 2, safety: 2 }, true);
    await rate('bob', { instruction: 2, context: 1, plan: 2, safety: 2 }, true);

    await page.getByTestId('agreement-link').click();
    await page.getByTestId('judge-agreement').waitFor();
    expect(await page.getByTestId('agreement-summary').innerText()).toContain('2 rated conversation(s) · raters: alice, bob');
    expect(await page.getByTestId('rater-pair').innerText()).toContain('alice vs bob · 2 shared conversation(s)');
    const judgeTable = await page.getByTestId('judge-agreement').innerText();
    expect(judgeTable).toContain('Instruction & Constraint Adherence');
    // with two items the weighted κ is defined for the instruction dimension (alice 1,2 / bob 0,2)
    const instructionRow = await page.locator('[data-testid=rater-pair] + table tbody tr').first().innerText();
    expect(instructionRow).toMatch(/Instruction & Constraint Adherence\s+-?\d\.\d\d/);
    expect(await page.locator('[data-testid=ratings-table] tbody tr').count()).toBe(4);
    await screenshot(page, '08-agreement');
  });

  it('compares two runs side by side', async () => {
    const runId = decodeURIComponent(/#\/runs\/([^/]+)/.exec(page.url())![1]);
    await page.goto(`${app.origin}/#/compare/${encodeURIComponent(runId)}/${encodeURIComponent(runId)}`);
    await page.getByTestId('comparison-table').waitFor();
    expect(await page.getByTestId('comparison-table').innerText()).toMatch(new RegExp(`Conversations\\s+${PLANNED}\\s+${PLANNED}`));
    await screenshot(page, '09-compare');
  });

  it('raised no script or CSP errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
