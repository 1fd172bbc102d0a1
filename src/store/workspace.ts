import { existsSync, mkdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ResultStore } from './store.ts';

/**
 * The results store of a workspace: <workspace>/icabench.db. A workspace that is a file (or lies
 * under one) is refused by name here, before any command creates folders (a bare EEXIST otherwise).
 */
export function workspaceStorePath(workspace: string): string {
  const folder = resolve(workspace);
  for (let path = folder; ; path = dirname(path)) {
    if (existsSync(path)) {
      if (!statSync(path).isDirectory()) {
        throw new Error(`--workspace ${workspace}: ${path === folder ? 'this is a file' : `${path} is a file`}; a workspace is a folder (it holds icabench.db)`);
      }
      break;
    }
    if (dirname(path) === path) break;
  }
  return join(folder, 'icabench.db');
}

export interface WorkspaceStore {
  store: ResultStore;
  /** this call created the store file (it did not exist before) */
  created: boolean;
  /**
   * Closes the store; when this call created it and it holds no run, removes the file (and its
   * SQLite side files) and the folders this call created: a command that fails leaves nothing behind.
   */
  closeAndDiscardIfEmpty(): void;
}

/** Opens (creating when needed) the store of a workspace for a command that writes runs to it. */
export function openWorkspaceStore(workspace: string): WorkspaceStore {
  const path = workspaceStorePath(workspace);
  const created = !existsSync(path);
  // the first folder mkdirSync creates (undefined when the workspace existed)
  const firstCreatedDir = mkdirSync(dirname(path), { recursive: true });
  const store = ResultStore.open(path);
  return {
    store,
    created,
    closeAndDiscardIfEmpty() {
      const empty = created && store.listRuns().length === 0;
      store.close();
      if (!empty) return;
      for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
      if (!firstCreatedDir) return;
      for (let dir = dirname(path); dir.length >= firstCreatedDir.length; dir = dirname(dir)) {
        try {
          rmdirSync(dir);
        } catch {
          return; // not empty (someone else wrote there): keep it
        }
        if (dir === firstCreatedDir) return;
      }
    },
  };
}
