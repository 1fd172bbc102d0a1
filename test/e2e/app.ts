import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, it } from 'vitest';
import { CLI } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { browserGate, launchBrowser } from './browser.ts';

/** The browser tests' one start-up: the gate, `icabench serve` on a workspace, headless Chromium, pages and screenshots. */

const SCREENS = join(REPO_ROOT, 'test-results', 'screens');

/**
 * A describe block that runs only with Chromium: without it, one skipped test with the reason on a
 * developer's machine, a failure in CI (browserGate).
 */
export function describeInBrowser(name: string, body: () => void): void {
  const gate = browserGate();
  if (!gate.run) {
    console.warn(`${name}: ${gate.reason}`);
    it(name, (context) => context.skip(gate.reason));
  }
  describe.runIf(gate.run)(name, body);
}

/** Starts `icabench serve` on a free port and resolves with the URL it prints (rejects after 60 s or if it exits first). */
function startServe(workspace: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--workspace', workspace, '--port', '0'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`icabench serve exited with ${code}:\n${out}`));
    });
  });
}

export interface BenchApp {
  /** the URL `icabench serve` printed (with its token) */
  url: string;
  /** the URL's origin, for hash routes: `${origin}/#/runs` */
  origin: string;
  /**
   * A new page and the errors it reports: uncaught page errors, and with `consoleErrors` also
   * console.error messages (failed requests among them).
   */
  newPage(options?: { consoleErrors?: boolean }): Promise<{ page: Page; errors: string[] }>;
  /** closes the browser and stops the server (the workspace stays: its creator removes it) */
  close(): Promise<void>;
}

/** Serves `workspace` with `icabench serve` and opens headless Chromium beside it. */
export async function startBenchApp(workspace: string): Promise<BenchApp> {
  const serve = await startServe(workspace);
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  try {
    browser = await launchBrowser();
  } catch (error) {
    serve.child.kill('SIGTERM');
    throw error;
  }
  return {
    url: serve.url,
    origin: new URL(serve.url).origin,
    async newPage(options = {}) {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      if (options.consoleErrors) {
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text());
        });
      }
      return { page, errors };
    },
    async close() {
      try {
        await browser.close();
      } finally {
        serve.child.kill('SIGTERM');
      }
    },
  };
}

/** A full-page screenshot to test-results/screens/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENS, { recursive: true });
  await page.screenshot({ path: join(SCREENS, `${name}.png`), fullPage: true });
}
