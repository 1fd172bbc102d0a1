import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { describeInBrowser } from './app.ts';
import { launchBrowser } from './browser.ts';

/**
 * #27 item 6, the first hour: after an install nothing has built the UI; the README's one command
 * (`npm run serve` = `icabench serve`) builds it on the first start into its build folder (here a
 * fresh one, ICABENCH_UI_DIR) and the printed URL opens the app in Chromium, never the page "The bench
 * UI is not built".
 */
describeInBrowser('the first icabench serve after an install', () => {
  it('builds the UI into a fresh build folder and the printed URL opens the app', async () => {
    const root = mkdtempSync(join(tmpdir(), 'icabench-first-start-'));
    const uiDir = join(root, 'ui-dist');
    const child = spawn(process.execPath, [CLI, 'serve', '--workspace', join(root, 'ws'), '--port', '0'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ICABENCH_UI_DIR: uiDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        const match = /icabench bench app: (http:\/\/\S+)/.exec(out);
        if (match) resolve(match[1]);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('exit', (code) => reject(new Error(`icabench serve exited with ${code}:\n${out}`)));
    });
    const browser = await launchBrowser();
    try {
      expect(out).toMatch(/The bench UI is not built yet: building it once into .*ui-dist/);
      expect(existsSync(join(uiDir, 'index.html'))).toBe(true);
      const page = await browser.context.newPage();
      await page.goto(url);
      await expect.poll(() => page.locator('[data-testid=rig-table]').count(), { timeout: 60_000 }).toBeGreaterThan(0);
      expect(await page.content()).not.toContain('The bench UI is not built');
    } finally {
      await browser.close();
      child.kill('SIGTERM');
      rmSync(root, { recursive: true, force: true });
    }
  });
});
