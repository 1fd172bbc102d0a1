import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBridgeServer } from '../../../src/bridge/server.ts';
import { DEFAULT_CAPABILITIES } from '../../../src/protocol/bridge.ts';

const PACKAGE_DIR = resolve(import.meta.dirname, '..');
const REPO_ROOT = resolve(PACKAGE_DIR, '../..');
const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string> };

/** The installed copy of `name` that `fromDir` would load (walking up node_modules folders, as Node does). */
function installedDir(name: string, fromDir: string): string {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === dirname(dir)) throw new Error(`${name} is not installed above ${fromDir}`);
  }
}

/**
 * Tarballs of the SDK's dependencies and theirs, made from the repository's installed node_modules (an npm package
 * tarball is a gzipped tar of the package under `package/`), so the install below needs no registry: CI has no
 * network for it.
 */
function packDependencies(outDir: string): Record<string, string> {
  const specs: Record<string, string> = {};
  const queue = Object.keys(manifest.dependencies).map((name) => ({ name, from: REPO_ROOT }));
  while (queue.length > 0) {
    const { name, from } = queue.shift()!;
    if (specs[name]) continue;
    const dir = installedDir(name, from);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string; dependencies?: Record<string, string> };
    const file = join(outDir, `${name.replace('/', '-')}-${pkg.version}.tgz`);
    execFileSync('tar', ['-czf', file, '-C', dirname(dir), '--exclude=node_modules', '--transform', `s,^${name.split('/').at(-1)},package,`, name.split('/').at(-1)!]);
    specs[name] = `file:${file}`;
    for (const dep of Object.keys(pkg.dependencies ?? {})) queue.push({ name: dep, from: dir });
  }
  return specs;
}

describe('npm pack of @icabench/bridge-sdk', () => {
  it('builds a tarball (dist JS + declarations, README, no sources) that installs offline into an empty folder, type-checks, and dials in to a bench', async () => {
    const work = mkdtempSync(join(tmpdir(), 'bridge-sdk-pack-'));
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: PACKAGE_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed[0].files.map((f) => f.path).sort();
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/protocol/bridge.d.ts');
    expect(files).toContain('README.md');
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);

    // an empty folder, the SDK and its dependencies as local tarballs, npm install with no registry
    const app = join(work, 'app');
    mkdirSync(join(app, 'deps'), { recursive: true });
    const deps = { [manifest.name]: `file:${join(work, packed[0].filename)}`, ...packDependencies(join(app, 'deps')) };
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'head-unit-app', version: '1.0.0', private: true, type: 'module', dependencies: deps }, null, 2));
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    const installed = join(app, 'node_modules', '@icabench', 'bridge-sdk');
    expect(readdirSync(installed).sort()).toEqual(['README.md', 'dist', 'package.json']);

    // the declarations type-check a consumer (a wrong action is a compile error, a right one is not)
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, types: [], skipLibCheck: false } }));
    const consumer = (reason: string) => `import { connectHeadUnit, type HeadUnitHandler } from '@icabench/bridge-sdk';
export const handler: HeadUnitHandler = {
  unit: { name: 'typed', version: '1' },
  capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: true },
  startSession() {},
  async handleTurn(_s, _t, text) { return { text, actions: [{ type: 'refusal', reason: '${reason}' }] }; },
  endSession() {},
};
export const connect = connectHeadUnit;
`;
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const typeErrors = () => {
      try {
        execFileSync(process.execPath, [tsc, '-p', '.'], { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
        return '';
      } catch (error) {
        return String((error as { stdout?: string }).stdout);
      }
    };
    writeFileSync(join(app, 'typed.ts'), consumer('safety'));
    expect(typeErrors()).toBe('');
    writeFileSync(join(app, 'typed.ts'), consumer('because'));
    expect(typeErrors()).toMatch(/typed\.ts.*'"because"' is not assignable to type '"not_found" \| "safety" \| "unsupported"'/s);

    // a plain Node program using the installed package dials in to a bench and answers a turn
    const server = await startBridgeServer({ token: 'pack-token' });
    writeFileSync(
      join(app, 'unit.mjs'),
      `import { connectHeadUnit } from '@icabench/bridge-sdk';
const client = await connectHeadUnit({
  url: process.argv[2], token: 'pack-token',
  handler: { unit: { name: 'packed-unit', version: '0.1' }, capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: false },
    startSession() {}, async handleTurn(sessionId, turn, text) { return { text: 'echo: ' + text }; }, endSession() { setTimeout(() => client.close().then(() => process.exit(0)), 50); } },
});
`,
    );
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['unit.mjs', server.url], { cwd: app, stdio: 'ignore' });
    try {
      const unit = await server.waitForHeadUnit(30_000, 'packed-unit');
      expect(unit.capabilities()).toEqual({ ...DEFAULT_CAPABILITIES, text: true });
      const session = await unit.openSession('packed-1', { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-03-14', time: '18:30' });
      const reply = await session.send(0, 'hello bench', { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-03-14', time: '18:30' });
      expect(reply).toMatchObject({ sessionId: 'packed-1', turn: 0, text: 'echo: hello bench', actions: [] });
      await session.close();
      const exit = await new Promise<number | null>((done) => child.once('exit', done));
      expect(exit).toBe(0);
    } finally {
      child.kill();
      await server.close();
    }
  }, 240_000);
});
