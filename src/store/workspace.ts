import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** The results store of a workspace folder (created if missing): `<workspace>/icabench.db`. */
export function workspaceStorePath(workspace: string): string {
  mkdirSync(workspace, { recursive: true });
  return join(workspace, 'icabench.db');
}
