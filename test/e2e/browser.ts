import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.ICABENCH_CHROMIUM ?? '/usr/bin/chromium';

/** CI is on when the CI variable is set to anything but '', 'false' or '0'. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value !== '' && value !== 'false' && value !== '0';
}

/**
 * Whether the browser tests can run here: they need Chromium at `chromium`. Without it they are
 * skipped, with the reason, on a developer's machine; in CI (`CI` set) they fail instead, since
 * a run that passes without opening a browser would hide that nothing was tested.
 */
export function browserGate(
  env: NodeJS.ProcessEnv = process.env,
  chromium: string = CHROMIUM,
  exists: (path: string) => boolean = existsSync,
): { run: true } | { run: false; reason: string } {
  if (exists(chromium)) return { run: true };
  if (inCi(env)) throw new Error(`Chromium is missing (${chromium}), so the browser tests cannot run. Run: bash scripts/setup-system.sh`);
  return { run: false, reason: `skipped: Chromium is missing (${chromium}). Run: bash scripts/setup-system.sh` };
}

/** Debian's chromium, headless, with a fresh profile and nothing that phones home. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'icabench-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
