import { useState } from 'react';
import { adoptToken, tokenFromPasted, type TokenRefusal } from '../api.ts';
import { useApi } from '../hooks.ts';

const WHY: Record<TokenRefusal, string> = {
  token_required: 'This page was opened without the bench app’s token, so it cannot start, stop or follow a campaign.',
  token_invalid: 'This page holds a token that is not this server’s (the server was restarted and made a new one).',
};

/**
 * What a page opened without the server's token shows (#35 item 4): how to open the app with it — the address
 * `icabench serve` printed, the token file in the workspace, or pasting either here — instead of a live feed that
 * waits forever and a Start that fails.
 */
export function TokenHelpPage({ refusal }: { refusal: TokenRefusal }) {
  // reading from the loopback needs no token: the server names its token file (null when it keeps none, or from another machine)
  const health = useApi<{ tokenFile: string | null }>('/api/health');
  return <TokenHelp refusal={refusal} tokenFile={health.data?.tokenFile ?? null} />;
}

/** The help itself; `tokenFile`: where the server keeps its token (GET /api/health), null when unknown here. */
export function TokenHelp({ refusal, tokenFile }: { refusal: TokenRefusal; tokenFile: string | null }) {
  const [pasted, setPasted] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const open = (event: { preventDefault(): void }) => {
    event.preventDefault();
    const found = tokenFromPasted(pasted);
    if (!found) {
      setProblem('That is neither the address `icabench serve` printed (it ends in #token=…) nor a token.');
      return;
    }
    adoptToken(found);
    window.location.hash = '#/';
    window.location.reload();
  };
  return (
    <div className="app token-help" data-testid="token-help">
      <header className="topbar">
        <span className="brand">icabench</span>
      </header>
      <main>
        <h1>Open the bench app with its token</h1>
        <p>{WHY[refusal]} Each start of the server makes a new token; the address it prints carries it.</p>
        <ol>
          <li>
            Open the address <code>npm run serve</code> (<code>icabench serve</code>) printed in its terminal, the whole of it:{' '}
            <code>icabench bench app: http://127.0.0.1:7860/#token=…</code>. The desktop app (<code>npm run app</code>) opens its window with the token already.
          </li>
          <li>
            Lost it?{' '}
            {tokenFile ? (
              <>
                The running server keeps its token in <code data-testid="token-file">{tokenFile}</code> (readable only by the user who started it).
              </>
            ) : (
              <>
                The running server keeps its token in the file <code>app-token</code> of its workspace folder on the machine it runs on (<code>workspace/app-token</code> by default).
              </>
            )}{' '}
            Paste the address or the token here:
          </li>
        </ol>
        <form onSubmit={open} className="card">
          <input data-testid="token-input" value={pasted} onChange={(e) => setPasted(e.target.value)} placeholder="http://127.0.0.1:7860/#token=… or the token" size={60} aria-label="address or token" />{' '}
          <button type="submit">Open the app</button>
          {problem && <div className="error-box">{problem}</div>}
        </form>
        <p className="muted">No server running? Start one with <code>npm run serve</code> and open the address it prints.</p>
      </main>
    </div>
  );
}
