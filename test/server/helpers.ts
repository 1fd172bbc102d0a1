import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResultStore } from '../../src/store/store.ts';
import { startBenchServer, type BenchServer, type BenchServerOptions } from '../../src/server/server.ts';

export const CONFIGS_DIR = fileURLToPath(new URL('../../bench-configs', import.meta.url));

export interface Harness {
  server: BenchServer;
  store: ResultStore;
  workspace: string;
  api(path: string, init?: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string>; rawBody?: string }): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

/** A bench server over a fresh workspace; `api` sends the token unless told otherwise. */
export async function startHarness(overrides: Partial<BenchServerOptions> = {}): Promise<Harness> {
  const workspace = mkdtempSync(join(tmpdir(), 'icabench-server-'));
  const store = ResultStore.open(join(workspace, 'results.db'));
  // Pin writes into the workspace's own suites folder, never into the repository's bench-configs/suites/
  const server = await startBenchServer({ store, workspace, configsDir: CONFIGS_DIR, uiDir: null, suitesDir: join(workspace, 'suites'), ...overrides });
  return {
    server,
    store,
    workspace,
    async api(path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      const token = init.token === undefined ? server.token : init.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined = init.rawBody;
      if (init.body !== undefined) {
        body = JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${server.url}${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
      const text = await res.text();
      let json: unknown = text;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON (UI notice); keep the text
      }
      return { status: res.status, json };
    },
    async close() {
      await server.close();
      store.close();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}
