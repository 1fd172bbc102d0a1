import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { packagePath } from '../domain/package-files.ts';

/** The UI build config (vite.ui.config.ts at the repository root). */
const UI_BUILD_CONFIG = packagePath('vite.ui.config.ts');

/**
 * Builds the bench UI into `uiDir` when it is not built yet, so the first `icabench serve` (or
 * `icabench app`) after an install opens the app, never a page saying the UI is missing. The build
 * runs once (later starts find index.html); `npm run build:ui` rebuilds after changing the UI.
 * Returns whether the UI is there; a build that cannot run (vite not installed) says why in `log`.
 */
export async function ensureUiBuilt(uiDir: string, log: (line: string) => void): Promise<boolean> {
  if (existsSync(resolve(uiDir, 'index.html'))) return true;
  log(`The bench UI is not built yet: building it once into ${uiDir} (npm run build:ui does the same)…`);
  let vite: typeof import('vite');
  try {
    vite = await import('vite');
  } catch {
    log('Cannot build the UI: vite is not installed (npm ci installs it with the dev dependencies). The API works meanwhile.');
    return false;
  }
  await vite.build({ configFile: UI_BUILD_CONFIG, logLevel: 'warn', build: { outDir: resolve(uiDir), emptyOutDir: true } });
  return existsSync(resolve(uiDir, 'index.html'));
}
