import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FILE_LIMITS, limitBytes, type FileLimit } from '../../src/domain/input-files.ts';
import { runCli } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

/**
 * The bad-file corpus (test/fixtures/bad-files/): every reader refuses what it cannot read faithfully, with a
 * non-zero exit, the message on stderr's first line naming the file, the line (or item), the field and the
 * accepted values, and nothing written.
 */
const CORPUS = join(import.meta.dirname, '../fixtures/bad-files');
const work = mkdtempSync(join(tmpdir(), 'icabench-bad-files-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Case {
  /** the command, given the bad file and a fresh folder it must leave empty */
  args(file: string, out: string): string[];
  firstLine: RegExp;
}

/** A tool-agents campaign config that reads `tasks` (written in the case's own folder). */
function taskConfig(tasks: string, out: string): string {
  const config = join(out, '..', 'tasks.yaml');
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(config, `kind: tool-agents\nname: bad tasks\ntasks: [${JSON.stringify(tasks)}]\nrepeats: 1\n`);
  return config;
}

const manualIndex = (file: string, out: string) => ['manual', 'index', file, '--workspace', out];
const importTranscripts = (file: string, out: string) => ['suite', 'import', 'transcripts', file, '--out', join(out, 'suite.yaml')];

const CASES: Record<string, Case> = {
  'manual/unclosed-element.xml': { args: manualIndex, firstLine: /unclosed-element\.xml: line 1: element <b> is never closed \(expected <\/b> before the end of the file/ },
  'manual/truncated.xml': { args: manualIndex, firstLine: /truncated\.xml: line 1: element <\w+> is never closed/ },
  'manual/broken.pdf': { args: manualIndex, firstLine: /broken\.pdf: not a readable PDF: / },
  'tasks/duplicate-id.json': { args: (file, out) => ['run', taskConfig(file, out), '--out', out, '--workspace', join(out, 'ws')], firstLine: /duplicate-id\.json: task base_0 \(#2\): task_id: duplicate id \(task #0 has it too\); each task_id must be unique/ },
  'tasks/too-deep.json': { args: (file, out) => ['run', taskConfig(file, out), '--out', out, '--workspace', join(out, 'ws')], firstLine: /too-deep\.json \(nested deeper than 64 levels/ },
  'transcripts/unclosed-quote.csv': { args: importTranscripts, firstLine: /unclosed-quote\.csv:2: a quoted field opened on this line is never closed/ },
  'transcripts/expect-actions-string.jsonl': { args: importTranscripts, firstLine: /expect-actions-string\.jsonl:1: expect_actions: expected a JSON array of action types among poi_results, route, / },
  'transcripts/unknown-gear.csv': { args: importTranscripts, firstLine: /unknown-gear\.csv:3: gear: expected one of P, R, N, D \(or empty\), got "X"/ },
  'transcripts/unknown-forbid-label.csv': { args: importTranscripts, firstLine: /unknown-forbid-label\.csv:2: forbid\.1: expected "all" or failure labels among fallback_response, .*, got "bogus"/ },
  'transcripts/bad-date-found-after-parsing.csv': { args: importTranscripts, firstLine: /bad-date-found-after-parsing\.csv:3: conversations\.0\.turns\.1\.context\.date: date "2026-13-45" is not a calendar date: expected a date as YYYY-MM-DD/ },
  'kvret/sixty-turns.json': { args: (file, out) => ['suite', 'import', 'kvret', file, '--out', join(out, 'suite.yaml')], firstLine: /sixty-turns\.json\[0\]: dialogue \S+ has 60 driver turns; a suite conversation has at most 50 \(split it, or import with --truncate-turns/ },
  'suites/unknown-action.yaml': { args: (file) => ['suite', 'check', file], firstLine: /unknown-action\.yaml:6: conversations\.0\.turns\.0\.expect\.actions\.0: / },
};

function corpusFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return corpusFiles(path);
    return name === 'README.md' ? [] : [relative(CORPUS, path)];
  });
}

describe('the bad-file corpus: every reader refuses, says where on the first line, and writes nothing', () => {
  it('has a case for every file of the corpus', () => {
    expect(corpusFiles(CORPUS).filter((f) => !(f in CASES))).toEqual([]);
    expect(Object.keys(CASES).filter((f) => !existsSync(join(CORPUS, f)))).toEqual([]);
  });

  // each case is a process of its own: run a few at a time
  for (const [name, { args, firstLine }] of Object.entries(CASES)) {
    it.concurrent(name, async () => {
      const out = join(work, name.replace(/\W+/g, '-'), 'out');
      const { code, stderr, stdout } = await runCli(args(join(CORPUS, name), out));
      expect(code, stderr).toBe(2);
      expect(stderr.split('\n')[0]).toMatch(/^icabench: /);
      expect(stderr.split('\n')[0]).toMatch(firstLine);
      expect(stdout).toBe('');
      // nothing half-written: no suite, no index, no run outputs
      expect(existsSync(out) ? readdirSync(out).filter((f) => f !== 'ws') : []).toEqual([]);
    }, 180_000);
  }
});

/** A file of its kind's cap + 1 byte, sparse (no disk, no memory): every reader must refuse it by its size, unread. */
function overCap(dir: string, name: string, limit: FileLimit): string {
  const path = join(dir, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, '');
  truncateSync(path, limitBytes(limit) + 1);
  return path;
}

interface OverCapCase {
  name: string;
  limit: FileLimit;
  what: string;
  /** the command, given the case's folder (its own inputs are written there) and the over-cap file */
  args(dir: string, file: string): string[];
}

const config = (dir: string, name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const CAR_MD = '# Car\n## Washing\n1. Fold in the mirrors.\n2. Switch off the rain sensor.\n';

const OVER_CAP: OverCapCase[] = [
  { name: 'big.md', limit: FILE_LIMITS.manual, what: 'manual file', args: (d, f) => ['manual', 'index', f, '--out', join(d, 'out', 'index.json')] },
  { name: 'big.pdf', limit: FILE_LIMITS.manual, what: 'manual file', args: (_d, f) => ['manual', 'warnings', f] },
  { name: 'ws/manual-index.json', limit: FILE_LIMITS.manualIndex, what: 'manual index', args: (d) => ['manual', 'testset', '--workspace', join(d, 'ws'), '--out', join(d, 'out', 'set.jsonl')] },
  {
    name: 'big-testset.jsonl',
    limit: FILE_LIMITS.testSet,
    what: 'test set',
    args: (d, f) => {
      writeFileSync(join(d, 'car.md'), CAR_MD);
      return ['run', config(d, 'manual.yaml', `kind: manual-qa\nname: m\nmanual: [car.md]\ntestSet: ${f}\n`), '--workspace', join(d, 'out', 'ws')];
    },
  },
  { name: 'big-tasks.json', limit: FILE_LIMITS.taskFile, what: 'task file', args: (d, f) => ['run', config(d, 'tasks.yaml', `kind: tool-agents\nname: t\ntasks: [${f}]\nrepeats: 1\n`), '--workspace', join(d, 'out', 'ws')] },
  { name: 'big.csv', limit: FILE_LIMITS.transcript, what: 'transcript file', args: (d, f) => ['suite', 'import', 'transcripts', f, '--out', join(d, 'out', 'suite.yaml')] },
  { name: 'big.jsonl', limit: FILE_LIMITS.transcript, what: 'transcript file', args: (d, f) => ['suite', 'import', 'transcripts', f, '--out', join(d, 'out', 'suite.yaml')] },
  { name: 'kvret.json', limit: FILE_LIMITS.transcript, what: 'transcript file', args: (d, f) => ['suite', 'import', 'kvret', f, '--out', join(d, 'out', 'suite.yaml')] },
  { name: 'pairs.jsonl', limit: FILE_LIMITS.judgeBenchDataset, what: 'judge-bench dataset', args: (d, f) => ['judge-bench', '--dataset', f, '--out', join(d, 'out')] },
  {
    name: 'ratings.csv',
    limit: FILE_LIMITS.ratings,
    what: 'ratings file',
    args: (d, f) => ['judge-bench-agreement', '--ratings', f, '--judge', config(d, 'judge.csv', 'conversation,dimension,score\nc1,overall,2\n')],
  },
  { name: 'big-campaign.yaml', limit: FILE_LIMITS.config, what: 'campaign config', args: (d, f) => ['run', f, '--workspace', join(d, 'out', 'ws')] },
  { name: 'big-suite.yaml', limit: FILE_LIMITS.config, what: 'suite', args: (_d, f) => ['suite', 'check', f] },
  { name: 'pool.yaml', limit: FILE_LIMITS.seedPool, what: 'seed pool', args: (d, f) => ['run', config(d, 'pool-campaign.yaml', `name: p\nseeds: ${f}\nconversations: 1\n`), '--workspace', join(d, 'out', 'ws')] },
  { name: 'big.dbc', limit: FILE_LIMITS.dbc, what: 'DBC file', args: (d, f) => ['can', 'decode', f, config(d, 'log.txt', '(0.000000) can0 123#00\n')] },
  { name: 'summary.json', limit: FILE_LIMITS.runSummary, what: 'run summary', args: (d, f) => ['compare', f, join(REPO_ROOT, 'nope'), '--out', join(d, 'out')] },
];

describe('files over their size cap: refused unread, by name, size, cap and the variable that raises it; nothing written', () => {
  for (const { name, limit, what, args } of OVER_CAP) {
    it.concurrent(`${what}: ${name}`, async () => {
      const dir = join(work, 'over-cap', name.replace(/\W+/g, '-'));
      const file = overCap(dir, name, limit);
      const cap = limitBytes(limit);
      const { code, stderr } = await runCli(args(dir, file));
      expect(code, stderr).toBe(2);
      // one error line, the last (a run may first say which judges and retrieval it opened, as docs/configuration.md's bad inputs)
      const lines = stderr.trim().split('\n');
      const first = lines.filter((line) => line.startsWith('icabench: '))[0];
      expect(lines.filter((line) => line.startsWith('icabench: ')), stderr).toHaveLength(1);
      expect(lines.at(-1)).toBe(first);
      const mib = (cap + 1) / 2 ** 20;
      expect(first).toContain(`${file}: the ${what} `);
      expect(first).toContain(` is ${mib.toFixed(1)} MiB (${(cap + 1).toLocaleString('en')} bytes), larger than the limit of ${cap / 2 ** 20} MiB`);
      expect(first).toContain(`set ${limit.env}=${Math.ceil(mib)}`);
      expect(existsSync(join(dir, 'out')) ? readdirSync(join(dir, 'out'), { recursive: true }) : []).toEqual([]);
    }, 180_000);
  }
});
