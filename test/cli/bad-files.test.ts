import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

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
    }, 60_000);
  }
});
