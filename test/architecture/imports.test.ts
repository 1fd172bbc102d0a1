import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { PACKAGES, RULES, TABLE_HEADER, withGeneratedTable } from './import-rules.ts';

interface ImportEdge {
  file: string;
  line: number;
  target: string;
  typeOnly: boolean;
}

const SRC = join(REPO_ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts)$/.test(name) ? [path] : [];
  });
}

/** Every relative import of a file: static (one or more lines), re-exports, side-effect and dynamic imports. */
function importsOf(text: string): Array<{ spec: string; line: number; typeOnly: boolean }> {
  const found: Array<{ spec: string; line: number; typeOnly: boolean }> = [];
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const statement = /(?:^|\n)[ \t]*(import|export)[ \t]+(type[ \t]+)?[^;'"]*?\bfrom[ \t]*['"]([^'"]+)['"]/g;
  for (const m of text.matchAll(statement)) found.push({ spec: m[3], line: lineAt(m.index + (m[0].startsWith('\n') ? 1 : 0)), typeOnly: Boolean(m[2]) });
  for (const m of text.matchAll(/(?:^|\n)[ \t]*import[ \t]*['"]([^'"]+)['"]/g)) found.push({ spec: m[1], line: lineAt(m.index + 1), typeOnly: false });
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push({ spec: m[1], line: lineAt(m.index), typeOnly: false });
  return found.filter((f) => f.spec.startsWith('.'));
}

function edges(): ImportEdge[] {
  return sourceFiles(SRC).flatMap((path) =>
    importsOf(readFileSync(path, 'utf8')).map(({ spec, line, typeOnly }) => ({
      file: relative(SRC, path),
      line,
      target: normalize(join(dirname(relative(SRC, path)), spec)),
      typeOnly,
    })),
  );
}

/**
 * The role of an import target: its folder under src/ — under src/kinds/, each campaign kind's folder is a role
 * (`kinds/dialogue`) and the files directly in src/kinds/ are the role `kinds` — or the package it lies in.
 */
const roleOf = (path: string) => {
  const pkg = Object.entries(PACKAGES).find(([, dir]) => path.startsWith(`../${dir}/`));
  if (pkg) return pkg[0];
  const parts = path.split('/');
  return parts[0] === 'kinds' && parts.length > 2 ? `kinds/${parts[1]}` : parts[0];
};

/**
 * The import cycles between the nodes `nodeOf` puts files in (value, type and dynamic imports alike): each strongly
 * connected group of two or more nodes, found with Tarjan's algorithm, with one import per edge inside it so the
 * message says where to cut.
 */
function cycles(list: readonly ImportEdge[], nodeOf: (path: string) => string): string[] {
  const graph = new Map<string, Map<string, ImportEdge>>();
  for (const e of list) {
    const [from, to] = [nodeOf(e.file), nodeOf(e.target)];
    if (from === to) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    if (!graph.get(from)!.has(to)) graph.get(from)!.set(to, e);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[] = [];
  const visit = (role: string) => {
    index.set(role, index.size);
    low.set(role, index.get(role)!);
    stack.push(role);
    for (const next of graph.get(role)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(role, Math.min(low.get(role)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(role, Math.min(low.get(role)!, index.get(next)!));
    }
    if (low.get(role) !== index.get(role)) return;
    const group: string[] = [];
    for (let top = ''; top !== role; ) group.push((top = stack.pop()!));
    if (group.length < 2) return;
    const inside = group.flatMap((from) => [...(graph.get(from) ?? [])].filter(([to]) => group.includes(to)).map(([to, e]) => `${from} -> ${to} (src/${e.file}:${e.line})`));
    found.push(`${[...group].sort().join(', ')}: ${inside.sort().join('; ')}`);
  };
  for (const role of graph.keys()) if (!index.has(role)) visit(role);
  return found;
}

/** The import cycles between roles (a folder cycle makes the layers meaningless). */
const roleCycles = (list: readonly ImportEdge[]) => cycles(list, roleOf);
/** The import cycles between files (a file circle: two modules that cannot be understood, loaded or moved one without the other). */
const fileCycles = (list: readonly ImportEdge[]) => cycles(list, (path) => path);

/** Why an import is not allowed, or undefined when it is. */
function violation(edge: ImportEdge): string | undefined {
  const from = roleOf(edge.file);
  const to = roleOf(edge.target);
  if (from === to) return undefined;
  const rule = RULES[from];
  if (!rule) return `src/${from} has no import rule: add it to RULES (and docs/architecture.md)`;
  if (rule.may === '*') return undefined;
  const inRole = PACKAGES[to] ? edge.target.slice(`../${PACKAGES[to]}/`.length) : edge.target.slice(to.length + 1);
  const allowed = rule.may.some((a) => {
    const entry = typeof a === 'string' ? { role: a } : a;
    if (entry.role !== to) return false;
    if (entry.typesOnly && !edge.typeOnly) return false;
    return !entry.files || entry.files.includes(inRole);
  });
  return allowed ? undefined : `${from} may not import ${edge.typeOnly ? 'types from ' : ''}${to}${rule.may.some((a) => (typeof a === 'string' ? a : a.role) === to) ? ` (${inRole} is internal to ${to})` : ''}`;
}

describe('import rules between the roles under src/', () => {
  const all = edges();

  it('reads the imports of every source file (a parser that finds nothing would pass anything)', () => {
    expect(all.length).toBeGreaterThan(500);
    const sample = importsOf("import {\n  a,\n  b,\n} from '../x/y.ts';\nimport type { T } from './t.ts';\nexport { z } from '../z.ts';\nconst m = () => import('../m.ts');\nimport 'node:fs';\n");
    expect(sample).toEqual([
      { spec: '../x/y.ts', line: 1, typeOnly: false },
      { spec: './t.ts', line: 5, typeOnly: true },
      { spec: '../z.ts', line: 6, typeOnly: false },
      { spec: '../m.ts', line: 7, typeOnly: false },
    ]);
  });

  it('every role has a rule, and every rule names roles that exist', () => {
    const folders = (dir: string) => readdirSync(join(SRC, dir)).filter((name) => statSync(join(SRC, dir, name)).isDirectory());
    const roles = folders('.').flatMap((name) => (name === 'kinds' ? ['kinds', ...folders('kinds').map((kind) => `kinds/${kind}`)] : [name]));
    expect(roles.filter((r) => !RULES[r]), 'folders under src/ without a rule').toEqual([]);
    const named = Object.values(RULES).flatMap((r) => (r.may === '*' ? [] : r.may.map((a) => (typeof a === 'string' ? a : a.role))));
    expect([...new Set(named)].filter((r) => !roles.includes(r) && !PACKAGES[r]), 'rules naming a folder that does not exist').toEqual([]);
  });

  it('no role imports another role it may not, or another role’s internals', () => {
    // no exceptions: an import the rules do not allow is a failure, whoever wrote it
    const problems = all.flatMap((e) => {
      const why = violation(e);
      return why ? [`src/${e.file}:${e.line} imports src/${e.target}: ${why}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it('the roles form no import cycle (a folder cycle makes the layers meaningless)', () => {
    expect(roleCycles(all)).toEqual([]);
    // and the check finds one when there is one
    const edge = (file: string, target: string): ImportEdge => ({ file, line: 1, target, typeOnly: true });
    expect(roleCycles([edge('run/a.ts', 'kinds/dialogue/b.ts'), edge('kinds/dialogue/b.ts', 'judge/c.ts'), edge('judge/c.ts', 'run/d.ts'), edge('domain/x.ts', 'domain/y.ts')])).toEqual([
      'judge, kinds/dialogue, run: judge -> run (src/judge/c.ts:1); kinds/dialogue -> judge (src/kinds/dialogue/b.ts:1); run -> kinds/dialogue (src/run/a.ts:1)',
    ]);
  });

  it('the files form no import cycle either (type and dynamic imports count)', () => {
    expect(fileCycles(all)).toEqual([]);
    // and the check finds one inside a role, which the role check cannot see
    const edge = (file: string, target: string, line: number): ImportEdge => ({ file, line, target, typeOnly: true });
    expect(fileCycles([edge('kinds/x/kind.ts', 'kinds/x/campaign.ts', 3), edge('kinds/x/campaign.ts', 'kinds/x/kind.ts', 9), edge('kinds/x/campaign.ts', 'run/kind.ts', 1)])).toEqual([
      'kinds/x/campaign.ts, kinds/x/kind.ts: kinds/x/campaign.ts -> kinds/x/kind.ts (src/kinds/x/campaign.ts:9); kinds/x/kind.ts -> kinds/x/campaign.ts (src/kinds/x/kind.ts:3)',
    ]);
    expect(roleCycles([edge('kinds/x/kind.ts', 'kinds/x/campaign.ts', 3), edge('kinds/x/campaign.ts', 'kinds/x/kind.ts', 9)])).toEqual([]);
  });

  it('docs/architecture.md has one row per role, the same roles as RULES', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
    const lines = doc.slice(doc.indexOf(TABLE_HEADER)).split('\n');
    const end = lines.findIndex((line) => !line.startsWith('|'));
    const documented = lines.slice(2, end).map((line) => line.split('|')[1].trim());
    expect([...documented].sort()).toEqual([...Object.keys(RULES), ...Object.keys(PACKAGES)].sort());
  });

  it("docs/architecture.md's \"may import\" column is the one RULES generate (npx tsx scripts/architecture-table.ts rewrites it)", () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
    expect(doc).toBe(withGeneratedTable(doc, REPO_ROOT));
  });

  it('a package imports nothing from src/ and no other package than its declared dependencies', () => {
    for (const [name, dir] of Object.entries(PACKAGES)) {
      const manifest = JSON.parse(readFileSync(join(REPO_ROOT, dir, '../package.json'), 'utf8')) as { dependencies?: Record<string, string> };
      const declared = Object.keys(manifest.dependencies ?? {});
      const root = join(REPO_ROOT, dir);
      const problems = sourceFiles(root).flatMap((path) =>
        [...readFileSync(path, 'utf8').matchAll(/(?:^|\n)[ \t]*(?:import|export)[^;'"]*?\bfrom[ \t]*['"]([^'"]+)['"]/g)].flatMap(([, spec]) => {
          if (spec.startsWith('.')) return normalize(join(dirname(path), spec)).startsWith(root) ? [] : [`${relative(REPO_ROOT, path)} imports ${spec} outside the package`];
          const bare = spec.startsWith('node:') ? 'node:' : spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
          return bare === 'node:' || declared.includes(bare) ? [] : [`${relative(REPO_ROOT, path)} imports ${spec}, not a dependency of ${name}`];
        }),
      );
      expect(problems).toEqual([]);
      expect(sourceFiles(root).length, `${name} has sources`).toBeGreaterThan(3);
    }
  });

  it('the rules catch what they are meant to catch', () => {
    const edge = (file: string, target: string, typeOnly = false): ImportEdge => ({ file, line: 1, target, typeOnly });
    expect(violation(edge('headunit/reference/reference-headunit.ts', 'simulator/phrases.ts'))).toBe('headunit may not import simulator');
    expect(violation(edge('judge/llm.ts', 'simulator/llm.ts'))).toBe('judge may not import simulator');
    expect(violation(edge('server/x.ts', 'cli/commands/run.ts'))).toBe('server may not import cli');
    expect(violation(edge('domain/x.ts', 'llm/index.ts'))).toBe('domain may not import llm');
    expect(violation(edge('kinds/manual-qa/x.ts', 'headunit/reference/reference-headunit.ts'))).toBe('kinds/manual-qa may not import headunit (reference/reference-headunit.ts is internal to headunit)');
    expect(violation(edge('manual/x.ts', 'kinds/manual-qa/item.ts'))).toBe('manual may not import kinds/manual-qa');
    expect(violation(edge('ui/x.ts', 'server/server.ts'))).toBe('ui may not import server (server.ts is internal to server)');
    expect(violation(edge('ui/x.ts', 'server/server.ts', true))).toBeUndefined();
    expect(violation(edge('cli/commands/x.ts', 'server/server.ts'))).toBeUndefined();
    expect(violation(edge('protocol/bridge.ts', '../packages/bridge-sdk/src/protocol/bridge.ts'))).toBeUndefined();
    expect(violation(edge('judge/x.ts', '../packages/bridge-sdk/src/protocol/bridge.ts'))).toBe('judge may not import bridge-sdk');
  });

});

/** Worker pools written again instead of using src/domain/pool.ts (owned by other branches): convert to runPool, then delete. */
const KNOWN_POOL_COPIES: readonly { file: string; why: string }[] = [];

describe('one place per concept', () => {
  it('the worker pool exists once, in src/domain/pool.ts', () => {
    // a pool's signature: N workers started at once, draining a shared index
    const pool = /Promise\.all\(\s*Array\.from\(\s*\{\s*length:\s*Math\.min\(/;
    const copies = sourceFiles(SRC)
      .filter((path) => pool.test(readFileSync(path, 'utf8')))
      .map((path) => relative(SRC, path));
    expect(copies.filter((f) => f !== 'domain/pool.ts' && !KNOWN_POOL_COPIES.some((k) => k.file === f)), 'new worker pools: use runPool').toEqual([]);
    expect(KNOWN_POOL_COPIES.filter((k) => !copies.includes(k.file)).map((k) => `${k.file} no longer has its own pool: delete the entry`)).toEqual([]);
    expect(copies).toContain('domain/pool.ts');
  });

  it('the seeded RNG (mulberry32) exists once, in src/domain/rng.ts', () => {
    const roots = ['src', 'test', 'scripts'].map((d) => join(REPO_ROOT, d));
    // mulberry32's increment, spelled in two parts so this file does not count as a copy
    const increment = new RegExp(['0x6d2b', '79f5'].join(''), 'i');
    const copies = roots.flatMap(sourceFiles).filter((path) => increment.test(readFileSync(path, 'utf8')));
    expect(copies.map((p) => relative(REPO_ROOT, p))).toEqual(['src/domain/rng.ts']);
  });
});
