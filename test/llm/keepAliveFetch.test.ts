import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConcurrencyLimiter, createProvider } from '../../src/llm/index.ts';
import { keepAliveFetch } from '../../src/llm/providers/keepAliveFetch.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';

const messages = [{ role: 'user' as const, content: 'Say ok.' }];

let server: FakeLlmServer | undefined;
let plain: Server | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  plain?.closeAllConnections();
  await new Promise((resolve) => (plain ? plain.close(resolve) : resolve(undefined)));
  plain = undefined;
  vi.restoreAllMocks();
});

/** A bare HTTP server for the cases the fake model server does not produce (redirects, compression, resets). */
async function startPlain(handler: Parameters<typeof createServer>[1]): Promise<string> {
  plain = createServer(handler);
  await new Promise<void>((resolve) => plain!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
}

describe('keep-alive fetch of the model clients', () => {
  it('carries non-streaming calls of both clients over one kept-alive connection, without the platform fetch', async () => {
    server = await startFakeLlmServer({ respond: () => '{"ok":true}' });
    const platformFetch = vi.spyOn(globalThis, 'fetch');
    const limiter = new ConcurrencyLimiter(1);
    const ollama = createProvider('ollama:m', { ollamaHost: server.url, limiter });
    const openai = createProvider(`openai-compat:${server.url}/v1#m`, { limiter });
    for (let i = 0; i < 3; i++) {
      expect((await ollama.chat({ messages })).text).toBe('{"ok":true}');
      expect((await openai.chat({ messages })).text).toBe('{"ok":true}');
    }
    expect(server.chatRequests()).toHaveLength(6);
    expect(server.connections).toBe(1);
    expect(platformFetch).not.toHaveBeenCalled();
  });

  it('sends the method, headers and body, and answers with status, headers and body', async () => {
    let seen: { method?: string; type?: string; length?: string; body: string } = { body: '' };
    const url = await startPlain((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        seen = { method: req.method, type: req.headers['content-type'], length: req.headers['content-length'], body };
        res.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-request-id': 'r1' }).end('{"é":1}');
      });
    });
    const headers = new Headers({ 'Content-Type': 'application/json' });
    const response = await keepAliveFetch(`${url}/x`, { method: 'post', headers, body: '{"q":"ü"}' });
    expect(seen).toEqual({ method: 'POST', type: 'application/json', length: String(Buffer.byteLength('{"q":"ü"}')), body: '{"q":"ü"}' });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Made');
    expect(response.headers.get('x-request-id')).toBe('r1');
    expect(await response.json()).toEqual({ é: 1 });
    // read once, as with fetch
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(/already been read/);
    // a reader that wants the body as a stream still gets it
    const again = await keepAliveFetch(`${url}/x`, { method: 'POST', body: '{}' });
    expect(Buffer.from(await new Response(again.body).arrayBuffer()).toString()).toBe('{"é":1}');
    expect(again.bodyUsed).toBe(true);
  });

  it('refuses a redirect the way fetch does with redirect "error"', async () => {
    const url = await startPlain((_req, res) => res.writeHead(302, { location: 'http://10.0.0.1/' }).end());
    const error = await keepAliveFetch(`${url}/api/chat`, { method: 'POST', body: '{}', redirect: 'error' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('fetch failed');
    expect(((error as TypeError).cause as Error).message).toBe('unexpected redirect');
  });

  it('rejects with the signal reason when aborted while waiting for the answer', async () => {
    server = await startFakeLlmServer({ latencyMs: 5_000, respond: () => '{}' });
    const controller = new AbortController();
    const pending = keepAliveFetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages }), signal: controller.signal });
    // abort once the server has the request, so the abort cuts a call in flight
    await vi.waitFor(() => expect(server!.chatRequests()).toHaveLength(1));
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
  });

  it('sends a request again once when the server had closed the reused idle connection', async () => {
    const perSocket = new WeakMap<object, number>();
    let requests = 0;
    const url = await startPlain((req, res) => {
      requests++;
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      // the second request on a socket finds it closed, as when a server's idle timeout fires just as it is reused
      if (n === 2) req.socket.destroy();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(`{"n":${requests}}`);
    });
    expect(await (await keepAliveFetch(`${url}/a`, { method: 'POST', body: '{}' })).json()).toEqual({ n: 1 });
    expect(await (await keepAliveFetch(`${url}/a`, { method: 'POST', body: '{}' })).json()).toEqual({ n: 3 });
    expect(requests).toBe(3);
  });

  it('reads a compressed answer and reports a refused connection as fetch does', async () => {
    const url = await startPlain((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync('{"ok":true}')));
    expect(await (await keepAliveFetch(`${url}/a`)).json()).toEqual({ ok: true });
    const refused = await keepAliveFetch('http://127.0.0.1:1/api/chat', { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect(((refused as TypeError).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });
});
