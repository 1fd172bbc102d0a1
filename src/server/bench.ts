import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workspaceStorePath } from '../store/workspace.ts';
import { ResultStore } from '../store/store.ts';
import { startBenchServer, type BenchServer } from './server.ts';

export const DEFAULT_CONFIGS_DIR = fileURLToPath(new URL('../../bench-configs', import.meta.url));
export const DEFAULT_UI_DIR = fileURLToPath(new URL('../ui/dist', import.meta.url));
export const DEFAULT_PORT = 7860;

export interface BenchAppOptions {
  workspace: string;
  host?: string;
  port?: number;
  token?: string;
  configsDir?: string;
  uiDir?: string;
  /** the campaign runner's progress lines (see BenchServerOptions.log) */
  log?: (line: string) => void;
}

/** The bench app as `icabench serve` and the Electron shell run it: the workspace's store, the bench configs, the built UI. */
export async function startBenchApp(options: BenchAppOptions): Promise<BenchServer & { uiBuilt: boolean }> {
  const workspace = resolve(options.workspace);
  mkdirSync(workspace, { recursive: true });
  const store = ResultStore.open(workspaceStorePath(workspace));
  const uiDir = options.uiDir ?? DEFAULT_UI_DIR;
  const uiBuilt = existsSync(resolve(uiDir, 'index.html'));
  try {
    const server = await startBenchServer({
      store,
      workspace,
      configsDir: options.configsDir ?? DEFAULT_CONFIGS_DIR,
      uiDir: uiBuilt ? uiDir : null,
      host: options.host,
      port: options.port ?? DEFAULT_PORT,
      token: options.token,
      log: options.log,
    });
    return {
      ...server,
      uiBuilt,
      async close() {
        await server.close();
        store.close();
      },
    };
  } catch (error) {
    store.close();
    throw error;
  }
}
