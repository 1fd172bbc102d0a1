import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The CLI from compiled JavaScript, as a package install runs it: a folder laid out like the package (`files` in
 * package.json) with dist/ built by scripts/build.ts, no sources, and a node_modules without tsx. Every module the
 * CLI resolves is logged by a loader hook, so the test sees what each command loads.
 */
const REPO = resolve('.');
const SHIPPED_BESIDE_CODE = ['bench-configs', 'prompts', 'models', 'data', 'hardware'];

let install: string;

/** Runs `icabench ARGS` in the install; returns its result and the package's own modules it loaded (paths from the install). */
function icabench(args: string[]) {
  const log = join(install, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(log, '');
  const result = spawnSync(process.execPath, ['--import', pathToFileURL(join(install, 'log-loads.mjs')).href, join(install, 'bin', 'icabench.js'), ...args], {
    encoding: 'utf8',
    cwd: install,
    env: { ...process.env, LOADED_LOG: log, ICABENCH_DEBUG: '1' },
  });
  const urls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const own = urls.filter((url) => url.startsWith(pathToFileURL(install).href)).map((url) => url.slice(pathToFileURL(install).href.length + 1));
  return { ...result, urls, own };
}

beforeAll(() => {
  install = mkdtempSync(join(tmpdir(), 'icabench-install-'));
  const built = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts', '--out', join(install, 'dist')], { encoding: 'utf8' });
  expect(built.status, built.stderr).toBe(0);
  copyFileSync('package.json', join(install, 'package.json'));
  mkdirSync(join(install, 'bin'));
  for (const file of readdirSync('bin')) copyFileSync(join('bin', file), join(install, 'bin', file));
  for (const folder of SHIPPED_BESIDE_CODE) symlinkSync(join(REPO, folder), join(install, folder));
  // the dependencies, without tsx: a CLI that reached for it would fail to start
  mkdirSync(join(install, 'node_modules'));
  for (const entry of readdirSync('node_modules')) {
    if (entry !== 'tsx' && entry !== '.bin') symlinkSync(join(REPO, 'node_modules', entry), join(install, 'node_modules', entry));
  }
  writeFileSync(
    join(install, 'log-loads.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(install, 'log-hooks.mjs')).href)});\n`,
  );
  writeFileSync(
    join(install, 'log-hooks.mjs'),
    `import { appendFileSync } from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  const resolved = await next(specifier, context);\n  appendFileSync(process.env.LOADED_LOG, resolved.url + '\\n');\n  return resolved;\n}\n`,
  );
}, 240_000); // a full tsc build on a loaded 2-core machine

afterAll(() => rmSync(install, { recursive: true, force: true }));

describe('the compiled CLI (a package install: dist/, no sources, no tsx)', () => {
  it('prints its version loading no command module', () => {
    const result = icabench(['--version']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(JSON.parse(readFileSync('package.json', 'utf8')).version);
    expect(result.own.filter((path) => path.startsWith('dist/'))).toEqual(
      expect.arrayContaining(['dist/src/cli/main.js', 'dist/src/domain/package-files.js']),
    );
    expect(result.own.filter((path) => path.startsWith('dist/src/cli/commands/'))).toEqual([]);
    expect(result.urls.filter((url) => /\/(tsx|esbuild)\//.test(url))).toEqual([]);
  });

  it('runs a small campaign and reports on it from dist/, without tsx', () => {
    const config = join(install, 'tiny.yaml');
    const quickstart = readFileSync('bench-configs/quickstart.yaml', 'utf8');
    writeFileSync(config, quickstart.replace(/^conversations: \d+$/m, 'conversations: 3').replace(/^seeds: (.*)$/m, (_, seeds: string) => `seeds: ${join(REPO, 'bench-configs', seeds)}`));
    const ran = icabench(['run', config, '--workspace', join(install, 'ws'), '--out', join(install, 'out'), '--no-progress']);
    expect(ran.status, ran.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(install, 'out', 'summary.json'), 'utf8'));
    expect(summary.conversations).toBe(3);
    expect(ran.own.filter((path) => path.startsWith('src/') || path.startsWith('packages/'))).toEqual([]);
    expect(ran.own).toContain('dist/src/kinds/dialogue/run.js');
    expect(ran.urls.filter((url) => /\/(tsx|esbuild)\//.test(url))).toEqual([]);

    const reported = icabench(['report', summary.run.id, '--workspace', join(install, 'ws'), '--out', join(install, 'report')]);
    expect(reported.status, reported.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(install, 'report', 'summary.json'), 'utf8')).conversations).toBe(3);
    // the report reads the store: it loads no run loop, head unit, bridge, fleet or app server
    expect(reported.own.filter((path) => /^dist\/src\/(run\/runner|headunit\/reference\/reference-headunit|bridge\/server|fleet\/|server\/)/.test(path))).toEqual([]);
  });
});
