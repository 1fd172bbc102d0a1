import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/repoData.ts';

/**
 * The import rules of src/, as data (docs/architecture.md, "Layers and import rules", shows the same picture).
 * A role is a folder directly under src/. Each role lists the roles it may import values from; `types` lists roles
 * it may import types from only (`import type`), and `files` narrows a role to the modules that are its public
 * face. Anything else is another role's internals: the test fails naming the file, the line and the rule.
 */
type Allowed = string | { role: string; files?: readonly string[]; typesOnly?: boolean; why?: string };
interface RoleRule {
  /** what the role is, one line */
  is: string;
  /** '*' for the entry point (cli); otherwise the roles (and modules) it may import */
  may: '*' | readonly Allowed[];
}

/**
 * Packages of this repository that src/ may import, as roles named by their folder under packages/ (their own
 * package.json; they import nothing from src/, see the test below). The bridge SDK holds the wire format.
 */
const PACKAGES: Record<string, string> = { 'bridge-sdk': 'packages/bridge-sdk/src' };

const RULES: Record<string, RoleRule> = {
  domain: { is: 'shared vocabulary, schemas and pure helpers (RNG, worker pool); imports nothing but the wire vocabulary of the bridge SDK', may: ['bridge-sdk'] },
  protocol: { is: 'the wire protocols (bridge, audio, tools, vehicle), re-exported from the bridge SDK', may: ['domain', 'bridge-sdk'] },
  system: { is: 'the system programs the bench runs', may: [] },
  config: { is: 'the one YAML loader (line numbers, strict schemas, bounded inputs)', may: ['domain', 'protocol'] },
  world: { is: 'the deterministic reference world (places, roads) and the rule-based reading of its vocabulary (nlu.ts)', may: ['domain', { role: 'protocol', typesOnly: true }] },
  llm: { is: 'model clients, prompts, structured output, transcript rendering', may: ['domain', 'protocol', 'config'] },
  embedding: { is: 'text embedders', may: ['domain'] },
  toolenv: { is: 'the tool-agents library: CAR-bench tasks, the tool environment (tools, synthetic navigation db)', may: ['domain', 'protocol', 'config'] },
  vehicle: { is: 'DBC codec, scenarios, frames, CAN transports and readers', may: ['domain', 'protocol', 'config', 'system', 'world'] },
  judge: {
    is: 'the oracle and LLM judges, scoring, the verdict precedence',
    may: ['domain', 'protocol', 'world', 'llm', { role: 'embedding', why: 'a reply is compared with its reference reply by meaning (src/judge/reference.ts)' }],
  },
  simulator: {
    is: 'the template, LLM and scripted user simulators and the driver wording',
    may: ['domain', 'protocol', 'world', 'llm'],
  },
  headunit: {
    is: 'the head-unit interface and the reference head unit',
    may: ['domain', 'protocol', 'world', 'vehicle', { role: 'bridge-sdk', typesOnly: true, why: "the SDK's head-unit interface" }, { role: 'manual', why: "the reference unit's manual skill answers from the owner's-manual library" }],
  },
  bridge: {
    is: 'the bridge server, and the SDK client that carries the head-unit protocol',
    may: ['domain', 'protocol', 'bridge-sdk', { role: 'headunit', files: ['types.ts'], why: 'the head-unit interface it carries' }, { role: 'store', typesOnly: true }],
  },
  voice: {
    is: 'speech synthesis and recognition, audio links, the recogniser vocabulary',
    may: [
      'domain',
      'protocol',
      'system',
      'world',
      { role: 'simulator', files: ['phrases.ts', 'types.ts'], why: 'the driver vocabulary is computed from the simulator wording' },
      { role: 'headunit', typesOnly: true },
      { role: 'bridge', typesOnly: true },
    ],
  },
  analysis: {
    is: 'statistics and run summaries over stored results',
    may: ['domain', 'protocol', { role: 'judge', files: ['precedence.ts'] }, { role: 'bridge', files: ['facts.ts'] }, { role: 'store', typesOnly: true }, { role: 'embedding', typesOnly: true }],
  },
  store: { is: 'the SQLite results store', may: ['domain', 'protocol', { role: 'analysis', files: ['verdict.ts'] }] },
  report: {
    is: 'summary.json, report.html, junit.xml',
    may: [
      'domain',
      'protocol',
      'analysis',
      'embedding',
      { role: 'judge', files: ['precedence.ts', 'agreement.ts'] },
      { role: 'voice', files: ['metrics.ts', 'acoustics.ts'] },
      { role: 'run', files: ['run-facts.ts'], why: 'summary.json is built from the run facts and their schemas' },
      { role: 'llm', files: ['manifest.ts'], why: "failure diversity embeds with the methods' model named in models/default.yaml" },
      { role: 'manual', typesOnly: true },
      { role: 'store', typesOnly: true },
    ],
  },
  run: {
    is: 'the run floor every campaign kind shares: the rig (head unit, voice, vehicle feed, model tiers), the run loop, --resume, run facts, events',
    may: [
      'domain',
      'protocol',
      'config',
      'world',
      'llm',
      'analysis',
      'judge',
      'simulator',
      'headunit',
      'vehicle',
      'voice',
      'bridge',
      'store',
    ],
  },
  kinds: {
    is: "the campaign kinds: what a config's `kind:` selects",
    may: ['domain', 'config', 'run', 'kinds/dialogue', 'kinds/manual-qa', 'kinds/tool-agents', 'kinds/suite'],
  },
  'kinds/dialogue': {
    is: 'the dialogue kind: its config, plan (sampling, seed pool), the conversation loop, the world file',
    may: ['domain', 'protocol', 'config', 'world', 'llm', 'analysis', 'judge', 'simulator', 'headunit', 'vehicle', 'voice', 'bridge', 'store', 'report', 'run'],
  },
  'kinds/manual-qa': {
    is: 'the manual-QA kind: its config, the question runner, the run and its stored results',
    may: [
      'domain',
      'protocol',
      'config',
      'llm',
      'embedding',
      'analysis',
      'manual',
      'report',
      'run',
      { role: 'headunit', files: ['types.ts'] },
      { role: 'headunit', files: ['reference/manual-skill.ts'], why: "the reference unit's manual fault profiles a config may switch on" },
      { role: 'store', typesOnly: true },
    ],
  },
  'kinds/tool-agents': {
    is: 'the tool-agents kind: tasks, the agent loop, policies, scoring and its campaign',
    may: [
      'domain',
      'protocol',
      'config',
      'llm',
      'toolenv',
      'bridge',
      { role: 'headunit', files: ['types.ts'] },
      'run',
      'report',
      { role: 'analysis', files: ['reliability.ts'], why: 'the one pass^k / pass@k estimator' },
      { role: 'store', typesOnly: true },
    ],
  },
  'kinds/suite': {
    is: "the suite kind and live sessions: scripted suites and typed turns, each its own kind definition composing the dialogue kind's parts (docs/suites.md)",
    may: ['domain', 'config', 'llm', 'judge', 'simulator', 'vehicle', 'suite', 'run', { role: 'kinds/dialogue', files: ['config.ts', 'kind.ts', 'run.ts', 'tiers.ts'], why: "a suite campaign runs on the dialogue kind's rig, storage and outputs with a scripted plan and user" }],
  },
  manual: {
    is: "the owner's-manual library: ingestion, chunks, retrieval, test sets, the GEAR evaluators",
    may: ['domain', 'protocol', 'config', 'llm', 'embedding', 'analysis'],
  },
  suite: {
    is: 'scripted suites: the suite format, pinning a stored conversation, transcript importers',
    may: ['domain', 'protocol', 'config', 'world', { role: 'judge', files: ['precedence.ts'] }],
  },
  judgebench: { is: 'the judge benchmark', may: ['domain', 'protocol', 'config', 'world', 'llm', 'analysis', 'report'] },
  fleet: {
    is: "fleet campaigns on Redis: job schemas, workers, the coordinator (an ItemRunner of any kind), the shared model-host limit",
    may: ['domain', 'run', 'config', { role: 'kinds', files: ['registry.ts'], why: "a worker opens the runner of the run's kind through the kind contract" }, { role: 'llm', files: ['limiter.ts'], why: 'the fleet-wide slot gate behind the per-endpoint limiter' }],
  },
  conformance: {
    is: 'the bridge conformance kit: the suite as data, the runner, its JUnit and HTML reports',
    may: ['domain', 'protocol', 'vehicle', 'toolenv', { role: 'bridge', typesOnly: true }, { role: 'report', files: ['escape.ts'] }],
  },
  doctor: { is: 'prerequisite checks (icabench doctor, the rig status screen)', may: ['system', 'llm'] },
  server: {
    is: 'the bench app backend',
    may: ['domain', 'protocol', 'config', 'analysis', 'report', 'judge', 'store', 'run', 'kinds', 'kinds/dialogue', 'kinds/manual-qa', 'manual', 'headunit', 'doctor', 'embedding', 'conformance', { role: 'bridge', files: ['server.ts'], why: 'the conformance screen opens a bridge' }, { role: 'llm', files: ['modelRef.ts'], why: 'the config editor checks judge references' }, { role: 'kinds/tool-agents', files: ['results.ts', 'compare.ts'], why: 'the tool-agents run view and comparison' }, { role: 'fleet', files: ['coordinator.ts', 'protocol.ts'], why: 'the rig status lists the fleet workers' }, { role: 'suite', files: ['pin.ts'], why: 'the conversation view pins a conversation as a suite' }, 'kinds/suite'],
  },
  ui: {
    is: 'the bench app frontend (browser)',
    may: [
      'domain',
      'protocol',
      'analysis',
      { role: 'judge', files: ['precedence.ts'] },
      { role: 'judge', files: ['agreement.ts'], typesOnly: true },
      { role: 'server', files: ['live-snapshot.ts'], why: 'one reducer applies campaign events for the server and the page' },
      { role: 'server', typesOnly: true },
      { role: 'store', typesOnly: true },
      { role: 'run', typesOnly: true },
      { role: 'kinds', typesOnly: true },
      { role: 'manual', files: ['model.ts'], why: 'metric names and titles' },
      { role: 'manual', typesOnly: true },
      { role: 'kinds/manual-qa', typesOnly: true },
      { role: 'kinds/tool-agents', typesOnly: true },
      { role: 'conformance', typesOnly: true },
      { role: 'voice', files: ['metrics.ts'], typesOnly: true, why: "the run report's voice section" },
    ],
  },
  cli: { is: 'the command line: the entry point, may import anything', may: '*' },
};


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
    const lines = doc.slice(doc.indexOf('| role | may import | notes |')).split('\n');
    const end = lines.findIndex((line) => !line.startsWith('|'));
    const documented = lines.slice(2, end).map((line) => line.split('|')[1].trim());
    expect([...documented].sort()).toEqual([...Object.keys(RULES), ...Object.keys(PACKAGES)].sort());
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
