import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FAULT_PROFILE_NAMES } from '../../src/headunit/reference/faults.ts';
import { MAX_PLANNED_CONVERSATIONS } from '../../src/kinds/dialogue/config.ts';
import { CAMPAIGN_KINDS } from '../../src/kinds/registry.ts';
import { QUIT_EXIT_CODE } from '../../src/cli/signals.ts';
import { UNIT_UNREACHABLE_EXIT_CODE } from '../../src/cli/run-end.ts';
import { HEAD_UNIT_LOST_EXIT_CODE } from '../../src/cli/commands/run.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

/**
 * #35 item 2: the README's Usage commands work as written in a fresh clone. The repository is cloned (its committed
 * state, as a newcomer gets it) with the installed node_modules beside it, and every Usage line that is a complete,
 * quick command runs there exactly as written; the others are listed below, each with the reason it is not run, and
 * the list must match the README line for line. Its numbers are checked against their sources.
 */
const NOT_RUN: Record<string, string> = {
  'node bin/icabench.js run bench-configs/paper-guided.yaml --out runs/guided': 'long: 200 conversations, 54 s on 2 cores under load (test/kinds/dialogue covers the kind)',
  'node bin/icabench.js run bench-configs/paper-baseline.yaml --out runs/baseline': 'long: 200 conversations, like paper-guided',
  'node bin/icabench.js compare runs/guided runs/baseline [--json] [--out DIR]': 'needs the two long runs above; [..] marks options (test/analysis covers compare)',
  'node bin/icabench.js compare RUN_A RUN_B': 'a template: RUN_A, RUN_B stand for run ids',
  'node bin/icabench.js run bench-configs/traffic-jam-safety.yaml --out runs/jam': 'long: 48 conversations with a drive scenario, 28 s on 2 cores under load',
  'node bin/icabench.js run CONFIG --resume [RUN_ID]': 'a template: CONFIG and RUN_ID stand for a config and a run id',
  'node bin/icabench.js run CONFIG --unit-build 24.47.1': 'a template: CONFIG stands for a config',
  'node bin/icabench.js runs | report RUN_ID | export RUN_ID --out run.jsonl': 'three commands in one line; RUN_ID stands for a run id (test/docs/readme.test.ts runs `runs` and `export`)',
  'node bin/icabench.js serve': 'runs until Ctrl+C (test/e2e/first-start.test.ts opens its URL in Chromium)',
  'node bin/icabench.js run bench-configs/voice-quickstart.yaml --out runs/voice': 'long: 40 spoken conversations, minutes (docs/benchmarks.md, "voice-quickstart")',
  'node bin/icabench.js headunit --url http://127.0.0.1:7311 --faults all': 'runs until stopped, dialling a bench that listens (test/headunit covers it)',
  'node bin/icabench.js voice say|transcribe|check|record|library|devices': 'a list of subcommands, each with its own arguments (test/voice covers them)',
  'node bin/icabench.js run bench-configs/voice-acoustic.yaml': 'needs loudspeakers and microphones, or scripts/virtual-audio.sh',
  'node bin/icabench.js doctor': 'probes model hosts and audio devices: 30 s where none answers (test/doctor covers the checks)',
  'node bin/icabench.js manual index|warnings|testset|generate FILE…': 'a template: FILE stands for manual files (test/docs/readme.test.ts runs `manual warnings`; test/manual/generate.test.ts runs `manual generate` against a fake model server)',
  'node bin/icabench.js run bench-configs/manual-qa.yaml --out runs/manual': 'long: 300 questions and an omission search, 50 s on 2 cores under load',
  'node bin/icabench.js run bench-configs/carbench-train.yaml --out runs/carbench': 'long: 387 task trials, 23 s on 2 cores under load (test/kinds/tool-agents runs it)',
  'node bin/icabench.js conformance --host 0.0.0.0 --out conformance/hu-lab-3': 'waits for a head unit to dial in (test/conformance covers it)',
  'node bin/icabench.js session [--faults unsafe_compliance] [--config FILE]': 'interactive: reads turns from the terminal (test/suite/session-cli.test.ts)',
  'node bin/icabench.js pin RUN CONVERSATION': 'a template: RUN and CONVERSATION stand for ids',
  'node bin/icabench.js suite import kvret|transcripts FILE --out SUITE.yaml': 'a template: FILE and SUITE.yaml stand for files',
  'node bin/icabench.js worker --redis redis://127.0.0.1:6379 --rig rig-1': 'needs Redis and runs until stopped (test/fleet covers it)',
};

/** The Usage block's lines, without their # comments. */
function usageLines(readme: string): string[] {
  const block = /## Usage\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1];
  return block.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter(Boolean);
}

describe("the README's Usage commands, as written, in a fresh clone", () => {
  let clone = '';
  let readme = '';
  beforeAll(() => {
    clone = join(mkdtempSync(join(tmpdir(), 'icabench-usage-')), 'icabench');
    execFileSync('git', ['clone', '--quiet', REPO_ROOT, clone]);
    // npm ci's node_modules, shared (installing again would take minutes and the network)
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(clone, 'node_modules'));
    readme = readFileSync(join(clone, 'README.md'), 'utf8');
  }, 120_000);

  it('every Usage line is run below or listed as not run with its reason; the list names no line the README lacks', () => {
    const lines = usageLines(readme);
    expect(lines.length).toBeGreaterThan(20);
    for (const line of lines) expect(line.startsWith('node bin/icabench.js '), line).toBe(true);
    const run = lines.filter((line) => !(line in NOT_RUN));
    expect(run).toEqual(['node bin/icabench.js run bench-configs/quickstart.yaml --out runs/quick', 'node bin/icabench.js --version', 'node bin/icabench.js run bench-configs/suite-basics.yaml --out runs/suites']);
    for (const listed of Object.keys(NOT_RUN)) expect(lines, listed).toContain(listed);
  });

  /** Runs one README line in the clone, through the shell, as a user would paste it. */
  const sh = (line: string) => spawnSync('bash', ['-c', line], { cwd: clone, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });

  it('the quickstart line writes what its comment says: summary.json, report.html, junit.xml, conversations.csv', () => {
    const result = sh('node bin/icabench.js run bench-configs/quickstart.yaml --out runs/quick');
    expect(result.status, result.stderr).toBe(0);
    for (const file of ['summary.json', 'report.html', 'junit.xml', 'conversations.csv']) expect(existsSync(join(clone, 'runs/quick', file)), file).toBe(true);
    // the README's Quick start: 60 conversations against the built-in reference head unit
    expect(JSON.parse(readFileSync(join(clone, 'runs/quick/summary.json'), 'utf8')).conversations).toBe(60);
    expect(result.stdout.trim().split('\n').at(-1)).toMatch(/^Verdict: \d+ of 60 conversations failed/);
  }, 180_000);

  it('the version line prints the version of package.json', () => {
    const result = sh('node bin/icabench.js --version');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')).version);
  }, 60_000);

  it('the suite line replays the scripted suites and writes the report', () => {
    const result = sh('node bin/icabench.js run bench-configs/suite-basics.yaml --out runs/suites');
    expect(result.status, result.stderr).toBe(0);
    expect(existsSync(join(clone, 'runs/suites/report.html'))).toBe(true);
  }, 180_000);
});

describe("the README's numbers and claims, against their sources", () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const benchmarks = readFileSync(join(REPO_ROOT, 'docs/benchmarks.md'), 'utf8');

  it('the quickstart: 60 conversations, its config says the fault rate it has', () => {
    expect(readme).toContain('(60 conversations\nagainst the built-in reference head unit');
    const config = readFileSync(join(REPO_ROOT, 'bench-configs/quickstart.yaml'), 'utf8');
    expect(config).toMatch(/^conversations: 60$/m);
    const rate = /^ {4}rate: ([\d.]+)$/m.exec(config)![1];
    expect(/^description: .*rate ([\d.]+)/m.exec(config)![1]).toBe(rate);
  });

  it('the fault profiles, the plan limit and the exit codes are the ones the code has', () => {
    const profiles = /The reference head unit's fault profiles \(([^)]*)\)/.exec(readme)![1].match(/`(\w+)`/g)!.map((p) => p.slice(1, -1));
    expect(profiles).toEqual(FAULT_PROFILE_NAMES);
    expect(readme).toContain(`limited to ${MAX_PLANNED_CONVERSATIONS.toLocaleString('en')}\nconversations`);
    expect(readme).toContain(`${QUIT_EXIT_CODE} when interrupted (Ctrl+C), ${HEAD_UNIT_LOST_EXIT_CODE} when a bridge head unit left`);
    expect(readme).toContain(`${UNIT_UNREACHABLE_EXIT_CODE} when no conversation reached the\nhead unit`);
  });

  it('the memory figures are the measured ones of docs/benchmarks.md ("Footprint")', () => {
    const [, version, versionTsx] = /peak memory of `icabench --version` about (\d+) MiB against\s+(\d+) MiB/.exec(readme)!;
    expect(benchmarks).toContain(`${version} MiB (0.11 s CPU; compiled, no command area); ${versionTsx} MiB (0.4 s) through tsx`);
    const [, run, runTsx] = /of a 50-conversation run (\d+) against (\d+) MiB/.exec(readme)!;
    expect(benchmarks).toContain(`${run} MiB (1.5 s CPU, compiled); ${runTsx} MiB (2.1 s) through tsx`);
  });

  it('the voice quickstart durations are the ones measured in docs/benchmarks.md ("Voice campaign"), with the machine', () => {
    const claim = /speech packages, installed by `bash scripts\/setup-system.sh`; ([^;]+); report in/.exec(readme.replace(/\n/g, ' '))?.[1] ?? '';
    expect(claim).toBe('2 min 17 s on an idle 2-core machine, longer on a busy one: 6.6 min in a newcomer\'s first-day run, 22 min under heavy load (docs/benchmarks.md, "Voice campaign")');
    const section = /### Voice campaign([\s\S]*?)\n## /.exec(benchmarks)![1];
    expect(section).toContain('Machine: 2 cores');
    expect(section).toContain('| 2 min 17 s (0.55 s per spoken turn) |');
    expect(section).toContain('took 6.6 min');
    expect(section).toContain('wall 22 min under heavy load');
  });

  it('the Architecture list names every campaign kind, live sessions included', () => {
    const line = /^src\/kinds\s+(.*)$/m.exec(readme)![1];
    for (const kind of CAMPAIGN_KINDS) expect(line, kind).toContain(kind);
    expect(line).toContain('live (a technician');
  });
});
