import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_UI_DIR, startBenchApp } from '../../server/bench.ts';
import { ensureUiBuilt } from '../../server/ui-build.ts';
import { stopRequested } from '../signals.ts';
import { PACKAGE_ROOT } from '../../domain/package-files.ts';

/** Debian's chromium (scripts/setup-system.sh installs it); ICABENCH_CHROMIUM names another. */
const CHROMIUM = process.env.ICABENCH_CHROMIUM ?? '/usr/bin/chromium';

/** The Electron binary, or why there is none (its install script downloads it, which npm's allowScripts denies offline). */
function electronBinary(): { path: string } | { missing: string } {
  try {
    const path = createRequire(import.meta.url)('electron') as unknown;
    if (typeof path === 'string' && existsSync(path)) return { path };
    return { missing: `the electron package names ${String(path)}, which is not there` };
  } catch (error) {
    return { missing: (error as Error).message };
  }
}

/**
 * Chromium's flags for the bench as an app window: its own window without tabs or address bar, a fresh
 * profile, nothing that phones home; as root (a container) Chromium refuses to start without --no-sandbox.
 * ICABENCH_CHROMIUM_ARGS adds flags (space-separated), e.g. a remote-debugging port for a test.
 */
export function chromiumAppArgs(url: string, profileDir: string, isRoot: boolean, extra = process.env.ICABENCH_CHROMIUM_ARGS ?? ''): string[] {
  return [
    `--app=${url}`,
    `--user-data-dir=${profileDir}`,
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    ...(isRoot ? ['--no-sandbox'] : []),
    ...extra.split(/\s+/).filter(Boolean),
  ];
}

/** The way into the bench when no desktop window can open: the browser app, from this machine or through an SSH tunnel. */
export const SERVE_INSTEAD = 'run the bench in a browser instead: `npm run serve` (= icabench serve) prints the URL to open (from another machine: ssh -L 7860:127.0.0.1:7860 to this one, then open that URL there)';

/**
 * Why no desktop window can open here, or null when one can: on Linux and the BSDs a window needs an X11 or
 * Wayland display (DISPLAY / WAYLAND_DISPLAY); macOS and Windows always have one.
 */
export function noDisplayReason(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | null {
  if (platform === 'darwin' || platform === 'win32') return null;
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return null;
  return 'no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset: a terminal, SSH session or container without a desktop)';
}

export function registerAppCommands(program: Command): void {
  program
    .command('app')
    .description('open the bench app in a desktop window: the Electron shell, or (without the Electron binary) a Chromium app window; needs a display (else: icabench serve)')
    .option('--workspace <dir>', 'workspace holding the results store (icabench.db)', 'workspace')
    .action(async (options: { workspace: string }) => {
      // fail before anything starts: a server whose window can never open would print a URL that dies with it
      const noDisplay = noDisplayReason();
      if (noDisplay) throw new Error(`app: cannot open a desktop window: ${noDisplay}; ${SERVE_INSTEAD}`);
      const electron = electronBinary();
      if ('path' in electron) {
        await runElectronShell(electron.path);
        return;
      }
      // not Electron's own "delete node_modules and reinstall" advice: offline that cannot help, and the Chromium window below works
      console.error('The Electron binary is not installed (its download is off: package.json "allowScripts"; docs/bench-app.md, "Desktop shell", says how to add it).');
      if (!existsSync(CHROMIUM)) throw new Error(`app: no Chromium at ${CHROMIUM} either (bash scripts/setup-system.sh installs it; ICABENCH_CHROMIUM names another); ${SERVE_INSTEAD}`);
      console.error(`Opening the bench in a Chromium app window instead (${CHROMIUM}).`);
      await runChromiumWindow(options.workspace);
    });
}

/** The Electron shell: its main process bundled (electron/build.ts), then started; it starts the bench server itself. */
async function runElectronShell(electronPath: string): Promise<void> {
  const built = spawnSync(process.execPath, ['--import', 'tsx', join(PACKAGE_ROOT, 'electron/build.ts')], { cwd: PACKAGE_ROOT, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('electron/build.ts failed (above)');
  await ensureUiBuilt(DEFAULT_UI_DIR, (line) => console.error(line));
  const shell = spawn(electronPath, [join(PACKAGE_ROOT, 'electron/dist/main.mjs')], { cwd: PACKAGE_ROOT, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => shell.once('exit', resolve));
  if (code !== 0 && code !== null) throw new Error(`app: the Electron shell exited with code ${code} (above); ${SERVE_INSTEAD}`);
}

/** The bench server on a free loopback port and the UI in a Chromium app window; both end when the window closes or on Ctrl+C. */
async function runChromiumWindow(workspace: string): Promise<void> {
  await ensureUiBuilt(DEFAULT_UI_DIR, (line) => console.error(line));
  const app = await startBenchApp({ workspace, port: 0, log: (line) => console.error(line) });
  const profile = mkdtempSync(join(tmpdir(), 'icabench-app-'));
  try {
    const url = `${app.url}/#token=${encodeURIComponent(app.token)}`;
    const window = spawn(CHROMIUM, chromiumAppArgs(url, profile, process.getuid?.() === 0), { stdio: 'ignore' });
    let stopping = false;
    const closed = new Promise<number | null>((resolve) => {
      window.once('exit', (code) => resolve(code));
      window.once('error', () => resolve(-1));
    });
    console.log(`icabench bench app: ${url} (open while this window is open)`);
    const stop = stopRequested('Closing the bench app window').then(() => {
      stopping = true;
    });
    const code = await Promise.race([closed, stop.then(() => null)]);
    window.kill('SIGTERM');
    await closed;
    // a window that could not open (no usable display, a broken Chromium) ends at once with an error code
    if (!stopping && code !== 0 && code !== null) throw new Error(`app: Chromium (${CHROMIUM}) exited with code ${code}: the window could not open; ${SERVE_INSTEAD}`);
  } finally {
    await app.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
