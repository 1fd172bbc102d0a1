import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noDisplayReason } from '../../src/cli/commands/app.ts';
import { CLI } from '../helpers/cli.ts';

/**
 * #35 item 3: `npm run app` where no window can open fails loudly: a non-zero exit, the reason, and the way in that
 * works (`npm run serve`); never a URL that is already dead, nor Electron's own "reinstall" advice (wrong offline).
 */

/** The environment of a machine without a desktop and without the Electron binary (its override names an empty folder). */
function headless(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ELECTRON_OVERRIDE_DIST_PATH: mkdtempSync(join(tmpdir(), 'no-electron-')), ...extra };
  if (!('DISPLAY' in extra)) delete env.DISPLAY;
  if (!('WAYLAND_DISPLAY' in extra)) delete env.WAYLAND_DISPLAY;
  return env;
}

/** `icabench app` with exactly `env` (runCli would add this process's DISPLAY back). */
function app(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, 'app', '--workspace', mkdtempSync(join(tmpdir(), 'app-ws-'))], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

describe('icabench app where no window can open', () => {
  it('knows when there is no display: Linux without DISPLAY and WAYLAND_DISPLAY; macOS and Windows always have one', () => {
    expect(noDisplayReason({}, 'linux')).toMatch(/DISPLAY and WAYLAND_DISPLAY are unset/);
    expect(noDisplayReason({ DISPLAY: ':0' }, 'linux')).toBeNull();
    expect(noDisplayReason({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux')).toBeNull();
    expect(noDisplayReason({}, 'darwin')).toBeNull();
    expect(noDisplayReason({}, 'win32')).toBeNull();
  });

  it('without a display: exit 2, the reason and npm run serve; no URL, no server, no Electron advice', async () => {
    const result = await app(headless());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^icabench: app: cannot open a desktop window: no display to open a window on \(DISPLAY and WAYLAND_DISPLAY are unset/);
    expect(result.stderr).toContain('`npm run serve` (= icabench serve) prints the URL to open');
    expect(result.stdout).not.toMatch(/https?:\/\//);
    expect(result.stderr).not.toMatch(/reinstall|installing again|delete node_modules/i);
  }, 60_000);

  it('with a display but neither Electron nor Chromium: exit 2 naming both and npm run serve', async () => {
    const result = await app(headless({ DISPLAY: ':987', ICABENCH_CHROMIUM: '/nonexistent/chromium' }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('The Electron binary is not installed');
    expect(result.stderr).toContain('no Chromium at /nonexistent/chromium either');
    expect(result.stderr).toContain('npm run serve');
    expect(result.stderr).not.toMatch(/installing again|delete node_modules/i);
  }, 60_000);

  it('a window that cannot open (the browser exits at once with an error) ends the app with exit 2, not 0', async () => {
    const ui = mkdtempSync(join(tmpdir(), 'app-ui-'));
    writeFileSync(join(ui, 'index.html'), '<!doctype html><title>ui</title>');
    const result = await app(headless({ DISPLAY: ':987', ICABENCH_CHROMIUM: '/bin/false', ICABENCH_UI_DIR: ui }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('app: Chromium (/bin/false) exited with code 1: the window could not open');
    expect(result.stderr).toContain('npm run serve');
  }, 60_000);
});
