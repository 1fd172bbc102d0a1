import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Page } from 'playwright-core';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { buildUiInto, describeInBrowser, screenshot, startBenchApp, type BenchApp } from './app.ts';

/** how many conversations the quickstart plans */
const PLANNED = (parse(readFileSync(join(REPO_ROOT, 'bench-configs', 'quickstart.yaml'), 'utf8')) as { conversations: number }).conversations;
/** every output of a dialogue run the app hands over: what `icabench report RUN` writes, and the JSONL export */
const OUTPUTS = ['conversations.csv', 'export.jsonl', 'junit.xml', 'report.html', 'summary.json'];
/** the widest a page may be: the screen the bench app is designed for */
const MAX_PAGE_WIDTH = 1440;

/**
 * The technician's first day (#35), in Chromium: the UI built fresh from this checkout's sources with the project's
 * build script into a folder of its own (not the checkout's src/ui/dist), the app opened from it with the URL `icabench serve` printed, the quickstart
 * started and its Live tally watched, the report's first screen read, every output downloaded, a failing conversation
 * pinned and its suite run from the app, and the replay compared with the original run.
 */
describeInBrowser('the first day in the bench app', () => {
  let app: BenchApp;
  let page: Page;
  let pageErrors: string[];
  let runId: string;
  const uiBuild = mkdtempSync(join(tmpdir(), 'icabench-first-day-ui-'));

  beforeAll(async () => {
    await buildUiInto(uiBuild);
    app = await startBenchApp('icabench-first-day-', undefined, { ICABENCH_UI_DIR: uiBuild });
    ({ page, errors: pageErrors } = await app.newPage({ consoleErrors: true }));
  }, 240_000);
  afterAll(async () => {
    await app?.close();
    rmSync(uiBuild, { recursive: true, force: true });
  });

  const pageWidth = () => page.evaluate(() => document.documentElement.scrollWidth);

  it('opens with the printed URL and starts the quickstart', async () => {
    // the page is the fresh build's: the script it loads is one that build wrote
    const served = await (await fetch(`${app.origin}/`)).text();
    expect(served).toBe(readFileSync(join(uiBuild, 'index.html'), 'utf8'));
    const script = /<script[^>]+src="\/(assets\/[^"]+\.js)"/.exec(served)![1];
    expect(existsSync(join(uiBuild, script))).toBe(true);
    await page.goto(app.url);
    await page.getByTestId('rig-table').waitFor({ timeout: 60_000 });
    await page.goto(`${app.origin}/#/setup`);
    await expect.poll(() => page.getByTestId('config-editor').inputValue(), { timeout: 60_000 }).toContain('name: quickstart');
    expect(await pageWidth()).toBeLessThanOrEqual(MAX_PAGE_WIDTH);
    await page.getByTestId('start-campaign').click();
    await page.waitForURL(/#\/live/);
  });

  it('watches the Live tally, the findings plot, the rate and the time left until one final state', async () => {
    const count = async (id: string) => Number(await page.getByTestId(id).innerText());
    await expect.poll(async () => (await count('tally-pass')) + (await count('tally-fail')), { timeout: 120_000 }).toBeGreaterThan(0);
    await page.getByTestId('findings-plot').waitFor({ timeout: 120_000 });
    await expect.poll(() => page.getByTestId('live-rate').innerText(), { timeout: 60_000 }).toMatch(/^\d/);
    await screenshot(page, 'first-day-01-live');
    await expect.poll(() => page.getByTestId('live-state').innerText(), { timeout: 240_000, interval: 500 }).toBe('completed');
    expect(await page.getByTestId('live-done').innerText()).toBe(`${PLANNED} / ${PLANNED}`);
    const tally = (await count('tally-pass')) + (await count('tally-fail')) + (await count('tally-inconclusive')) + (await count('tally-error'));
    expect(tally).toBe(PLANNED);
    // turns count from 1 on every screen
    expect(await page.locator('[data-testid=turn-feed] .who').first().innerText()).toMatch(/^Turn [1-9]\d* · User$/);
    expect(await pageWidth()).toBeLessThanOrEqual(MAX_PAGE_WIDTH);
    await screenshot(page, 'first-day-02-live-finished');
    runId = decodeURIComponent(/#\/runs\/([^/]+)/.exec((await page.getByTestId('live-run-link').getAttribute('href'))!)![1]);
  });

  it('opens the report: its first screen names the unit, the injected faults, a plain verdict and the top findings', async () => {
    await page.getByTestId('live-run-link').click();
    await page.locator('[data-testid=run-downloads] button').first().waitFor({ timeout: 120_000 });
    const [report] = await Promise.all([page.context().waitForEvent('page'), page.getByTestId('open-report').click()]);
    await report.getByTestId('first-screen').waitFor({ timeout: 60_000 });
    const tested = await report.getByTestId('tested').innerText();
    expect(tested).toContain('icabench-reference');
    expect(tested).toMatch(/injected on purpose/);
    expect(await report.getByTestId('verdict').innerText()).toMatch(new RegExp(`^Verdict: \\d+ of ${PLANNED} conversations failed`));
    expect(await report.locator('[data-testid=top-findings] li').count()).toBe(3);
    expect(await report.locator('[data-testid=top-findings] li a').first().getAttribute('href')).toMatch(/^#/);
    await screenshot(report, 'first-day-03-report');
    await report.close();
  });

  it('downloads every output of the run', async () => {
    const names = await page.locator('[data-testid=run-downloads] button').evaluateAll((buttons) => buttons.map((b) => b.getAttribute('data-testid')!.replace('download-', '')));
    expect(names.sort()).toEqual(OUTPUTS);
    const texts = new Map<string, string>();
    for (const name of OUTPUTS) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId(`download-${name}`).click()]);
      expect(download.suggestedFilename()).toBe(`${runId}-${name}`);
      texts.set(name, readFileSync((await download.path())!, 'utf8'));
    }
    const summary = JSON.parse(texts.get('summary.json')!) as { conversations: number; run: { id: string } };
    expect(summary.run.id).toBe(runId);
    expect(summary.conversations).toBe(PLANNED);
    expect(texts.get('export.jsonl')!.trim().split('\n')).toHaveLength(PLANNED);
    expect(texts.get('conversations.csv')!.trim().split('\n')).toHaveLength(PLANNED + 1);
    expect(texts.get('junit.xml')).toContain(`tests="${PLANNED}"`);
    expect(texts.get('report.html')).toContain('data-testid="first-screen"');
  });

  it('pins a failing conversation and runs the pinned suite from the app, set beside the original', async () => {
    await page.getByLabel('outcome filter').selectOption('fail');
    await expect.poll(() => page.getByTestId('pager-status').innerText(), { timeout: 60_000 }).not.toContain(`${PLANNED} conversations`);
    await page.locator('[data-testid=conversation-table] tbody tr a').first().click();
    await page.getByTestId('conversation-title').waitFor({ timeout: 60_000 });
    await page.getByTestId('pin-conversation').click();
    await page.getByTestId('pinned-suite').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('pinned-suite').innerText()).toMatch(/suites\/pinned-.*\.yaml/);
    // the pinned suite's text wraps inside the page
    expect(await pageWidth()).toBeLessThanOrEqual(MAX_PAGE_WIDTH);
    await page.getByTestId('run-pinned-suite').click();
    await page.getByTestId('pinned-replay-result').waitFor({ timeout: 180_000 });
    const result = await page.getByTestId('pinned-replay-result').innerText();
    expect(result).toMatch(new RegExp(`Original \\(run ${runId}\\): fail`));
    expect(result).toMatch(/Replay \(run [^)]+\): (pass|fail|inconclusive)/);
    await screenshot(page, 'first-day-04-pinned-replay');
  });

  it('compares the replay with the original run, within the page width', async () => {
    await page.getByTestId('compare-replay').click();
    await page.getByTestId('comparison-table').waitFor({ timeout: 120_000 });
    expect(await page.getByTestId('comparison-table').innerText()).toMatch(new RegExp(`Conversations\\s+${PLANNED}\\s+1\\b`));
    expect(await pageWidth()).toBeLessThanOrEqual(MAX_PAGE_WIDTH);
    await screenshot(page, 'first-day-05-compare');
  });

  it('raised no script or CSP errors in the app', () => {
    expect(pageErrors).toEqual([]);
  });
});
