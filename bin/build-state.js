// Whether dist/ holds a build of the current sources. Plain JavaScript: it decides, before any loader is
// registered, whether the CLI can run without tsx.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Written last by scripts/build.ts: its time is the build's. */
export const BUILD_STAMP = 'BUILD';

/** The folders the build compiles (tsconfig.build.json's `include`) and copies from; paths from the package root. */
export const BUILD_SOURCES = ['src', join('packages', 'bridge-sdk', 'src')];

/** The built UI and its sources are vite's (`npm run build:ui`), not part of the CLI's build. */
const NOT_BUILT = join('src', 'ui') + sep;

/** Whether a path (from the package root) under BUILD_SOURCES goes into dist/. */
export const isBuildSource = (path) => !path.startsWith(NOT_BUILT);

/** The build configuration: a change of it is a change of the build too. */
const BUILD_CONFIGS = ['tsconfig.json', 'tsconfig.build.json'];

/**
 * The compiled CLI's entry when dist/ holds a build at least as new as every source file and build config that
 * exists here (a package install ships dist/ without the sources, so its build is current), else null.
 */
export function freshBuildEntry() {
  const stamp = join(ROOT, 'dist', BUILD_STAMP);
  if (!existsSync(stamp)) return null;
  const builtAt = statSync(stamp).mtimeMs;
  for (const config of BUILD_CONFIGS) {
    const path = join(ROOT, config);
    if (existsSync(path) && statSync(path).mtimeMs > builtAt) return null;
  }
  for (const folder of BUILD_SOURCES) {
    if (!existsSync(join(ROOT, folder))) continue;
    for (const entry of readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      if (isBuildSource(relative(ROOT, path)) && statSync(path).mtimeMs > builtAt) return null;
    }
  }
  return join(ROOT, 'dist', 'src', 'cli', 'main.js');
}
