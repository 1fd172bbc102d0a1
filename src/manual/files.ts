import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ManualFormatError } from './ingest/errors.ts';
import { MANUAL_EXTENSIONS } from './ingest/read.ts';

/**
 * Manual files named by paths; a folder stands for the manual files in it (sorted). A path that does
 * not exist, a folder without a manual file and an empty list are errors naming what was given:
 * a command never runs on nothing.
 */
export function manualFiles(paths: readonly string[]): string[] {
  if (paths.length === 0) throw new ManualFormatError('(no files)', 'nothing to read: give at least one manual file or folder');
  return paths.flatMap((path) => {
    const absolute = resolve(path);
    let directory: boolean;
    try {
      directory = statSync(absolute).isDirectory();
    } catch {
      throw new ManualFormatError(path, 'no such manual file or folder');
    }
    if (!directory) return [absolute];
    const found = readdirSync(absolute)
      .filter((f) => Object.hasOwn(MANUAL_EXTENSIONS, f.slice(f.lastIndexOf('.')).toLowerCase()))
      .sort()
      .map((f) => join(absolute, f));
    if (found.length === 0) throw new ManualFormatError(path, `nothing to read: the folder holds no manual file (${Object.keys(MANUAL_EXTENSIONS).join(', ')})`);
    return found;
  });
}
