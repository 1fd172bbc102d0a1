/**
 * The tree of an earlier commit for the bench's side-by-side (issue #37): `git archive REF` unpacked into a temporary
 * directory, this checkout's node_modules linked in, and this checkout's scenario script (scripts/bench-scenario.ts,
 * which imports only what such trees have) copied over. A scenario child run there is the same campaign with that
 * commit's prompts and answer schemas, against the fake model host of this checkout.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface BaselineTree {
  ref: string;
  dir: string;
  remove(): void;
}

/** The prompts before issue #37 (the figures the issue's goals are measured against). */
export const ISSUE_37_BASELINE_REF = '40155a3';

export function baselineTree(ref: string): BaselineTree {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-baseline-'));
  const archive = spawnSync('git', ['archive', '--format=tar', ref], { maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${ref}: ${archive.stderr.toString().trim()}`);
  const unpack = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (unpack.status !== 0) throw new Error(`unpacking ${ref} into ${dir}: ${unpack.stderr.toString().trim()}`);
  symlinkSync(realpathSync(resolve('node_modules')), join(dir, 'node_modules'));
  copyFileSync(resolve('scripts/bench-scenario.ts'), join(dir, 'scripts/bench-scenario.ts'));
  return { ref, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
