import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { onTokenRefused, tokenFromPasted, tokenRefused } from '../../src/ui/api.ts';
import { App } from '../../src/ui/App.tsx';
import { TokenHelp } from '../../src/ui/views/TokenHelp.tsx';

/** #35 item 4: a page opened without the server's token says how to get in, instead of a red dot and a failing Start. */

/** A browser tab as the app sees it: its address fragment and its session storage. */
function tab(hash: string, stored: Record<string, string>): void {
  vi.stubGlobal('window', { location: { hash, pathname: '/' }, addEventListener: () => undefined, removeEventListener: () => undefined });
  vi.stubGlobal('sessionStorage', { getItem: (key: string) => stored[key] ?? null, setItem: (key: string, value: string) => (stored[key] = value) });
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the token help page', () => {
  it('the app opened without a token shows the help, not the screens (also the Demo screen)', () => {
    for (const hash of ['#/rig', '#/demo', '#/setup']) {
      tab(hash, {});
      const html = renderToStaticMarkup(<App />);
      expect(html, hash).toContain('data-testid="token-help"');
      expect(html, hash).toContain('Open the bench app with its token');
      expect(html, hash).not.toContain('Rig status');
    }
  });

  it('the app opened with a token shows its screens', () => {
    tab('#/rig', { 'icabench.token': 'abcdefghijklmnopqrstuvwxyz' });
    const html = renderToStaticMarkup(<App />);
    expect(html).not.toContain('data-testid="token-help"');
    expect(html).toContain('Rig status');
  });

  it('says why, names the printed address, the token file and the desktop app, and offers a field to paste either', () => {
    const html = renderToStaticMarkup(<TokenHelp refusal="token_required" tokenFile="/home/tech/bench/workspace/app-token" />);
    expect(html).toContain('This page was opened without the bench app’s token');
    expect(html).toContain('<code>npm run serve</code>');
    expect(html).toContain('icabench bench app: http://127.0.0.1:7860/#token=…');
    expect(html).toContain('<code data-testid="token-file">/home/tech/bench/workspace/app-token</code>');
    expect(html).toContain('<code>npm run app</code>');
    expect(html).toMatch(/<input[^>]*data-testid="token-input"/);
    expect(html).toContain('Open the app</button>');
  });

  it('a stale token (the server restarted) says so; without the server naming its file, the default place is named', () => {
    const html = renderToStaticMarkup(<TokenHelp refusal="token_invalid" tokenFile={null} />);
    expect(html).toContain('is not this server’s (the server was restarted and made a new one)');
    expect(html).toContain('<code>workspace/app-token</code> by default');
    expect(html).not.toContain('data-testid="token-file"');
  });

  it('takes the token out of the pasted address, or the token alone; refuses anything else', () => {
    expect(tokenFromPasted('  http://127.0.0.1:7860/#token=AbC_d-123456789012345  ')).toBe('AbC_d-123456789012345');
    expect(tokenFromPasted('icabench bench app: http://127.0.0.1:7860/#/runs&token=x%2Dy')).toBe('x-y');
    expect(tokenFromPasted('AbC_d-123456789012345')).toBe('AbC_d-123456789012345');
    expect(tokenFromPasted('http://127.0.0.1:7860/')).toBeNull();
    expect(tokenFromPasted('short')).toBeNull();
  });

  it('a refused request or live feed (token_required, token_invalid) reaches the app; other errors do not', () => {
    const seen: string[] = [];
    const stop = onTokenRefused((refusal) => seen.push(refusal));
    tokenRefused('token_invalid');
    tokenRefused('xhr poll error');
    tokenRefused('token_required');
    stop();
    tokenRefused('token_invalid');
    expect(seen).toEqual(['token_invalid', 'token_required']);
  });
});
