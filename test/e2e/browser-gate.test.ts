import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { browserGate, inCi } from './browser.ts';

const MISSING = '/nonexistent/icabench-chromium';
const FIX = 'Run: bash scripts/setup-system.sh';

describe('browserGate (whether the browser tests run)', () => {
  const present = () => true;
  const absent = () => false;

  it('runs them wherever Chromium is installed, CI or not', () => {
    expect(browserGate({}, MISSING, present)).toEqual({ run: true });
    expect(browserGate({ CI: 'true' }, MISSING, present)).toEqual({ run: true });
  });

  it('skips them, with the reason, outside CI', () => {
    for (const env of [{}, { CI: '' }, { CI: 'false' }, { CI: '0' }]) {
      expect(browserGate(env, MISSING, absent)).toEqual({ run: false, reason: `skipped: Chromium is missing (${MISSING}). ${FIX}` });
    }
  });

  it('fails in CI, saying how to install Chromium', () => {
    for (const env of [{ CI: 'true' }, { CI: '1' }, { CI: 'yes' }]) {
      expect(inCi(env)).toBe(true);
      expect(() => browserGate(env, MISSING, absent)).toThrow(`Chromium is missing (${MISSING}), so the browser tests cannot run. ${FIX}`);
    }
  });
});

/** Runs the bench app's browser tests in a child vitest with Chromium pointed at a missing file. */
function runBenchAppWithoutChromium(ci: string): { status: number | null; output: string } {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ICABENCH_CHROMIUM: MISSING, CI: ci };
  const child = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', 'vitest.e2e.config.ts', 'test/e2e/bench-app.test.ts'], {
    cwd: REPO_ROOT,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: child.status, output: `${child.stdout}${child.stderr}` };
}

describe('the bench app tests without Chromium', () => {
  it('are skipped with the reason shown when CI is not set', () => {
    const { status, output } = runBenchAppWithoutChromium('');
    expect(output).toContain(`skipped: Chromium is missing (${MISSING}). ${FIX}`);
    expect(output).toMatch(/Tests\s+\d+ skipped/);
    expect(status).toBe(0);
  });

  it('fail with the install command when CI is set', () => {
    const { status, output } = runBenchAppWithoutChromium('true');
    expect(output).toContain(`Chromium is missing (${MISSING}), so the browser tests cannot run. ${FIX}`);
    expect(output).toMatch(/Test Files\s+1 failed/);
    expect(status).toBe(1);
  });
});
