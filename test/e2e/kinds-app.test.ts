import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Page } from 'playwright-core';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { describeInBrowser, screenshot, startBenchApp, type BenchApp } from './app.ts';

/**
 * The bench app runs every campaign kind on the one run skeleton: from Campaign setup, a manual-QA run and a
 * tool-agents run (the shipped configs, deterministic tiers, no model) start, show their items live, and open
 * their run pages once finished; the tool-agents run is stopped mid-run and resumed to its end from the live view.
 */

const config = (name: string) => readFileSync(join(REPO_ROOT, 'bench-configs', name), 'utf8');
/** the shipped manual-QA config with the fewest questions (GEAR as published; offline, its deterministic tier) */
const MANUAL = 'manual-qa-paper.yaml';
const MANUAL_QUESTIONS = (parse(config(MANUAL)) as { limit: number }).limit;
const CARBENCH = config('carbench-train.yaml');
const TASKS = (parse(CARBENCH) as { tasks: string[] }).tasks.reduce((n, file) => n + (JSON.parse(readFileSync(join(REPO_ROOT, 'bench-configs', file), 'utf8')) as unknown[]).length, 0);
/** trials per task in the edited config: enough trials (items take milliseconds) that the Stop lands mid-run */
const REPEATS = 6;

describeInBrowser('every campaign kind from the bench app in Chromium', () => {
  let app: BenchApp;
  let page: Page;
  let pageErrors: string[];

  beforeAll(async () => {
    app = await startBenchApp('icabench-e2e-kinds-');
    ({ page, errors: pageErrors } = await app.newPage({ consoleErrors: true }));
    await page.goto(app.url);
  });

  afterAll(() => app?.close());

  const openConfig = async (name: string, kind: string) => {
    await page.goto(`${app.origin}/#/setup`);
    await page.getByTestId(`config-${name}`).click();
    await expect.poll(() => page.getByTestId('config-editor').inputValue()).toContain(`kind: ${kind}`);
  };
  const liveText = (id: string) => page.getByTestId(id).innerText();

  it('starts a tool-agents run, shows its task trials live, stops it, resumes it to the end and opens its run page', async () => {
    await openConfig('carbench-train.yaml', 'tool-agents');
    const editor = page.getByTestId('config-editor');
    await editor.fill(CARBENCH.replace(/^repeats: \d+$/m, `repeats: ${REPEATS}`));
    await expect.poll(() => page.getByTestId('start-campaign').innerText()).toBe('Start carbench-train.yaml (tool-agents) (edited)');
    await page.getByTestId('start-campaign').click();
    await page.waitForURL(/#\/live/);
    await expect.poll(() => liveText('live-kind')).toBe('tool-agents');
    // a task trial running now: its key and what it runs
    const item = page.getByTestId('live-item').first();
    await item.waitFor();
    expect(await item.innerText()).toMatch(/^\w+_\d+#\d+ \w+_\d+ \(trial \d+\)$/);
    await screenshot(page, 'kinds-01-tool-agents-live');

    await page.getByTestId('stop-campaign').click();
    await expect.poll(() => liveText('live-state'), { timeout: 60_000 }).toBe('interrupted');
    const [done, planned] = (await liveText('live-done')).split(' / ').map(Number);
    expect(planned).toBe(TASKS * REPEATS);
    expect(done).toBeLessThan(planned);
    // what finished links to its trial page, with the kind's own word when it is not pass/fail
    expect(await page.locator('[data-testid=recent-table] a').first().getAttribute('href')).toMatch(/^#\/runs\/[^/]+\/tool-agents\/\w+_\d+%23\d+$/);
    expect(await page.getByTestId('turn-feed').count()).toBe(0);
    await screenshot(page, 'kinds-02-tool-agents-stopped');

    await page.getByTestId('resume-run').click();
    await expect.poll(() => liveText('live-state'), { timeout: 180_000, interval: 500 }).toBe('completed');
    expect(await liveText('live-done')).toBe(`${planned} / ${planned}`);
    expect(await page.getByTestId('resume-run').count()).toBe(0);

    await page.getByTestId('live-run-link').click();
    await page.getByTestId('tool-run').waitFor();
    expect(await page.locator('[data-testid=tool-tasks] tbody tr').count()).toBe(TASKS);
    expect(await page.getByTestId('tool-run').innerText()).toContain(`${planned} / ${planned}`);
    expect(await page.getByTestId('resume-run').count()).toBe(0);
    await screenshot(page, 'kinds-03-tool-agents-run');
  });

  it('starts the shipped manual-QA config, shows its questions live, and opens the finished run and a question', async () => {
    await openConfig(MANUAL, 'manual-qa');
    expect(await page.getByTestId('start-campaign').innerText()).toBe(`Start ${MANUAL} (manual-qa)`);
    await page.getByTestId('start-campaign').click();
    await page.waitForURL(/#\/live/);
    await expect.poll(() => liveText('live-kind')).toBe('manual-qa');
    await page.getByTestId('live-item').first().waitFor();
    await screenshot(page, 'kinds-04-manual-live');
    await expect.poll(() => liveText('live-state'), { timeout: 180_000, interval: 500 }).toBe('completed');
    expect(await liveText('live-done')).toBe(`${MANUAL_QUESTIONS} / ${MANUAL_QUESTIONS}`);
    expect(await page.getByTestId('progress-bar').innerText()).toBe(`questions ${MANUAL_QUESTIONS}/${MANUAL_QUESTIONS}`);

    // a question that just finished opens on its own page
    await page.locator('[data-testid=recent-table] a').first().click();
    await page.getByTestId('annotation-form').waitFor();
    await page.goBack();
    await page.getByTestId('live-run-link').click();
    await page.getByTestId('manual-run').waitFor();
    expect(await page.locator('[data-testid=manual-questions] tbody tr').count()).toBe(MANUAL_QUESTIONS);
    await screenshot(page, 'kinds-05-manual-run');
  });

  it('compares the runs it can and greys out the others with the reason before any click', async () => {
    await page.goto(`${app.origin}/#/runs`);
    await page.getByTestId('runs-table').waitFor();
    const ids = await page.locator('[data-testid=runs-table] tbody tr td:first-child a').allInnerTexts();
    expect(ids).toHaveLength(2);
    const [manualRun, toolRun] = ids;
    await page.goto(`${app.origin}/#/compare/${toolRun}`);
    const manualOption = page.getByTestId('compare-b').locator(`option[value="${manualRun}"]`);
    await manualOption.waitFor({ state: 'attached' });
    expect(await manualOption.isDisabled()).toBe(true);
    expect(await manualOption.getAttribute('title')).toContain('a manual-qa run is not compared');
    await page.getByTestId('compare-b').selectOption(toolRun);
    await page.getByTestId('tool-comparison-table').waitFor();
    expect(await page.locator('[data-testid=tool-comparison-table] tbody tr').count()).toBe(3);
    await screenshot(page, 'kinds-06-compare');
    expect(pageErrors).toEqual([]);
  });
});
