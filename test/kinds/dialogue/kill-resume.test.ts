import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

const CLI = resolve('bin/icabench.js');

function storedKeys(db: string): string[] {
  if (!existsSync(db)) return [];
  const handle = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (handle.prepare('SELECT key FROM conversations').all() as Array<{ key: string }>).map((r) => r.key);
  } catch {
    return []; // schema not created yet
  } finally {
    handle.close();
  }
}

describe('kill -9 during a run, then --resume', () => {
  it('loses and repeats no conversation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-kill-'));
    const config = join(dir, 'kill.yaml');
    writeFileSync(config, `name: kill-test\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 400\nconcurrency: 2\nheadUnit: { type: reference, faults: { profiles: all, rate: 0.4 } }\n`);
    const workspace = join(dir, 'ws');
    const db = join(workspace, 'icabench.db');
    const child = spawn(process.execPath, [CLI, 'run', config, '--workspace', workspace, '--out', join(dir, 'out'), '--no-progress'], { stdio: 'ignore' });
    // wait until some conversations are stored, then kill without warning
    for (let i = 0; i < 600 && storedKeys(db).length < 20; i++) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const beforeResume = storedKeys(db);
    expect(beforeResume.length).toBeGreaterThanOrEqual(20);
    expect(beforeResume.length).toBeLessThan(400);

    const resumed = spawnSync(process.execPath, [CLI, 'run', config, '--workspace', workspace, '--out', join(dir, 'out'), '--resume', '--no-progress'], { encoding: 'utf8' });
    expect(resumed.status, resumed.stderr).toBe(0);
    const after = storedKeys(db);
    expect(after).toHaveLength(400);
    expect(new Set(after).size).toBe(400);
    expect(after).toEqual(expect.arrayContaining(beforeResume));
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.conversations).toBe(400);
  });
});
