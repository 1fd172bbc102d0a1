import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseOrThrow } from './validation.ts';

/**
 * The folder of icabench's package.json, where the files the bench ships beside its code live (bench-configs/,
 * prompts/, models/, data/, hardware/, the built UI). Found by walking up from this module rather than by a
 * fixed `../..`, because the module runs from two layouts: src/domain/ through tsx in a checkout, and
 * dist/src/domain/ from the compiled JavaScript (`npm run build`) of a package install.
 */
function findPackageRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let folder = here; ; folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json'))) return folder;
    if (dirname(folder) === folder) throw new Error(`icabench: no package.json in ${here} or any folder above it`);
  }
}

export const PACKAGE_ROOT = findPackageRoot();

/** A path inside the package: `packagePath('bench-configs', 'quickstart.yaml')`. */
export const packagePath = (...parts: string[]): string => join(PACKAGE_ROOT, ...parts);

let packageVersion: string | null = null;
/** icabench's version, from its package.json (all `icabench --version` loads besides commander). */
export function icabenchVersion(): string {
  packageVersion ??= parseOrThrow(z.object({ version: z.string() }), JSON.parse(readFileSync(packagePath('package.json'), 'utf8')), 'package.json').version;
  return packageVersion;
}
