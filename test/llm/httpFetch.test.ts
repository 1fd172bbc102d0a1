import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpFetch } from '../../src/llm/httpFetch.ts';
import { ConcurrencyLimiter, createProvider } from '../../src/llm/index.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';

let server: Server | undefined;
let fake: FakeLlmServer | undefined;
afterEach(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server!.close(() => resolve()));
  }
  await fake?.close();
  server = undefined;
  fake = undefined;
  vi.restoreAllMocks();
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  server = createServer(handler);
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

describe('httpFetch (keep-alive node:http fetch for the model clients)', () => {
  it('sends method, headers and body, reads status, headers and JSON, and keeps the connection alive', async () => {
    const seen: Array<{ method?: string; type?: string; length?: string; body: string }> = [];
    const { url, connections } = await serve((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method, type: req.headers['content-type'], length: req.headers['content-length'], body });
        res.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-extra': 'yes' });
        res.end(JSON.stringify({ echo: body.length }));
      });
    });
    for (let i = 0; i < 5; i++) {
      const response = await httpFetch(`${url}/api/chat`, { method: 'post', headers: new Headers({ 'Content-Type': 'application/json' }), body: '{"ü":1}' });
      expect(response.status).toBe(201);
      expect(response.statusText).toBe('Made');
      expect(response.ok).toBe(true);
      expect(response.url).toBe(`${url}/api/chat`);
      expect(response.headers.get('x-extra')).toBe('yes');
      expect(await response.json()).toEqual({ echo: 7 });
    }
    expect(seen[0]).toEqual({ method: 'POST', type: 'application/json', length: String(Buffer.byteLength('{"ü":1}')), body: '{"ü":1}' });
    // one request at a time: the same kept-alive connection every time
    expect(connections()).toBe(1);
  });

  it('streams the body as it arrives', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"n":1}\n');
      setTimeout(() => res.end('{"n":2}\n'), 50);
    });
    const response = await httpFetch(url);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('{"n":1}\n');
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += new TextDecoder().decode(part.value);
    expect(rest).toBe('{"n":2}\n');
  });

  it('fails like fetch: refused connection, cut body, abort before and during the answer', async () => {
    const refused = await httpFetch('http://127.0.0.1:1/').catch((error) => error);
    expect(refused).toBeInstanceOf(TypeError);
    expect(refused.message).toBe('fetch failed');
    expect(refused.cause.code).toBe('ECONNREFUSED');

    const { url } = await serve((req, res) => {
      if (req.url === '/cut') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
        res.write('partial');
        setTimeout(() => res.socket?.destroy(), 20);
      } else if (req.url === '/slow-body') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('a');
      }
      // '/hang': never answers
    });
    const cut = await httpFetch(`${url}/cut`);
    await expect(cut.text()).rejects.toThrow(/terminated/);

    const early = new AbortController();
    early.abort();
    await expect(httpFetch(`${url}/hang`, { signal: early.signal })).rejects.toMatchObject({ name: 'AbortError' });

    await expect(httpFetch(`${url}/hang`, { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: 'TimeoutError' });

    const late = new AbortController();
    const streaming = await httpFetch(`${url}/slow-body`, { signal: late.signal });
    const reading = streaming.text();
    late.abort();
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('never follows a redirect: an error unless redirect is manual', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(302, { location: 'http://10.0.0.1/' });
      res.end();
    });
    const error = await httpFetch(url, { redirect: 'error' }).catch((e) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(error.cause.message).toMatch(/redirect/);
    await expect(httpFetch(url)).rejects.toBeInstanceOf(TypeError);
    const manual = await httpFetch(url, { redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe('http://10.0.0.1/');
  });

  it('decodes a compressed answer and gives empty statuses no body', async () => {
    const { url } = await serve((req, res) => {
      if (req.url === '/gzip') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify({ zipped: true })));
      } else {
        res.writeHead(204);
        res.end();
      }
    });
    expect(await (await httpFetch(`${url}/gzip`)).json()).toEqual({ zipped: true });
    const empty = await httpFetch(`${url}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('hands what it does not handle to the global fetch', async () => {
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async () => new Response('from global'));
    const request = new Request('http://127.0.0.1:9/x');
    expect(await (await httpFetch(request)).text()).toBe('from global');
    expect(await (await httpFetch('http://127.0.0.1:9/y', { method: 'POST', body: new URLSearchParams({ a: '1' }) })).text()).toBe('from global');
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('is what the providers use by default: both clients share kept-alive connections', async () => {
    fake = await startFakeLlmServer({ respond: () => '{"ok":true}' });
    const limiter = new ConcurrencyLimiter(2);
    const ollama = createProvider('ollama:m', { ollamaHost: fake.url, limiter });
    const openai = createProvider(`openai-compat:${fake.url}/v1#m`, { limiter });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    for (let round = 0; round < 5; round++) await Promise.all([ollama.chat({ messages }), openai.chat({ messages })]);
    expect(fake.chatRequests()).toHaveLength(10);
    expect(fake.connections).toBeLessThanOrEqual(2);
    expect(limiter.slotUse.calls).toBe(10);
    expect(limiter.slotUse.heldMs).toBeGreaterThan(0);
  });
});

describe('fake model server latency', () => {
  it('answers no sooner than latencyMs after the whole request arrived', async () => {
    fake = await startFakeLlmServer({ latencyMs: 30, respond: () => '{}' });
    const provider = createProvider('ollama:m', { ollamaHost: fake.url, limiter: new ConcurrencyLimiter(4) });
    await Promise.all(Array.from({ length: 12 }, () => provider.chat({ messages: [{ role: 'user', content: 'x' }] })));
    const delays = fake.answerDelays();
    expect(delays.answers).toBe(12);
    expect(delays.minMs).toBeGreaterThanOrEqual(30);
    expect(delays.meanMs).toBeGreaterThanOrEqual(30);
  });
});
