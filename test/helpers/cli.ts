import { spawn } from 'node:child_process';
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
