import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The import rules of src/, as data (docs/architecture.md, "Layers and import rules", shows the same picture).
 * A role is a folder directly under src/. Each role lists the roles it may import values from; `types` lists roles
 * it may import types from only (`import type`), and `files` narrows a role to the modules that are its public
 * face. Anything else is another role's internals: the test fails naming the file, the line and the rule.
 */
export type Allowed = string | { role: string; files?: readonly string[]; typesOnly?: boolean; why?: string };
export interface RoleRule {
  /** what the role is, one line */
  is: string;
  /** '*' for the entry point (cli); otherwise the roles (and modules) it may import */
  may: '*' | readonly Allowed[];
}

/**
 * Packages of this repository that src/ may import, as roles named by their folder under packages/ (their own
 * package.json; they import nothing from src/, see the test below). The bridge SDK holds the wire format.
 */
export const PACKAGES: Record<string, string> = { 'bridge-sdk': 'packages/bridge-sdk/src' };

export const RULES: Record<string, RoleRule> = {
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
      { role: 'embedding', typesOnly: true, why: "a kind's view compares failure diversity with the embedder `icabench compare` chose" },
    ],
  },
  kinds: {
    is: "the campaign kinds: what a config's `kind:` selects",
    may: ['domain', 'config', 'run', 'kinds/dialogue', 'kinds/manual-qa', 'kinds/tool-agents', 'kinds/suite', 'kinds/live'],
  },
  'kinds/dialogue': {
    is: 'the dialogue kind: its config, plan (sampling, seed pool), the conversation loop, the world file',
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
      'report',
      'run',
      { role: 'embedding', files: ['tfidf.ts'], why: "its view compares two runs' failure diversity with the lexical embedder, as icabench compare does" },
    ],
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
    is: "the suite kind: scripted suites replayed, its own config and stored kind, composing the dialogue kind's parts (docs/suites.md)",
    may: ['domain', 'config', 'llm', 'judge', 'simulator', 'vehicle', 'suite', 'run', { role: 'kinds/dialogue', files: ['config.ts', 'kind.ts', 'run.ts', 'tiers.ts'], why: "a suite campaign runs on the dialogue kind's rig, storage and outputs with a scripted plan and user" }],
  },
  'kinds/live': {
    is: "the live kind: a technician's typed turns (icabench session, the app's Live screen), its own config and stored kind, composing the dialogue kind's parts (docs/suites.md)",
    may: ['domain', 'config', 'simulator', 'suite', 'run', { role: 'kinds/dialogue', files: ['config.ts', 'kind.ts', 'run.ts'], why: "a live session runs on the dialogue kind's rig, storage and outputs with the technician as its user" }],
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
    may: ['domain', 'protocol', 'config', 'analysis', 'report', 'judge', 'store', 'run', 'kinds', 'kinds/dialogue', 'manual', 'headunit', 'doctor', 'embedding', 'conformance', { role: 'bridge', files: ['server.ts'], why: 'the conformance screen opens a bridge' }, { role: 'llm', files: ['modelRef.ts'], why: 'the config editor checks judge references' }, { role: 'fleet', files: ['coordinator.ts', 'protocol.ts'], why: 'the rig status lists the fleet workers' }, { role: 'suite', files: ['pin.ts', 'folder.ts'], why: 'the conversation view pins a conversation as a suite into the one suites folder' }, 'kinds/suite', 'kinds/live'],
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
      { role: 'kinds/dialogue', typesOnly: true },
      { role: 'kinds/manual-qa', typesOnly: true },
      { role: 'kinds/tool-agents', typesOnly: true },
      { role: 'conformance', typesOnly: true },
      { role: 'voice', files: ['metrics.ts'], typesOnly: true, why: "the run report's voice section" },
      { role: 'report', files: ['first-screen.ts'], typesOnly: true, why: "a run page shows its report's first screen" },
    ],
  },
  cli: { is: 'the command line: the entry point, may import anything', may: '*' },
};

/** A package's row: it imports nothing of src/, only its declared dependencies. */
function packageCell(name: string, root: string): string {
  const manifest = JSON.parse(readFileSync(join(root, PACKAGES[name], '../package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  return `nothing of \`src/\` (${Object.keys(manifest.dependencies ?? {}).join(', ')})`;
}

/** An allowed import as docs/architecture.md writes it: a role by its name, a module as `role/file`. */
const named = (entry: Exclude<Allowed, string>): string[] => (entry.files ? entry.files.map((file) => `\`${entry.role}/${file}\``) : [entry.role]);

/**
 * The "may import" cell of a role in docs/architecture.md's table, generated from RULES (scripts/architecture-table.ts
 * writes it, test/architecture/imports.test.ts checks it): the roles and modules it may import, then those it may
 * import types from.
 */
export function mayImportCell(role: string, root: string): string {
  if (PACKAGES[role]) return packageCell(role, root);
  const { may } = RULES[role];
  if (may === '*') return 'anything';
  const entries = may.map((a) => (typeof a === 'string' ? { role: a } : a));
  const values = entries.filter((e) => !e.typesOnly).flatMap(named);
  const types = entries.filter((e) => e.typesOnly).flatMap(named);
  const cell = [values.join(', '), types.length ? `types from ${types.join(', ')}` : ''].filter(Boolean).join('; ');
  return cell || 'nothing';
}

/** The header of the table in docs/architecture.md whose "may import" column is generated. */
export const TABLE_HEADER = '| role | may import | notes |';

/** docs/architecture.md with every row's "may import" cell generated (the role and notes cells as written). */
export function withGeneratedTable(doc: string, root: string): string {
  const start = doc.indexOf(TABLE_HEADER);
  if (start < 0) throw new Error(`docs/architecture.md: no table with the header "${TABLE_HEADER}"`);
  const lines = doc.slice(start).split('\n');
  const end = lines.findIndex((line) => !line.startsWith('|'));
  const rows = lines.slice(2, end).map((line) => {
    const cells = line.split(' | ');
    const role = cells[0].replace(/^\|\s*/, '').trim();
    if (!RULES[role] && !PACKAGES[role]) return line;
    cells[1] = mayImportCell(role, root);
    return cells.join(' | ');
  });
  return doc.slice(0, start) + [...lines.slice(0, 2), ...rows, ...lines.slice(end)].join('\n');
}
