import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Manual files named by paths; a folder stands for the manual files in it (sorted). */
export function manualFiles(paths: readonly string[]): string[] {
  return paths.flatMap((path) => {
    const absolute = resolve(path);
    if (existsSync(absolute) && statSync(absolute).isDirectory()) {
      return readdirSync(absolute)
        .filter((f) => /\.(xml|md|markdown|html?|pdf)$/i.test(f))
        .sort()
        .map((f) => join(absolute, f));
    }
    return [absolute];
  });
}
