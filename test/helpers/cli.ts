import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './repoData.ts';

export const CLI = join(REPO_ROOT, 'bin', 'icabench.js');

/** `icabench ARGS` as a child process, asynchronously (so a fake model server in the test's process can answer it). */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => (stdout += d));
    child.on('exit', (code) => done({ code, stderr, stdout }));
  });
}

export interface CliChild {
  child: ChildProcess;
  /** stdout and stderr together, as far as they came */
  output(): string;
  /** resolves once the output matches (a log line says the command reached a state); the test's timeout bounds it */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** the exit code (null when killed by a signal) */
  exited: Promise<number | null>;
}

/** `icabench ARGS` as a child process that a test watches and signals. */
export function spawnCli(args: string[], env: Record<string, string> = {}, cwd?: string): CliChild {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, ...(cwd ? { cwd } : {}) });
  let output = '';
  const watchers = new Set<() => void>();
  const onData = (d: Buffer) => {
    output += d.toString();
    for (const check of [...watchers]) check();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return {
    child,
    output: () => output,
    exited,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (!match) return;
          watchers.delete(check);
          resolve(match);
        };
        watchers.add(check);
        check();
        void exited.then((code) => {
          if (!watchers.has(check)) return;
          watchers.delete(check);
          reject(new Error(`icabench ${args[0]} exited (${code}) before its output matched ${pattern}:\n${output.slice(-3000)}`));
        });
      }),
  };
}
