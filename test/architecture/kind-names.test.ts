import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { campaignKindNames } from '../../src/kinds/registry.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

/**
 * The team's rule (issue #33): no branching on kind names outside src/kinds/registry.ts and each kind's own folder
 * src/kinds/<kind>/. The server, the CLI, the store, the reports and the app ask the registry, the kind's view
 * (src/run/kind-view.ts) or what the run holds (src/domain/run-items.ts) instead. This test finds, in every other
 * source file, a comparison with a kind name's literal (`=== 'suite'`, `'live' !==`) or a kind named by a literal
 * (`kind: 'dialogue'`).
 */
const OUTSIDE_THE_RULE = [
  // each kind's folder and the registry name their kinds
  'src/kinds/',
  // a migration fills the stored kind of old rows with the default they were written with
  'src/store/migrations.ts',
];

/**
 * Names that equal a kind's name but are not one: in the app, `page` is the page a kind's view opens on (src/run/kind-view.ts,
 * `page`; the tool-agents view opens on its page "tool-agents"), `sub` the part of the URL under a run that names such a
 * page, and `section` the app's screen (the Live screen is "live"). Comparing them routes to a page, not on a run's kind.
 */
const PAGE_NAMES = /(^|\.)(page|sub|section)$/;

interface KindNameUse {
  where: string;
  text: string;
}

/** The uses of a kind name's literal in a comparison or as a `kind:` value, in one file's text. */
function kindNameUses(file: string, text: string, kinds: readonly string[]): KindNameUse[] {
  const names = kinds.map((k) => k.replace(/[-]/g, '\\-')).join('|');
  const compared = new RegExp(`([\\w.]+)\\s*[!=]==\\s*'(?:${names})'|'(?:${names})'\\s*[!=]==\\s*([\\w.]+)`, 'g');
  const named = new RegExp(`\\bkind\\s*:\\s*'(?:${names})'`);
  const uses: KindNameUse[] = [];
  text.split('\n').forEach((line, i) => {
    const comparisons = [...line.matchAll(compared)].filter((m) => !(file.startsWith('src/ui/') && PAGE_NAMES.test(m[1] ?? m[2])));
    if (comparisons.length > 0 || named.test(line)) uses.push({ where: `${file}:${i + 1}`, text: line.trim() });
  });
  return uses;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe('kind names', () => {
  it('finds a comparison with a kind name, and a kind named by a literal, but not an app page name', () => {
    const kinds = ['dialogue', 'tool-agents', 'live'];
    const text = ["if (run.kind === 'dialogue') x();", "const k = { kind: 'live' };", "if (page === 'tool-agents') y();", "if ('tool-agents' !== r.kind) z();"].join('\n');
    expect(kindNameUses('src/cli/x.ts', text, kinds).map((u) => u.where)).toEqual(['src/cli/x.ts:1', 'src/cli/x.ts:2', 'src/cli/x.ts:3', 'src/cli/x.ts:4']);
    expect(kindNameUses('src/ui/x.tsx', text, kinds).map((u) => u.where)).toEqual(['src/ui/x.tsx:1', 'src/ui/x.tsx:2', 'src/ui/x.tsx:4']);
  });

  it('no source file outside src/kinds/ branches on a kind name', () => {
    const kinds = campaignKindNames();
    const uses = sourceFiles(join(REPO_ROOT, 'src'))
      .map((path) => relative(REPO_ROOT, path).split('\\').join('/'))
      .filter((file) => !OUTSIDE_THE_RULE.some((outside) => file.startsWith(outside)))
      .flatMap((file) => kindNameUses(file, readFileSync(join(REPO_ROOT, file), 'utf8'), kinds));
    expect(uses.map((u) => `${u.where}: ${u.text}`)).toEqual([]);
  });
});
