import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConcurrencyLimiter, createProvider, FileRequestCache, LlmSettingsSchema, providerOptionsFrom } from '../../src/llm/index.ts';
import { startFakeLlmServer } from '../helpers/fakeLlmServer.ts';

describe('llm settings', () => {
  it('defaults to loopback only, no cache, temperature 0, two retries', () => {
    const settings = LlmSettingsSchema.parse({});
    expect(settings).toMatchObject({ allowedHosts: [], temperature: 0, maxRetries: 2, stream: false, prices: {} });
    expect(providerOptionsFrom(settings).cache).toBeUndefined();
    expect(() => LlmSettingsSchema.parse({ maxConcurrent: 0 })).toThrow(/maxConcurrent/);
  });

  it('a cacheDir turns on the file cache, which survives a new provider and keys on the repeat index', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-cache-'));
    const server = await startFakeLlmServer({ respond: () => '{"ok": true}' });
    try {
      const options = providerOptionsFrom(LlmSettingsSchema.parse({ cacheDir: dir, ollamaHost: server.url }));
      expect(options.cache).toBeInstanceOf(FileRequestCache);
      const request = { messages: [{ role: 'user' as const, content: 'x' }], temperature: 0, repeat: 0 };
      await createProvider('ollama:m', { ...options, limiter: new ConcurrencyLimiter(1) }).chat(request);
      const again = await createProvider('ollama:m', { ...options, limiter: new ConcurrencyLimiter(1) }).chat(request);
      expect(again).toMatchObject({ text: '{"ok": true}', cached: true });
      await createProvider('ollama:m', { ...options, limiter: new ConcurrencyLimiter(1) }).chat({ ...request, repeat: 1 });
      expect(server.chatRequests()).toHaveLength(2);
      expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(2);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checks keepAlive as Ollama reads it, and brings both cache hints to the servers', async () => {
    expect(LlmSettingsSchema.parse({}).keepAlive).toBe('30m');
    for (const good of ['1h30m', '-1m', '0', '90s', 3600, -1]) expect(LlmSettingsSchema.parse({ keepAlive: good }).keepAlive).toBe(good);
    for (const bad of ['30 minutes', '300', 'forever']) expect(() => LlmSettingsSchema.parse({ keepAlive: bad })).toThrow(/Go duration/);
    const server = await startFakeLlmServer({ respond: () => '{}' });
    try {
      const options = providerOptionsFrom(LlmSettingsSchema.parse({ ollamaHost: server.url, keepAlive: '2h', openaiCachePrompt: true }));
      const messages = [{ role: 'user' as const, content: 'x' }];
      await createProvider('ollama:m', { ...options, limiter: new ConcurrencyLimiter(1) }).chat({ messages });
      await createProvider(`openai-compat:${server.url}/v1#m`, { ...options, limiter: new ConcurrencyLimiter(1) }).chat({ messages });
      const [ollama, openai] = server.chatRequests();
      expect(ollama.body.keep_alive).toBe('2h');
      expect(openai.body.cache_prompt).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("passes a caller's abort through instead of calling it a timeout", async () => {
    const server = await startFakeLlmServer({ replies: [{ content: '{}', delayMs: 2000 }] });
    try {
      const provider = createProvider('ollama:m', { ollamaHost: server.url, limiter: new ConcurrencyLimiter(1) });
      const controller = new AbortController();
      const pending = provider.chat({ messages: [{ role: 'user', content: 'x' }], signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      const error = await pending.catch((e: unknown) => e);
      expect((error as Error).name).toBe('AbortError');
    } finally {
      await server.close();
    }
  });
});
