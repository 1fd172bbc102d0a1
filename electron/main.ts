import { app } from 'electron';
import { join } from 'node:path';
import { startBenchApp } from '../src/server/bench.ts';
import { runShell } from './shell.ts';

// The desktop app keeps its workspace (results store, edited configs) in the user's data folder and
// reads the bench configs and the built UI from the app bundle; the server listens on a free
// loopback port that only this window is told about (with its token).
const appRoot = app.getAppPath();
runShell(() =>
  startBenchApp({
    workspace: join(app.getPath('userData'), 'workspace'),
    port: 0,
    configsDir: join(appRoot, 'bench-configs'),
    uiDir: join(appRoot, 'src', 'ui', 'dist'),
  }),
).catch((error: unknown) => {
  console.error(`icabench desktop: ${error instanceof Error ? error.message : String(error)}`);
  app.exit(1);
});
