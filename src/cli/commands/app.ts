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

export function registerAppCommands(program: Command): void {
  program
    .command('app')
    .description('open the bench app in a desktop window: the Electron shell, or (without the Electron binary) a Chromium app window')
    .option('--workspace <dir>', 'workspace holding the results store (icabench.db)', 'workspace')
    .action(async (options: { workspace: string }) => {
      const electron = electronBinary();
      if ('path' in electron) {
        // the shell bundles its main process (electron/build.ts) and starts the bench server itself
        const built = spawnSync(process.execPath, ['--import', 'tsx', join(PACKAGE_ROOT, 'electron/build.ts')], { cwd: PACKAGE_ROOT, stdio: 'inherit' });
        if (built.status !== 0) throw new Error('electron/build.ts failed (above)');
        await ensureUiBuilt(DEFAULT_UI_DIR, (line) => console.error(line));
        const shell = spawn(electron.path, [join(PACKAGE_ROOT, 'electron/dist/main.mjs')], { cwd: PACKAGE_ROOT, stdio: 'inherit' });
        await new Promise((resolve) => shell.once('exit', resolve));
        return;
      }
      console.error(`The Electron shell cannot start: ${electron.missing}.`);
      console.error('Its binary is downloaded by its install script, which npm runs only when allowed (package.json "allowScripts": electron is false, and the download needs the network). To get it: with network access, `npm rebuild electron --ignore-scripts=false`, or point ELECTRON_OVERRIDE_DIST_PATH at an unpacked Electron release.');
      if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} either (bash scripts/setup-system.sh installs it; ICABENCH_CHROMIUM names another): run icabench serve and open its URL in a browser`);
      console.error(`Opening the bench in a Chromium app window instead (${CHROMIUM}).`);
      await ensureUiBuilt(DEFAULT_UI_DIR, (line) => console.error(line));
      const app = await startBenchApp({ workspace: options.workspace, port: 0, log: (line) => console.error(line) });
      const profile = mkdtempSync(join(tmpdir(), 'icabench-app-'));
      try {
        const url = `${app.url}/#token=${encodeURIComponent(app.token)}`;
        console.log(`icabench bench app: ${url}`);
        const window = spawn(CHROMIUM, chromiumAppArgs(url, profile, process.getuid?.() === 0), { stdio: 'ignore' });
        // the app ends when its window closes, or on Ctrl+C
        const closed = new Promise<void>((resolve) => window.once('exit', () => resolve()));
        await Promise.race([closed, stopRequested('Closing the bench app window')]);
        window.kill('SIGTERM');
        await closed;
      } finally {
        await app.close();
        rmSync(profile, { recursive: true, force: true });
      }
    });
}
