import type { Command } from 'commander';
import { isLoopbackHost } from '../../server/auth.ts';
import { DEFAULT_PORT, DEFAULT_UI_DIR, startBenchApp } from '../../server/bench.ts';
import { ensureUiBuilt } from '../../server/ui-build.ts';
import { SUITES_DIR_ENV } from '../../suite/folder.ts';
import { APP_TOKEN_FILE } from '../../server/token-file.ts';
import { join, resolve } from 'node:path';
import { stopRequested } from '../signals.ts';

export function registerServeCommands(program: Command): void {
  program
    .command('serve')
    .description('start the bench server and web UI (loopback only unless --host is given) and print its URL')
    .option('--workspace <dir>', 'workspace holding the results store (icabench.db)', 'workspace')
    .option('--host <host>', 'interface to listen on; anything but the loopback requires the token on every request', '127.0.0.1')
    .option('--port <port>', 'port (0 = any free port)', String(DEFAULT_PORT))
    .option('--token <token>', 'use this token instead of a fresh random one (env ICABENCH_SERVER_TOKEN also works)')
    .option('--fleet <redis-url>', 'list this fleet\'s workers on the rig status screen (docs/fleet.md)')
    .option('--suites <dir>', `the suites folder Pin writes to and "Run pinned suite" reads (default bench-configs/suites/, env ${SUITES_DIR_ENV})`)
    .action(async (options: { workspace: string; host: string; port: string; token?: string; fleet?: string; suites?: string }) => {
      const port = Number(options.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: expected an integer 0–65535, got "${options.port}"`);
      // the first start after an install builds the UI (once), so the URL below opens the app
      await ensureUiBuilt(DEFAULT_UI_DIR, (line) => console.error(line));
      const app = await startBenchApp({ workspace: options.workspace, host: options.host, port, token: options.token ?? process.env.ICABENCH_SERVER_TOKEN, ...(options.fleet ? { fleet: options.fleet } : {}), suitesDir: options.suites, log: (line) => console.error(line) });
      const url = `${app.url}/#token=${encodeURIComponent(app.token)}`;
      console.log(`icabench bench app: ${url}`);
      console.log(`Open that whole address (the token after # lets the page start and follow campaigns); the token is also in ${join(resolve(options.workspace), APP_TOKEN_FILE)} while the server runs.`);
      if (!app.uiBuilt) console.log('The UI could not be built (see above): run `npm run build:ui`, then reload (the API works meanwhile).');
      if (!isLoopbackHost(options.host)) console.log(`Listening on ${options.host}: every request needs "Authorization: Bearer ${app.token}".`);
      console.log('Press Ctrl+C to stop.');
      await stopRequested('Stopping the bench app: a running campaign stops as interrupted (continue it with --resume), then the store closes');
      await app.close();
      console.error('bench app stopped');
    });
}
