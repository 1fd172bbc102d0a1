import { app, BrowserWindow, ipcMain, session, shell, type IpcMainInvokeEvent } from 'electron';
import { fileURLToPath } from 'node:url';
import { CONTENT_SECURITY_POLICY } from '../src/server/csp.ts';
import { IPC_CHANNELS, IPC_CONTRACT, type AppInfo, type IpcChannel, type Ok } from './ipc.ts';

/** What the shell needs from the bench server it hosts. */
export interface HostedServer {
  /** origin the UI is served from, e.g. http://127.0.0.1:7860 */
  url: string;
  token: string;
  workspace: string;
  close(): Promise<void>;
}

export const WEB_PREFERENCES = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  nodeIntegrationInSubFrames: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  webviewTag: false,
  spellcheck: false,
} as const;

export function preloadPath(): string {
  // the packaged shell runs the bundled preload next to the bundled main (electron/build.ts)
  return fileURLToPath(new URL('./preload.cjs', import.meta.url));
}

/** Only the bench server's own pages may talk to the shell. */
export function isFromServer(event: Pick<IpcMainInvokeEvent, 'senderFrame'>, serverOrigin: string): boolean {
  const url = event.senderFrame?.url;
  if (!url || !URL.canParse(url)) return false;
  return new URL(url).origin === serverOrigin;
}

/** Registers one handler per channel; each checks the sender and validates the arguments before acting. */
export function registerIpcHandlers(server: HostedServer): void {
  const origin = new URL(server.url).origin;
  const handlers: Record<IpcChannel, (args: unknown[]) => Promise<AppInfo | Ok>> = {
    [IPC_CHANNELS.appInfo]: async () => ({
      version: app.getVersion(),
      platform: process.platform,
      serverUrl: origin,
      workspace: server.workspace,
    }),
    [IPC_CHANNELS.openExternal]: async (args) => {
      const [url] = args as [string];
      await shell.openExternal(url);
      return { ok: true };
    },
    [IPC_CHANNELS.revealWorkspace]: async () => {
      const failure = await shell.openPath(server.workspace);
      return failure ? { ok: false, error: failure } : { ok: true };
    },
  };
  for (const channel of Object.values(IPC_CHANNELS)) {
    ipcMain.handle(channel, async (event, ...args: unknown[]) => {
      if (!isFromServer(event, origin)) throw new Error(`${channel}: refused, sender is not the bench UI`);
      const checked = IPC_CONTRACT[channel].args.safeParse(args);
      if (!checked.success) throw new Error(`${channel}: invalid arguments: ${checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
      return handlers[channel](checked.data as unknown[]);
    });
  }
}

/** Strict CSP on every response, no permission prompts (the UI needs none). */
export function hardenSession(): void {
  const ses = session.defaultSession;
  ses.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } });
  });
  ses.setPermissionRequestHandler((_webContents, _permission, callback) => callback(false));
}

export function createMainWindow(server: HostedServer): BrowserWindow {
  const origin = new URL(server.url).origin;
  const window = new BrowserWindow({
    width: 1400,
    height: 900,
    title: 'icabench',
    webPreferences: { ...WEB_PREFERENCES, preload: preloadPath() },
  });
  // links leave the app only through the system browser, and only http(s)
  window.webContents.setWindowOpenHandler(({ url }) => {
    if (/^https?:\/\//i.test(url) && new URL(url).origin !== origin) void shell.openExternal(url);
    return { action: 'deny' };
  });
  window.webContents.on('will-navigate', (event, url) => {
    if (!URL.canParse(url) || new URL(url).origin !== origin) event.preventDefault();
  });
  window.webContents.on('will-attach-webview', (event) => event.preventDefault());
  // the token travels in the fragment: it never reaches server logs or Referer headers
  void window.loadURL(`${origin}/#token=${encodeURIComponent(server.token)}`);
  return window;
}

/** The shell's whole life: start the bench server, open the UI, close the server on quit. */
export async function runShell(startServer: () => Promise<HostedServer>): Promise<HostedServer> {
  await app.whenReady();
  hardenSession();
  const server = await startServer();
  registerIpcHandlers(server);
  createMainWindow(server);
  app.on('window-all-closed', () => app.quit());
  app.on('before-quit', () => void server.close());
  return server;
}
