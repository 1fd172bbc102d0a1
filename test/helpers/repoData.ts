import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** The repository root: tests read vendored data from here only (data/, hardware/), never from beside the clone. */
export const REPO_ROOT = resolve(import.meta.dirname, '../..');

/** A file under the repository's data/ folder (FED ratings, CAR-bench, the BMW manual chapters; see data/README.md). */
export function dataPath(relative: string): string {
  const path = resolve(REPO_ROOT, 'data', relative);
  if (!existsSync(path)) throw new Error(`vendored data missing: ${path} (see data/README.md for what data/ holds)`);
  return path;
}
