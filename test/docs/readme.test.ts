import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CAMPAIGN_KINDS } from '../../src/kinds/registry.ts';
import { ResultStore } from '../../src/store/store.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

/**
 * #27 item 6: every README statement a newcomer acts on is checked here. Every command line of its
 * shell blocks names a command, subcommand and flags the CLI has, every npm script exists, every file
 * and link it names is in the repository; the cheap commands are run and their claims checked.
 */
const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; version: string };
const CLI = join(REPO_ROOT, 'bin/icabench.js');
/** How the README's commands call the CLI in a checkout (npm ci puts no `icabench` on the PATH). */
const README_CLI = 'node bin/icabench.js ';

/** The lines of the README's ```sh blocks, without their # comments. */
function shellLines(): string[] {
  const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks.flatMap((block) => block.split('\n')).map((line) => line.replace(/\s+#.*$/, '').trim()).filter(Boolean);
}

/** `a|b|c` → its alternatives; brackets of optional parts dropped. */
const alternatives = (token: string) => token.replace(/[[\]]/g, '').split('|').filter(Boolean);

/** Runs the CLI; `closeAfterBytes`: stop reading its output after that much, as `| head` does. */
function icabench(args: string[], closeAfterBytes?: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (closeAfterBytes !== undefined && stdout.length >= closeAfterBytes) child.stdout.destroy();
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('README: every command, flag, script and file it names exists', async () => {
  const program = await buildProgram();
  const find = (parent: Command, name: string) => parent.commands.find((c) => c.name() === name || c.aliases().includes(name));

  it('each icabench line names a command (and subcommand) of the CLI with flags it accepts', () => {
    const lines = shellLines()
      .flatMap((line) => line.split(/\s*(?:&&|;)\s*/))
      .filter((line) => line.startsWith(README_CLI));
    expect(lines.length).toBeGreaterThan(20);
    for (const line of lines) {
      // "node bin/icabench.js runs | report RUN_ID | export …" lists three commands: each segment starts with one
      const segments = line.slice(README_CLI.length).split(/\s+\|\s+/);
      for (const segment of segments) {
        const tokens = segment.split(/\s+/);
        for (const name of alternatives(tokens[0])) {
          if (name.startsWith('-')) {
            expect(program.options.map((o) => o.long), `${line}: ${name}`).toContain(name);
            continue;
          }
          const command = find(program, name);
          expect(command, `${line}: no command "${name}"`).toBeDefined();
          // subcommands nest ("suite import kvret"): follow the tokens while they name them, each alternative on its own
          let targets: Command[] = [command!];
          let at = 1;
          while (targets.every((t) => t.commands.length > 0) && tokens[at] !== undefined) {
            targets = targets.flatMap((t) =>
              alternatives(tokens[at]).map((sub) => {
                const found = find(t, sub);
                expect(found, `${line}: no subcommand "${t.name()} ${sub}"`).toBeDefined();
                return found!;
              }),
            );
            at++;
          }
          for (const flag of tokens.slice(at).flatMap(alternatives).filter((t) => t.startsWith('--'))) {
            const long = flag.split('=')[0];
            for (const target of targets) expect([...target.options, ...program.options].map((o) => o.long), `${line}: ${target.name()} has no ${long}`).toContain(long);
          }
        }
      }
    }
  });

  it('each npm command is a script of package.json (or npm ci/test)', () => {
    const npm = shellLines()
      .flatMap((line) => line.split(/\s*&&\s*/))
      .filter((line) => line.startsWith('npm '));
    expect(npm.length).toBeGreaterThan(2);
    for (const line of npm) {
      const [, verb, script] = line.split(/\s+/);
      if (verb === 'ci') continue;
      const name = verb === 'run' ? script : verb;
      expect(Object.keys(PACKAGE.scripts), line).toContain(name);
    }
  });

  it('each file and folder it names, and each relative link, is in the repository', () => {
    const named = [...README.matchAll(/(?<![\w/.-])((?:bench-configs|scripts|docs|data|packages|hardware|electron|src)\/[\w./-]*[\w/])/g)].map((m) => m[1]);
    const links = [...README.matchAll(/\]\(((?!https?:)[^)#\s]+)\)/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(10);
    for (const path of [...named, ...links]) expect(existsSync(join(REPO_ROOT, path)), path).toBe(true);
  });

  it('the kind sentence names every campaign kind', () => {
    const sentence = /Its top-level `kind` selects the campaign kind:([\s\S]*?)an unknown kind is refused/.exec(README)?.[1] ?? '';
    for (const kind of CAMPAIGN_KINDS) expect(sentence, kind).toContain(`\`${kind}\``);
  });

  it('setup-system.sh is never run through sudo in the README (root in a container has no sudo; the script calls sudo itself)', () => {
    expect(README).not.toMatch(/sudo bash scripts\/setup-system\.sh/);
    expect(readFileSync(join(REPO_ROOT, 'scripts/setup-system.sh'), 'utf8')).toMatch(/if \[ "\$\(id -u\)" -ne 0 \]; then\n\s+if command -v sudo/);
  });
});

describe('README: the cheap commands do what it says', () => {
  /** A workspace holding one tool-agents run of 3,000 stored trials (enough output to outlast a pipe's buffer). */
  function workspaceWithRun(): { workspace: string; runId: string } {
    const workspace = mkdtempSync(join(tmpdir(), 'icabench-readme-runs-'));
    const store = ResultStore.open(join(workspace, 'icabench.db'));
    const plan = Array.from({ length: 3000 }, (_, n) => ({ key: `task_${n}#0`, item: { n } }));
    const runId = store.createItemRun({ name: 'readme check', kind: 'tool-agents', config: {}, plan });
    for (const { key } of plan) store.saveItemResult(runId, key, 'pass', { note: 'x'.repeat(100) });
    store.close();
    return { workspace, runId };
  }

  it('icabench runs prints a header row and aligned columns; runs | head and export | head end quietly with exit 0', async () => {
    const { workspace, runId } = workspaceWithRun();
    const runs = await icabench(['runs', '--workspace', workspace]);
    expect(runs.status).toBe(0);
    const [header, row] = runs.stdout.trim().split('\n');
    expect(header.split(/\s+/)).toEqual(['RUN', 'STATUS', 'KIND', 'STORED', 'NAME']);
    expect(row.indexOf('readme check')).toBe(header.indexOf('NAME'));
    expect(row.indexOf(runId)).toBe(0);
    // the reader goes away after the first bytes (icabench export RUN | head -c 100)
    const exported = await icabench(['export', runId, '--workspace', workspace], 100);
    expect(exported.stderr).toBe('');
    expect(exported.status).toBe(0);
  }, 60_000);

  it('icabench --version prints the version of package.json', async () => {
    const result = await icabench(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(PACKAGE.version);
  }, 60_000);

  it('manual warnings prints tab-separated warnings, and JSON lines with --json', async () => {
    const dir = join(REPO_ROOT, 'data/bmw-manual/xml');
    const chapter = join(dir, readdirSync(dir).filter((f) => f.endsWith('.xml')).sort()[0]);
    const plain = await icabench(['manual', 'warnings', chapter]);
    const json = await icabench(['manual', 'warnings', chapter, '--json']);
    expect(plain.status).toBe(0);
    const plainLines = plain.stdout.trim().split('\n');
    expect(plainLines.length).toBeGreaterThan(0);
    for (const line of plainLines) expect(line.split('\t')).toHaveLength(4);
    const records = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; type: string });
    expect(records.map((r) => r.id)).toEqual(plainLines.map((line) => line.split('\t')[1]));
  }, 60_000);

  it('icabench run exits 2 on a configuration error, and points a judge-bench config to icabench judge-bench', async () => {
    const workspace = join(mkdtempSync(join(tmpdir(), 'icabench-readme-')), 'ws');
    const result = await icabench(['run', 'bench-configs/judge-bench/judge-bench-oracle.yaml', '--workspace', workspace]);
    expect(result.status).toBe(2);
    expect(result.stderr.trim()).toBe('icabench: bench-configs/judge-bench/judge-bench-oracle.yaml: this is a judge-benchmark config ("generate:", no campaign kind); run it with: icabench judge-bench bench-configs/judge-bench/judge-bench-oracle.yaml');
    expect(existsSync(workspace)).toBe(false);
  }, 60_000);
});
