import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { expect, it } from 'vitest';
import { CLI } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { describeInBrowser } from './app.ts';
import { inCi } from './browser.ts';

/**
 * #24 item 5: `npm run app` (= `icabench app`) where Electron's binary is not installed (its install
 * script is denied offline, as on this machine) says how to get it and opens the same UI in a Chromium
 * app window, here on a virtual display (Xvfb); the test looks into the window through Chromium's
 * debugging port (ICABENCH_CHROMIUM_ARGS) and keeps a screenshot in test-results/screens/app-window.png.
 */
const XVFB_RUN = '/usr/bin/xvfb-run';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describeInBrowser('icabench app without the Electron binary', () => {
  const haveXvfb = existsSync(XVFB_RUN);
  if (!haveXvfb && inCi()) throw new Error(`${XVFB_RUN} is missing: bash scripts/setup-system.sh installs xvfb`);

  it.runIf(haveXvfb)('says Electron is not installed and opens the bench in a Chromium app window (Xvfb, screenshot)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'icabench-app-window-'));
    const debugPort = await freePort();
    const child = spawn(XVFB_RUN, ['-a', '-s', '-screen 0 1440x900x24', process.execPath, CLI, 'app', '--workspace', join(root, 'ws')], {
      cwd: REPO_ROOT,
      env: { ...process.env, ICABENCH_CHROMIUM_ARGS: `--remote-debugging-port=${debugPort}` },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    try {
      await expect.poll(() => /icabench bench app: (http:\/\/\S+)/.exec(out)?.[1], { timeout: 120_000, interval: 500 }).toBeDefined();
      const url = /icabench bench app: (http:\/\/\S+)/.exec(out)![1];
      expect(out).toContain('The Electron binary is not installed');
      // not Electron's own "reinstall" advice, which cannot help offline
      expect(out).not.toContain('Electron failed to install correctly');
      expect(out).toContain('Opening the bench in a Chromium app window instead');
      // the window's Chromium, through its debugging port, once it is up
      let browser: Awaited<ReturnType<typeof chromium.connectOverCDP>> | null = null;
      await expect
        .poll(
          async () => {
            browser ??= await chromium.connectOverCDP(`http://127.0.0.1:${debugPort}`).catch(() => null);
            return browser?.contexts().flatMap((c) => c.pages()).length ?? 0;
          },
          { timeout: 60_000, interval: 500 },
        )
        .toBeGreaterThan(0);
      const page = browser!.contexts().flatMap((c) => c.pages())[0];
      expect(page.url().startsWith(url.split('/#')[0])).toBe(true);
      await expect.poll(() => page.locator('[data-testid=rig-table]').count(), { timeout: 60_000 }).toBeGreaterThan(0);
      mkdirSync(join(REPO_ROOT, 'test-results', 'screens'), { recursive: true });
      await page.screenshot({ path: join(REPO_ROOT, 'test-results', 'screens', 'app-window.png') });
      await browser!.close().catch(() => undefined);
    } finally {
      // the whole group: xvfb-run, Xvfb, icabench app and its Chromium
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
      rmSync(root, { recursive: true, force: true });
    }
  });
});
