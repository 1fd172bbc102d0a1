import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { connectHeadUnit, type BridgeClient } from '../../packages/bridge-sdk/src/index.ts';
import { goodHandler } from '../conformance/units.ts';
import { describeInBrowser, screenshot, startBenchApp, type BenchApp } from './app.ts';

describeInBrowser('the Conformance screen in Chromium', () => {
  let app: BenchApp;
  let page: Page;
  let pageErrors: string[];
  let unit: BridgeClient | null = null;

  beforeAll(async () => {
    app = await startBenchApp('icabench-e2e-conformance-');
    ({ page, errors: pageErrors } = await app.newPage({ consoleErrors: true }));
  });

  afterAll(async () => {
    await unit?.close();
    await app?.close();
  });

  it('starts a run, waits for a unit to dial in, shows every check and keeps the report', async () => {
    await page.goto(app.url);
    await page.goto(`${app.origin}/#/conformance`);
    await page.getByLabel('Port').fill('0');
    await page.getByLabel('Turn timeout (ms)').fill('5000');
    await page.getByLabel('Token (default $ICABENCH_BRIDGE_TOKEN)').fill('e2e-token');
    await page.getByTestId('conformance-start').click();
    await expect.poll(() => page.getByTestId('conformance-state').innerText()).toMatch(/^Waiting for a head unit at http:\/\/127\.0\.0\.1:\d+$/);
    const bridgeUrl = (await page.getByTestId('conformance-state').innerText()).replace('Waiting for a head unit at ', '');
    await screenshot(page, 'conformance-01-waiting');

    unit = await connectHeadUnit({ url: bridgeUrl, token: 'e2e-token', handler: goodHandler(), reconnect: true });
    await page.getByTestId('conformance-open-report').click({ timeout: 120_000 });
    await expect.poll(() => page.getByTestId('conformance-verdict').innerText()).toBe('test-unit 1.0 passed');
    const rows = page.locator('[data-testid=conformance-report] [data-testid=conformance-checks] tbody tr');
    expect(await rows.count()).toBe(11);
    expect(await rows.filter({ hasText: 'skipped' }).count()).toBe(3);
    expect(await rows.filter({ hasText: 'fail' }).count()).toBe(0);
    await rows.filter({ hasText: 'text turn round trip' }).locator('summary').click();
    expect(await rows.filter({ hasText: 'text turn round trip' }).locator('pre').innerText()).toContain('bench → unit user_turn');
    await screenshot(page, 'conformance-02-report');
    expect(await page.getByTestId('conformance-reports').locator('tbody tr').count()).toBe(1);
    expect(pageErrors).toEqual([]);
  });
});
