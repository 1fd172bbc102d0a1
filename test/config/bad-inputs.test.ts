import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

/**
 * #22 item 4 / #27 item 4: every bad input a command or a config names fails with ONE line naming
 * the file and what was wrong, exit 2, and leaves no results store behind. Each case runs the real CLI.
 */
const deepList = (levels: number) => Array.from({ length: levels }, (_, depth) => `${'  '.repeat(depth)}- item\n`).join('');

interface BadInput {
  name: string;
  args: (dir: string) => string[];
  /** the one line the command prints */
  error: RegExp;
}

const CASES: BadInput[] = [
  { name: 'a Markdown manual nested 3,000 list levels deep', args: (d) => ['manual', 'index', join(d, 'deep.md'), '--out', join(d, 'ws', 'index.json')], error: /deep\.md: nested too deeply \(limit 256\) at line 257 \(a list\)$/ },
  { name: 'an HTML manual nested 100,000 elements deep', args: (d) => ['manual', 'warnings', join(d, 'deep.html')], error: /deep\.html: nested too deeply \(limit 256\) at line 1 \(<div>\)$/ },
  { name: 'an IBIKUS XML chapter nested 100,000 sections deep', args: (d) => ['manual', 'warnings', join(d, 'deep.xml')], error: /deep\.xml: nested too deeply \(limit 256\) at line 1 \(<section>\)$/ },
  { name: 'a UTF-16 Markdown manual', args: (d) => ['manual', 'warnings', join(d, 'utf16.md')], error: /utf16\.md: the manual file is UTF-16 text; icabench reads UTF-8/ },
  { name: '`manual warnings` on a folder without manual files', args: (d) => ['manual', 'warnings', join(d, 'empty')], error: /empty: nothing to read: the folder holds no manual file/ },
  { name: '`manual index` on a path that does not exist', args: (d) => ['manual', 'index', join(d, 'nope.md'), '--out', join(d, 'ws', 'index.json')], error: /nope\.md: no such manual file or folder/ },
  { name: 'a manual-QA config whose manual does not exist', args: (d) => ['run', join(d, 'manual-nope.yaml'), '--workspace', join(d, 'ws')], error: /nope-manual: no such manual file or folder/ },
  { name: 'a manual-QA config whose test set is /dev/zero', args: (d) => ['run', join(d, 'manual-zero-testset.yaml'), '--workspace', join(d, 'ws')], error: /zero\.jsonl: the test set is more than 16 MiB \(read up to the cap and stopped\), larger than the limit of 16 MiB .*set ICABENCH_MAX_TEST_SET_MIB=/ },
  { name: 'a tool-agents config whose task file does not exist', args: (d) => ['run', join(d, 'tasks-nope.yaml'), '--workspace', join(d, 'ws')], error: /tasks-nope\.yaml: tasks: nothing to run: no task loaded from .*nope\.json \(.*nope\.json: cannot read the task file \(no such file\)\)/ },
  { name: 'a tool-agents config with an empty task list', args: (d) => ['run', join(d, 'tasks-empty.yaml'), '--workspace', join(d, 'ws')], error: /tasks-empty\.yaml:3: tasks: Too small: expected array to have >=1 items/ },
  { name: 'a tool-agents config whose task file is /dev/zero', args: (d) => ['run', join(d, 'tasks-zero.yaml'), '--workspace', join(d, 'ws')], error: /zero\.json: the task file is more than 16 MiB \(read up to the cap and stopped\), larger than the limit of 16 MiB .*set ICABENCH_MAX_TASK_FILE_MIB=/ },
  { name: 'a tool-agents config with an unknown taskIds entry', args: (d) => ['run', join(d, 'tasks-unknown-id.yaml'), '--workspace', join(d, 'ws')], error: /tasks-unknown-id\.yaml: taskIds: base_nope not in the task files/ },
  { name: 'a campaign config saved as UTF-16', args: (d) => ['run', join(d, 'utf16.yaml'), '--workspace', join(d, 'ws')], error: /utf16\.yaml: the campaign config is UTF-16 text; icabench reads UTF-8/ },
  { name: 'a campaign config nested 50,000 levels deep', args: (d) => ['run', join(d, 'deep.yaml'), '--workspace', join(d, 'ws')], error: /deep\.yaml: nested too deeply \(limit 32\)$/ },
  { name: 'a seed pool with an alias to an anchor that is not set', args: (d) => ['run', join(d, 'alias.yaml'), '--workspace', join(d, 'ws')], error: /pool\.yaml:4: alias \*town refers to no anchor &town before it/ },
  { name: '--workspace naming a file', args: (d) => ['run', join(REPO_ROOT, 'bench-configs/quickstart.yaml'), '--workspace', join(d, 'a-file')], error: /--workspace .*a-file: this is a file; a workspace is a folder/ },
];

function writeInputs(dir: string): void {
  writeFileSync(join(dir, 'deep.md'), deepList(3000));
  writeFileSync(join(dir, 'deep.html'), `<html><body>${'<div>'.repeat(100_000)}x${'</div>'.repeat(100_000)}</body></html>`);
  writeFileSync(join(dir, 'deep.xml'), `<chapter-contents>${'<section>'.repeat(100_000)}${'</section>'.repeat(100_000)}</chapter-contents>`);
  writeFileSync(join(dir, 'utf16.md'), Buffer.from('\ufeff# Car\n\nWarning: hot.\n', 'utf16le'));
  writeFileSync(join(dir, 'utf16.yaml'), Buffer.from('\ufeffname: x\nconversations: 3\n', 'utf16le'));
  mkdirSync(join(dir, 'empty'));
  writeFileSync(join(dir, 'empty', 'notes.txt'), 'not a manual');
  writeFileSync(join(dir, 'a-file'), '');
  symlinkSync('/dev/zero', join(dir, 'zero.json'));
  symlinkSync('/dev/zero', join(dir, 'zero.jsonl'));
  writeFileSync(join(dir, 'car.md'), '# Car\n## Washing\n1. Fold in the mirrors.\n2. Switch off the rain sensor.\n');
  writeFileSync(join(dir, 'manual-nope.yaml'), 'kind: manual-qa\nname: m\nmanual: [nope-manual]\n');
  writeFileSync(join(dir, 'manual-zero-testset.yaml'), 'kind: manual-qa\nname: m\nmanual: [car.md]\ntestSet: zero.jsonl\n');
  writeFileSync(join(dir, 'tasks-nope.yaml'), 'kind: tool-agents\nname: t\ntasks: [nope.json]\nrepeats: 1\n');
  writeFileSync(join(dir, 'tasks-empty.yaml'), 'kind: tool-agents\nname: t\ntasks: []\nrepeats: 1\n');
  writeFileSync(join(dir, 'tasks-zero.yaml'), 'kind: tool-agents\nname: t\ntasks: [zero.json]\nrepeats: 1\n');
  writeFileSync(join(dir, 'tasks-unknown-id.yaml'), `kind: tool-agents\nname: t\ntasks: [${join(REPO_ROOT, 'data/carbench/tasks_base.json')}]\ntaskIds: [base_0, base_nope]\nrepeats: 1\n`);
  writeFileSync(join(dir, 'deep.yaml'), `name: x\nseeds: ${'['.repeat(50_000)}${']'.repeat(50_000)}\n`);
  writeFileSync(join(dir, 'pool.yaml'), 'seeds:\n  - id: a\n    text: Find a cafe.\n    city: *town\n    requests:\n      - { intent: find_poi, category: cafe, constraints: [] }\n');
  writeFileSync(join(dir, 'alias.yaml'), 'name: x\nseeds: pool.yaml\nconversations: 1\n');
}

describe('bad inputs: one error line naming the file, exit 2, no store left', () => {
  it.each(CASES)('$name', async ({ args, error }) => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-bad-input-'));
    writeInputs(dir);
    const result = await runCli(args(dir));
    // one error line, the last (a run may say which agent and judges it opened before it planned); no stack trace
    const lines = result.stderr.trim().split('\n');
    const errors = lines.filter((line) => line.startsWith('icabench: '));
    expect(errors, result.stderr).toHaveLength(1);
    expect(lines.at(-1)).toBe(errors[0]);
    expect(errors[0]).toMatch(error);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.code).toBe(2);
    expect(existsSync(join(dir, 'ws')), 'a workspace was left behind').toBe(false);
  }, 120_000);
});
