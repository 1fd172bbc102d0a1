import { beforeEach, describe, expect, it, vi } from 'vitest';

/** A stand-in for the electron module: records what the shell asks of it. */
const electron = vi.hoisted(() => {
  type Listener = (...args: any[]) => void;
  const state = {
    windows: [] as any[],
    ipcHandlers: new Map<string, (event: unknown, ...args: unknown[]) => unknown>(),
    appListeners: new Map<string, Listener>(),
    headersListener: null as null | ((details: any, callback: (r: any) => void) => void),
    permissionHandler: null as null | ((wc: unknown, permission: string, callback: (granted: boolean) => void) => void),
    exposed: new Map<string, any>(),
    invoke: vi.fn(),
  };
  class BrowserWindow {
    readonly options: any;
    loadedUrl: string | null = null;
    openHandler: ((details: { url: string }) => { action: string }) | null = null;
    readonly webContentsListeners = new Map<string, Listener>();
    readonly webContents = {
      setWindowOpenHandler: (handler: any) => (this.openHandler = handler),
      on: (event: string, listener: Listener) => this.webContentsListeners.set(event, listener),
    };
    constructor(options: any) {
      this.options = options;
      state.windows.push(this);
    }
    loadURL(url: string) {
      this.loadedUrl = url;
      return Promise.resolve();
    }
  }
  const module = {
    app: {
      whenReady: vi.fn(() => Promise.resolve()),
      getVersion: () => '0.1.0',
      on: (event: string, listener: Listener) => state.appListeners.set(event, listener),
      quit: vi.fn(),
    },
    BrowserWindow,
    ipcMain: { handle: (channel: string, handler: any) => state.ipcHandlers.set(channel, handler) },
    session: {
      defaultSession: {
        webRequest: { onHeadersReceived: (listener: any) => (state.headersListener = listener) },
        setPermissionRequestHandler: (handler: any) => (state.permissionHandler = handler),
      },
    },
    shell: { openExternal: vi.fn(() => Promise.resolve()), openPath: vi.fn(() => Promise.resolve('')) },
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => state.exposed.set(key, api) },
    ipcRenderer: { invoke: state.invoke },
  };
  return { state, module };
});

vi.mock('electron', () => ({ ...electron.module, default: electron.module }));

const { createMainWindow, hardenSession, registerIpcHandlers, runShell, WEB_PREFERENCES } = await import('../../electron/shell.ts');
const { IPC_CHANNELS } = await import('../../electron/ipc.ts');
const { CONTENT_SECURITY_POLICY } = await import('../../src/server/csp.ts');

const server = { url: 'http://127.0.0.1:45678', token: 'tok en/+', workspace: '/tmp/ws', close: vi.fn(() => Promise.resolve()) };
const fromUi = { senderFrame: { url: 'http://127.0.0.1:45678/#/runs' } };
const fromElsewhere = { senderFrame: { url: 'https://evil.example/' } };

beforeEach(() => {
  electron.state.windows.length = 0;
  electron.state.ipcHandlers.clear();
  electron.state.appListeners.clear();
  electron.state.invoke.mockReset();
  electron.module.shell.openExternal.mockClear();
  server.close.mockClear();
});

describe('main window', () => {
  it('isolates the renderer: context isolation, sandbox, no node integration, bundled preload', () => {
    const window = createMainWindow(server) as any;
    const prefs = window.options.webPreferences;
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, nodeIntegrationInWorker: false, webSecurity: true, webviewTag: false });
    expect(prefs.preload).toMatch(/preload\.cjs$/);
    expect(WEB_PREFERENCES.nodeIntegration).toBe(false);
  });

  it('loads the bench server with the token in the fragment', () => {
    const window = createMainWindow(server) as any;
    expect(window.loadedUrl).toBe('http://127.0.0.1:45678/#token=tok%20en%2F%2B');
  });

  it('opens no new windows and sends only http(s) links to the system browser', () => {
    const window = createMainWindow(server) as any;
    expect(window.openHandler({ url: 'https://docs.example/kappa' })).toEqual({ action: 'deny' });
    expect(electron.module.shell.openExternal).toHaveBeenCalledWith('https://docs.example/kappa');
    electron.module.shell.openExternal.mockClear();
    expect(window.openHandler({ url: 'file:///etc/passwd' })).toEqual({ action: 'deny' });
    expect(electron.module.shell.openExternal).not.toHaveBeenCalled();
  });

  it('keeps navigation on the bench server', () => {
    const window = createMainWindow(server) as any;
    const navigate = window.webContentsListeners.get('will-navigate');
    const away = { preventDefault: vi.fn() };
    navigate(away, 'https://evil.example/');
    expect(away.preventDefault).toHaveBeenCalled();
    const inside = { preventDefault: vi.fn() };
    navigate(inside, 'http://127.0.0.1:45678/#/live');
    expect(inside.preventDefault).not.toHaveBeenCalled();
  });
});

describe('session hardening', () => {
  it('puts the strict CSP on every response and denies every permission', () => {
    hardenSession();
    let headers: any = null;
    electron.state.headersListener!({ responseHeaders: { 'Content-Type': ['text/html'] } }, (r) => (headers = r.responseHeaders));
    expect(headers['Content-Security-Policy']).toEqual([CONTENT_SECURITY_POLICY]);
    expect(headers['Content-Type']).toEqual(['text/html']);
    let granted: boolean | null = null;
    electron.state.permissionHandler!({}, 'media', (g) => (granted = g));
    expect(granted).toBe(false);
  });

  it('allows no inline script, eval, plugins or framing', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
    expect(CONTENT_SECURITY_POLICY).toContain("object-src 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
  });
});

describe('IPC', () => {
  it('registers exactly the three channels of the contract', () => {
    registerIpcHandlers(server);
    expect([...electron.state.ipcHandlers.keys()].sort()).toEqual(Object.values(IPC_CHANNELS).sort());
  });

  it('answers the bench UI', async () => {
    registerIpcHandlers(server);
    const info = await electron.state.ipcHandlers.get(IPC_CHANNELS.appInfo)!(fromUi);
    expect(info).toEqual({ version: '0.1.0', platform: process.platform, serverUrl: 'http://127.0.0.1:45678', workspace: '/tmp/ws' });
    await electron.state.ipcHandlers.get(IPC_CHANNELS.openExternal)!(fromUi, 'https://docs.example/');
    expect(electron.module.shell.openExternal).toHaveBeenCalledWith('https://docs.example/');
  });

  it('refuses a sender that is not the bench UI', async () => {
    registerIpcHandlers(server);
    await expect(electron.state.ipcHandlers.get(IPC_CHANNELS.appInfo)!(fromElsewhere)).rejects.toThrow(/sender is not the bench UI/);
    await expect(electron.state.ipcHandlers.get(IPC_CHANNELS.openExternal)!({ senderFrame: null }, 'https://x.example/')).rejects.toThrow(/sender/);
    expect(electron.module.shell.openExternal).not.toHaveBeenCalled();
  });

  it('validates every argument before acting', async () => {
    registerIpcHandlers(server);
    const open = electron.state.ipcHandlers.get(IPC_CHANNELS.openExternal)!;
    await expect(open(fromUi, 'file:///etc/passwd')).rejects.toThrow(/http\(s\) URL/);
    await expect(open(fromUi, 'javascript:alert(1)')).rejects.toThrow(/invalid arguments/);
    await expect(open(fromUi, 'https://a.example/', 'extra')).rejects.toThrow(/invalid arguments/);
    await expect(open(fromUi, { url: 'https://a.example/' })).rejects.toThrow(/invalid arguments/);
    await expect(electron.state.ipcHandlers.get(IPC_CHANNELS.revealWorkspace)!(fromUi, '/etc')).rejects.toThrow(/invalid arguments/);
    expect(electron.module.shell.openExternal).not.toHaveBeenCalled();
    expect(electron.module.shell.openPath).not.toHaveBeenCalled();
  });
});

describe('preload', () => {
  it('exposes exactly three functions and checks arguments and replies', async () => {
    await import('../../electron/preload.ts');
    const api = electron.state.exposed.get('icabench');
    expect(Object.keys(api).sort()).toEqual(['appInfo', 'openExternal', 'revealWorkspace']);
    expect(Object.values(api).every((f) => typeof f === 'function')).toBe(true);

    await expect(api.openExternal('javascript:alert(1)')).rejects.toThrow(/invalid arguments/);
    expect(electron.state.invoke).not.toHaveBeenCalled();

    electron.state.invoke.mockResolvedValueOnce({ ok: true });
    await expect(api.openExternal('https://docs.example/')).resolves.toEqual({ ok: true });
    expect(electron.state.invoke).toHaveBeenCalledWith(IPC_CHANNELS.openExternal, 'https://docs.example/');

    electron.state.invoke.mockResolvedValueOnce({ version: 1 });
    await expect(api.appInfo()).rejects.toThrow(/unexpected reply/);
  });
});

describe('runShell', () => {
  it('starts the server once ready, opens the window on it, and closes the server on quit', async () => {
    const started = await runShell(async () => server);
    expect(started).toBe(server);
    expect(electron.state.windows).toHaveLength(1);
    expect(electron.state.windows[0].loadedUrl).toMatch(/^http:\/\/127\.0\.0\.1:45678\/#token=/);
    expect(electron.state.ipcHandlers.size).toBe(3);
    electron.state.appListeners.get('before-quit')!();
    expect(server.close).toHaveBeenCalledTimes(1);
  });
});
