/**
 * `npm run build [-- --out DIR]` (also `prepare`, which npm runs on `npm ci`/`npm install` and before `npm pack`): the CLI's compiled JavaScript in dist/, which bin/icabench.js runs
 * instead of the TypeScript sources once it is at least as new as every source (docs/architecture.md, "Compiled
 * JavaScript"). tsc compiles src/ and the bridge SDK it imports (tsconfig.build.json: same layout under dist/, import
 * extensions rewritten to .js); the files beside the sources that are not TypeScript are copied; dist/BUILD is
 * written last, so an interrupted build leaves no stamp and the CLI keeps running the sources.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_STAMP, BUILD_SOURCES, isBuildSource } from '../bin/build-state.js';

const root = fileURLToPath(new URL('..', import.meta.url));
// --out: another folder than dist/ (the compiled-CLI test builds a package install of its own)
const outAt = process.argv.indexOf('--out');
const dist = outAt >= 0 ? resolve(process.argv[outAt + 1]) : join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', dist], { stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error(`build: tsc exited with ${compiled.status ?? compiled.signal}; dist/ has no ${BUILD_STAMP}, so the CLI keeps running the sources`);
  process.exit(1);
}

let copied = 0;
for (const folder of BUILD_SOURCES) {
  for (const entry of readdirSync(join(root, folder), { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!entry.isFile() || !isBuildSource(relative(root, path)) || path.endsWith('.ts')) continue;
    cpSync(path, join(dist, relative(root, path)));
    copied++;
  }
}
writeFileSync(join(dist, BUILD_STAMP), `${JSON.stringify({ builtAt: new Date().toISOString(), node: process.version })}\n`);
console.error(`build: ${dist} compiled (${copied} other file${copied === 1 ? '' : 's'} copied)`);
