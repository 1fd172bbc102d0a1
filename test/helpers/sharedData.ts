import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** The real test data (KVRET, BMW manual, opendbc, FED, CAR-bench): ../shared/data beside the repository, as in CI, or $ICABENCH_SHARED_DATA. */
export const SHARED_DATA_DIR = process.env.ICABENCH_SHARED_DATA ?? resolve(import.meta.dirname, '../../../shared/data');

/** A file of the shared test data; a clear error when the folder is not there. */
export function sharedDataPath(relative: string): string {
  const path = resolve(SHARED_DATA_DIR, relative);
  if (!existsSync(path)) {
    throw new Error(`test data missing: ${path} (the shared/data folder must sit beside the repository, or set ICABENCH_SHARED_DATA to it)`);
  }
  return path;
}
