import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { openWorkspaceStore } from '../store/workspace.ts';
import { fleetWorkerSource } from '../fleet/coordinator.ts';
import { startBenchServer, type BenchServer } from './server.ts';
import { packagePath } from '../domain/package-files.ts';
import { suitesFolder } from '../suite/folder.ts';
import { newToken } from './auth.ts';
import { writeTokenFile } from './token-file.ts';

export const DEFAULT_CONFIGS_DIR = packagePath('bench-configs');
/** The built UI: src/ui/dist, or ICABENCH_UI_DIR (a build folder of its own, e.g. for a test of a fresh build). */
export const DEFAULT_UI_DIR = process.env.ICABENCH_UI_DIR ? resolve(process.env.ICABENCH_UI_DIR) : packagePath('src', 'ui', 'dist');
export const DEFAULT_PORT = 7860;

export interface BenchAppOptions {
  workspace: string;
  host?: string;
  port?: number;
  token?: string;
  configsDir?: string;
  uiDir?: string;
  /** the fleet Redis whose workers the rig status lists (docs/fleet.md) */
  fleet?: string;
  /** the campaign runner's progress lines (see BenchServerOptions.log) */
  log?: (line: string) => void;
  /** the suites folder (`--suites`; default src/suite/folder.ts, suitesFolder) */
  suitesDir?: string;
}

/** The bench app as `icabench serve` and the Electron shell run it: the workspace's store, the bench configs, the built UI. */
export async function startBenchApp(options: BenchAppOptions): Promise<BenchServer & { uiBuilt: boolean }> {
  // a --fleet URL is checked (loopback, or TLS with a password) before anything is opened
  const fleet = options.fleet ? fleetWorkerSource(options.fleet) : null;
  const workspace = resolve(options.workspace);
  // creates the workspace folder too (the app writes its materialized configs there)
  const opened = openWorkspaceStore(workspace);
  const store = opened.store;
  const uiDir = options.uiDir ?? DEFAULT_UI_DIR;
  const uiBuilt = existsSync(resolve(uiDir, 'index.html'));
  const token = options.token ?? newToken();
  // a tab opened without the printed address finds the way in through this file (the token help page names it)
  const tokenFile = writeTokenFile(workspace, token);
  try {
    const server = await startBenchServer({
      store,
      workspace,
      configsDir: options.configsDir ?? DEFAULT_CONFIGS_DIR,
      uiDir: uiBuilt ? uiDir : null,
      host: options.host,
      port: options.port ?? DEFAULT_PORT,
      token,
      tokenFile: tokenFile.path,
      log: options.log,
      suitesDir: suitesFolder(options.suitesDir, options.configsDir ?? DEFAULT_CONFIGS_DIR),
      ...(fleet ? { fleet: options.fleet, rig: { fleetWorkers: fleet.workers } } : {}),
    });
    return {
      ...server,
      uiBuilt,
      async close() {
        await server.close();
        fleet?.close();
        store.close();
        tokenFile.remove();
      },
    };
  } catch (error) {
    fleet?.close();
    tokenFile.remove();
    // a server that could not start (port taken, bad host) leaves no new store behind
    opened.closeAndDiscardIfEmpty();
    throw error;
  }
}
