import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { browserGate, launchBrowser } from './browser.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'bin', 'icabench.js');
const SCREENS = join(ROOT, 'test-results', 'screens');

function startServe(workspace: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--workspace', workspace, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`icabench serve printed no URL within 60 s:\n${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /icabench bench app: (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`icabench serve exited with ${code}:\n${out}`)));
  });
}

const gate = browserGate();
if (!gate.run) {
  console.warn(`manual-QA view in Chromium: ${gate.reason}`);
  it('manual-QA view in Chromium', (context) => context.skip(gate.reason));
}

describe.runIf(gate.run)('manual-QA run view in Chromium', () => {
  let workspace: string;
  let serve: { child: ChildProcess; url: string };
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let runId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SCREENS, { recursive: true });
    workspace = mkdtempSync(join(tmpdir(), 'icabench-e2e-manual-'));
    const xml = join(ROOT, 'data', 'bmw-manual', 'xml');
    const chapters = readdirSync(xml).filter((f) => f.endsWith('.xml')).sort().slice(0, 3).map((f) => join(xml, f));
    const config = join(workspace, 'manual.yaml');
    writeFileSync(config, `kind: manual-qa\nname: manual-e2e\nmanual: ${JSON.stringify(chapters)}\nlimit: 12\nmanualFaults: { profiles: all, rate: 0.5 }\n`);
    const run = spawnSync(process.execPath, [CLI, 'run', config, '--workspace', workspace, '--out', join(workspace, 'out')], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    runId = /run (\S+) completed/.exec(run.stdout)![1];
    serve = await startServe(workspace);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  afterAll(async () => {
    await browser?.close();
    serve?.child.kill('SIGTERM');
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('lists the run as manual-qa, opens its questions, and a rater annotation shows up in the alignment numbers', async () => {
    await page.goto(serve.url);
    await page.goto(`${new URL(serve.url).origin}/#/runs`);
    await page.getByTestId('runs-table').waitFor();
    expect(await page.getByTestId('runs-table').innerText()).toContain('manual-qa · items');
    await page.locator(`a[href="#/runs/${runId}/manual"]`).first().click();
    await page.getByTestId('manual-questions').waitFor();
    expect(await page.locator('[data-testid=manual-questions] tbody tr').count()).toBe(12);
    expect(await page.getByTestId('manual-metrics').innerText()).toContain('Risk awareness');
    await page.screenshot({ path: join(SCREENS, 'manual-01-run.png'), fullPage: true });

    await page.locator('[data-testid=manual-questions] tbody tr a').first().click();
    await page.getByTestId('annotation-form').waitFor();
    expect(await page.getByTestId('reference-facts').first().locator('tbody tr').count()).toBeGreaterThan(0);
    await page.getByTestId('rater').fill('ann');
    await page.getByTestId('save-annotation').click();
    await expect.poll(() => page.getByTestId('annotation-message').innerText()).toBe('saved for ann');
    await page.screenshot({ path: join(SCREENS, 'manual-02-question.png'), fullPage: true });

    await page.locator('a', { hasText: '← manual-QA run' }).click();
    await page.getByTestId('manual-alignment').waitFor();
    expect(await page.getByTestId('manual-alignment').innerText()).toContain('tag essential');
    expect(pageErrors).toEqual([]);
  });
});
