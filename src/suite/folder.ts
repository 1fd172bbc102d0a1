import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packagePath } from '../domain/package-files.ts';
import { pinnedSuiteYaml } from './pin.ts';
import type { SuiteConversation } from './format.ts';

/**
 * The one suites folder, where `icabench pin` and the bench app's Pin write and where the app's "Run pinned suite"
 * reads: bench-configs/suites/ by default (beside the configs that name suites), `--suites DIR` on `icabench pin` and
 * `icabench serve`, or the environment variable below for both.
 */
export const SUITES_DIR_ENV = 'ICABENCH_SUITES_DIR';

export function suitesFolder(explicit?: string | null, configsDir = packagePath('bench-configs')): string {
  return resolve(explicit || process.env[SUITES_DIR_ENV] || join(configsDir, 'suites'));
}

/** The file name (no folder, no extension) a pinned conversation gets: pinned-<run>-<conversation>. */
export function pinnedSuiteName(runId: string, conversationKey: string): string {
  return `pinned-${runId}-${conversationKey.replace(/[^\w.-]+/g, '_')}`;
}

/**
 * Writes a pinned conversation as a new suite file in `dir`, never over an existing one (a suite may hold a person's
 * edits): pinning the same conversation again gets the next free name (`…-2.yaml`).
 */
export function writePinnedSuite(dir: string, runId: string, conversation: SuiteConversation): { path: string; file: string; yaml: string } {
  mkdirSync(dir, { recursive: true });
  const base = pinnedSuiteName(runId, conversation.id);
  let file = `${base}.yaml`;
  for (let n = 2; existsSync(join(dir, file)); n++) file = `${base}-${n}.yaml`;
  const yaml = pinnedSuiteYaml(conversation, base);
  writeFileSync(join(dir, file), yaml, { flag: 'wx' });
  return { path: join(dir, file), file, yaml };
}
