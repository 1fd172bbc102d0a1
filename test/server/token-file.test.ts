import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBenchApp } from '../../src/server/bench.ts';
import { APP_TOKEN_FILE } from '../../src/server/token-file.ts';

/** #35 item 4: the way into a running bench app for a tab opened without the printed address. */
describe('the bench app token file and the refusal that says how to get in', () => {
  it('keeps the token in <workspace>/app-token (user only) while it runs, names it in /api/health, removes it on close', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'token-file-'));
    const ui = mkdtempSync(join(tmpdir(), 'token-file-ui-'));
    writeFileSync(join(ui, 'index.html'), '<!doctype html><title>ui</title>');
    const app = await startBenchApp({ workspace, port: 0, uiDir: ui });
    const file = join(workspace, APP_TOKEN_FILE);
    try {
      expect(readFileSync(file, 'utf8')).toBe(`${app.token}\n`);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const health = (await (await fetch(`${app.url}/api/health`)).json()) as { tokenFile: string };
      expect(health.tokenFile).toBe(file);
      // Start without the token: the refusal says where the token is to be found
      const refused = await fetch(`${app.url}/api/campaign/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(refused.status).toBe(401);
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('token_required');
      expect(error.message).toBe('this request changes state and needs the bench app\'s token: open the app with the whole address `icabench serve` printed (it ends in #token=…), or send "Authorization: Bearer <token>"');
      const stale = await fetch(`${app.url}/api/campaign/start`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer old-token' }, body: '{}' });
      expect(((await stale.json()) as { error: { message: string } }).error.message).toContain('restarted with a new token? open the address it printed this time');
    } finally {
      await app.close();
    }
    expect(existsSync(file)).toBe(false);
  });
});
