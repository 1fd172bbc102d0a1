import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, it } from 'vitest';
import { CLI } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { browserGate, launchBrowser } from './browser.ts';
import { SUITES_DIR_ENV } from '../../src/suite/folder.ts';

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

/**
 * Builds the bench UI into `dir` with the project's own build script (`npm run build:ui`), as a fresh clone would build
 * it; `icabench serve` serves that folder when ICABENCH_UI_DIR names it. Rejects with the build's output if it fails.
 */
export function buildUiInto(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'build:ui', '--', '--outDir', dir, '--emptyOutDir'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm run build:ui exited with ${code}:\n${out}`))));
  });
}

/** Starts `icabench serve` on a free port and resolves with the URL it prints (rejects after 60 s or if it exits first); Pin writes into the workspace's suites/. */
function startServe(workspace: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--workspace', workspace, '--port', '0'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, [SUITES_DIR_ENV]: join(workspace, 'suites'), ...env } });
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
  /** the app's workspace: a fresh temporary folder, removed by close */
  workspace: string;
  /** the URL `icabench serve` printed (with its token) */
  url: string;
  /** the URL's origin, for hash routes: `${origin}/#/runs` */
  origin: string;
  /**
   * A new page and the errors it reports: uncaught page errors, and with `consoleErrors` also
   * console.error messages (failed requests among them).
   */
  newPage(options?: { consoleErrors?: boolean }): Promise<{ page: Page; errors: string[] }>;
  /** closes the browser, stops the server and removes the workspace */
  close(): Promise<void>;
}

/**
 * The bench app on a fresh workspace (a temporary folder named `prefix…`): `prepare` fills it (runs, stores)
 * and `serveEnv` adds to `icabench serve`'s environment (ICABENCH_UI_DIR: a UI build of its own)
 * before `icabench serve` starts on it, and headless Chromium opens beside it. A failure on the way
 * undoes what was started and removes the workspace.
 */
export async function startBenchApp(prefix: string, prepare: (workspace: string) => void | Promise<void> = () => undefined, serveEnv: Record<string, string> = {}): Promise<BenchApp> {
  const workspace = mkdtempSync(join(tmpdir(), prefix));
  const undo: (() => void | Promise<void>)[] = [() => rmSync(workspace, { recursive: true, force: true })];
  // undone in reverse order of starting; every step runs, the first failure is thrown after the last
  const close = async () => {
    const failures: unknown[] = [];
    for (const step of undo.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length) throw failures[0];
  };
  try {
    await prepare(workspace);
    const serve = await startServe(workspace, serveEnv);
    undo.push(() => void serve.child.kill('SIGTERM'));
    const browser = await launchBrowser();
    undo.push(() => browser.close());
    return {
      workspace,
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
      close,
    };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

/** A full-page screenshot to test-results/screens/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENS, { recursive: true });
  await page.screenshot({ path: join(SCREENS, `${name}.png`), fullPage: true });
}
