import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file in the workspace where a running bench app keeps its token, for a tab opened without the printed address. */
export const APP_TOKEN_FILE = 'app-token';

/**
 * Writes the token of a starting bench app to `<workspace>/app-token`, readable by its user only (the token guards
 * what changes state, and other local users may read the workspace). `remove` deletes it again unless another
 * app started on the same workspace since and wrote its own.
 */
export function writeTokenFile(workspace: string, token: string): { path: string; remove(): void } {
  const path = join(workspace, APP_TOKEN_FILE);
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // the mode above applies only to a new file: one left by an earlier app keeps its own
  return {
    path,
    remove() {
      const current = (() => {
        try {
          return readFileSync(path, 'utf8').trim();
        } catch {
          return null;
        }
      })();
      if (current === token) rmSync(path, { force: true });
    },
  };
}
