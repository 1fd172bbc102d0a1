#!/usr/bin/env node
// Runs the compiled JavaScript (dist/, `npm run build`) when it is a build of the current sources, as in a package
// install; otherwise the TypeScript sources through tsx's loader, so a checkout needs no build step and never runs
// a stale one (docs/architecture.md, "Compiled JavaScript").
import { pathToFileURL } from 'node:url';
import { freshBuildEntry } from './build-state.js';

const built = freshBuildEntry();
let main;
if (built) ({ main } = await import(pathToFileURL(built).href));
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
await main(process.argv);
