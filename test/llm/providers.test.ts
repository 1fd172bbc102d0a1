import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ConcurrencyLimiter, createProvider, jsonSchemaFor, LlmError, MemoryRequestCache, parseModelRef, resolveOllamaHost } from '../../src/llm/index.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';

const Answer = z.object({ ok: z.boolean(), note: z.string() });
const schema = jsonSchemaFor(Answer);
const messages = [
  { role: 'system' as const, content: 'You answer in JSON.' },
  { role: 'user' as const, content: 'Say ok.' },
];

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

function fresh() {
  // a private limiter per test so shared per-endpoint limiters never leak between tests
  return { limiter: new ConcurrencyLimiter(8) };
}

describe('parseModelRef', () => {
  it('accepts the three forms', () => {
    expect(parseModelRef('ollama:qwen2.5:14b')).toEqual({ provider: 'ollama', model: 'qwen2.5:14b' });
    expect(parseModelRef('openai-compat:http://127.0.0.1:8080/v1#qwen')).toEqual({ provider: 'openai-compat', baseUrl: 'http://127.0.0.1:8080/v1', model: 'qwen' });
    expect(parseModelRef('gguf:models/judge.gguf')).toEqual({ provider: 'gguf', path: 'models/judge.gguf' });
  });
  it('explains the accepted forms on error', () => {
    expect(() => parseModelRef('llama:foo')).toThrow(/unknown provider "llama"[\s\S]*ollama:<tag>[\s\S]*openai-compat:<base-url>#<model>[\s\S]*gguf:/);
    expect(() => parseModelRef('openai-compat:http://127.0.0.1:8080/v1')).toThrow(/needs "#<model>"/);
    expect(() => parseModelRef('openai-compat:ftp://x#m')).toThrow(/http:\/\/ or https:\/\//);
    expect(() => parseModelRef('gguf:models/judge.bin')).toThrow(/ending in \.gguf/);
    expect(() => parseModelRef('qwen2.5')).toThrow(/missing the "provider:" prefix/);
  });
});

describe('ollama provider (real ollama client)', () => {
  it('sends model, JSON-schema format, temperature, seed and num_predict, and reads usage', async () => {
    server = await startFakeLlmServer({ replies: ['{"ok":true,"note":"fine"}'] });
    const provider = createProvider('ollama:qwen2.5:14b', { ollamaHost: server.url, keepAlive: '30m', ...fresh() });
    const response = await provider.chat({ messages, jsonSchema: schema, temperature: 0, seed: 7, maxTokens: 256 });
    expect(response.text).toBe('{"ok":true,"note":"fine"}');
    expect(response.completionTokens).toBeGreaterThan(0);
    expect(response.computeMs).toBe(42);
    expect(response.truncated).toBe(false);
    const [sent] = server.chatRequests();
    expect(sent.path).toBe('/api/chat');
    expect(sent.body).toMatchObject({ model: 'qwen2.5:14b', stream: false, keep_alive: '30m', format: schema, options: { temperature: 0, seed: 7, num_predict: 256 } });
    expect(sent.body.messages).toEqual(messages);
  });

  it('asks Ollama to keep the model loaded for 30 minutes when no keepAlive is configured', async () => {
    server = await startFakeLlmServer({ replies: ['{}'] });
    await createProvider('ollama:m', { ollamaHost: server.url, ...fresh() }).chat({ messages });
    expect(server.chatRequests()[0].body.keep_alive).toBe('30m');
  });

  it('assembles a streamed NDJSON answer and reports the token limit', async () => {
    server = await startFakeLlmServer({ replies: [{ content: '{"ok":true,"note":"streamed"}', finishReason: 'length', promptTokens: 11, completionTokens: 5 }] });
    const provider = createProvider('ollama:qwen2.5:14b', { ollamaHost: server.url, stream: true, ...fresh() });
    const response = await provider.chat({ messages, jsonSchema: schema });
    expect(response).toMatchObject({ text: '{"ok":true,"note":"streamed"}', promptTokens: 11, completionTokens: 5, truncated: true });
    expect(server.chatRequests()[0].body.stream).toBe(true);
  });

  it('classifies a cut stream, HTTP errors and timeouts', async () => {
    server = await startFakeLlmServer({
      replies: [{ content: '{"ok":true,"note":"x"}', cutStream: true }, { status: 500, error: 'CUDA out of memory' }, { status: 404, error: 'model "nope" not found' }, { content: '{}', delayMs: 3000 }],
    });
    const streaming = createProvider('ollama:qwen2.5:14b', { ollamaHost: server.url, stream: true, ...fresh() });
    await expect(streaming.chat({ messages })).rejects.toMatchObject({ kind: 'server_error' });
    const plain = createProvider('ollama:nope', { ollamaHost: server.url, timeoutMs: 300, ...fresh() });
    await expect(plain.chat({ messages })).rejects.toMatchObject({ kind: 'server_error', message: expect.stringMatching(/HTTP 500.*CUDA out of memory/) });
    await expect(plain.chat({ messages })).rejects.toMatchObject({ kind: 'server_error', message: expect.stringMatching(/ollama pull nope/) });
    await expect(plain.chat({ messages })).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('reports an unreachable server with the command that starts it', async () => {
    server = await startFakeLlmServer();
    const url = server.url;
    await server.close();
    server = undefined;
    const provider = createProvider('ollama:qwen2.5:14b', { ollamaHost: url, ...fresh() });
    await expect(provider.chat({ messages })).rejects.toMatchObject({ kind: 'server_error', message: expect.stringMatching(/ollama serve/) });
  });

  it('finds the server through OLLAMA_HOST the way Ollama tools do', async () => {
    server = await startFakeLlmServer({ replies: ['{"ok":true,"note":"env"}'] });
    const port = new URL(server.url).port;
    vi.stubEnv('OLLAMA_HOST', `127.0.0.1:${port}`);
    const provider = createProvider('ollama:qwen2.5:14b', fresh());
    expect((await provider.chat({ messages })).text).toContain('env');
    expect(resolveOllamaHost(undefined)).toBe(`http://127.0.0.1:${port}`);
    vi.stubEnv('OLLAMA_HOST', '');
    expect(resolveOllamaHost(undefined)).toBe('http://127.0.0.1:11434');
    expect(resolveOllamaHost('0.0.0.0')).toBe('http://127.0.0.1:11434');
    expect(resolveOllamaHost(':9999')).toBe('http://127.0.0.1:9999');
  });
});

describe('openai-compat provider (real openai client)', () => {
  it('sends response_format json_schema, temperature 0 and seed', async () => {
    server = await startFakeLlmServer({ replies: [{ content: '{"ok":true,"note":"oa"}', promptTokens: 20, completionTokens: 6 }] });
    const provider = createProvider(`openai-compat:${server.url}/v1#local-model`, fresh());
    const response = await provider.chat({ messages, jsonSchema: schema, schemaName: 'answer', temperature: 0, seed: 3, maxTokens: 100 });
    expect(response).toMatchObject({ text: '{"ok":true,"note":"oa"}', promptTokens: 20, completionTokens: 6, truncated: false });
    const [sent] = server.chatRequests();
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({
      model: 'local-model',
      temperature: 0,
      seed: 3,
      max_tokens: 100,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
  });

  it("sends llama.cpp's cache_prompt only when asked (other servers may refuse unknown fields)", async () => {
    server = await startFakeLlmServer({ respond: () => '{}' });
    await createProvider(`openai-compat:${server.url}/v1#m`, fresh()).chat({ messages });
    await createProvider(`openai-compat:${server.url}/v1#m`, { openaiCachePrompt: true, ...fresh() }).chat({ messages });
    await createProvider(`openai-compat:${server.url}/v1#m`, { openaiCachePrompt: true, stream: true, ...fresh() }).chat({ messages });
    const [plain, hinted, streamed] = server.chatRequests();
    expect(plain.body).not.toHaveProperty('cache_prompt');
    expect(hinted.body.cache_prompt).toBe(true);
    expect(streamed.body).toMatchObject({ cache_prompt: true, stream: true });
  });

  it('streams SSE with usage and detects the token limit', async () => {
    server = await startFakeLlmServer({ replies: [{ content: '{"ok":false,"note":"cut', finishReason: 'length', promptTokens: 9, completionTokens: 4 }] });
    const provider = createProvider(`openai-compat:${server.url}/v1#m`, { stream: true, ...fresh() });
    const response = await provider.chat({ messages, jsonSchema: schema });
    expect(response).toMatchObject({ text: '{"ok":false,"note":"cut', promptTokens: 9, completionTokens: 4, truncated: true });
    expect(server.chatRequests()[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('can ask through a forced tool call and read the arguments, streamed or not', async () => {
    server = await startFakeLlmServer({ replies: ['{"ok":true,"note":"tool"}', '{"ok":true,"note":"tool-stream"}'] });
    const plain = createProvider(`openai-compat:${server.url}/v1#m`, { openaiStructuredMode: 'tool', ...fresh() });
    expect((await plain.chat({ messages, jsonSchema: schema, schemaName: 'answer' })).text).toBe('{"ok":true,"note":"tool"}');
    const streamed = createProvider(`openai-compat:${server.url}/v1#m`, { openaiStructuredMode: 'tool', stream: true, ...fresh() });
    expect((await streamed.chat({ messages, jsonSchema: schema, schemaName: 'answer' })).text).toBe('{"ok":true,"note":"tool-stream"}');
    const sent = server.chatRequests()[0].body;
    expect(sent.tools[0].function).toMatchObject({ name: 'answer', parameters: schema });
    expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'answer' } });
    expect(sent.response_format).toBeUndefined();
  });

  it('classifies HTTP errors, cut streams and timeouts', async () => {
    server = await startFakeLlmServer({ replies: [{ status: 503, error: 'loading model' }, { content: '{"ok":true,"note":"x"}', cutStream: true }, { content: '{}', delayMs: 3000 }] });
    const provider = createProvider(`openai-compat:${server.url}/v1#m`, { timeoutMs: 300, ...fresh() });
    await expect(provider.chat({ messages })).rejects.toMatchObject({ kind: 'server_error', message: expect.stringMatching(/HTTP 503/) });
    const streaming = createProvider(`openai-compat:${server.url}/v1#m`, { stream: true, timeoutMs: 300, ...fresh() });
    await expect(streaming.chat({ messages })).rejects.toBeInstanceOf(LlmError);
    await expect(provider.chat({ messages })).rejects.toMatchObject({ kind: 'timeout' });
  });
});

describe('endpoint policy', () => {
  it('refuses non-loopback servers before any connection is made', async () => {
    const spy = vi.fn<typeof fetch>();
    const globalSpy = vi.spyOn(globalThis, 'fetch');
    const refused = (ref: string, extra = {}) => {
      try {
        createProvider(ref, { fetch: spy, ...fresh(), ...extra });
      } catch (error) {
        return error;
      }
      return null;
    };
    for (const error of [
      refused('openai-compat:http://10.1.2.3:8000/v1#m'),
      refused('openai-compat:https://api.openai.com/v1#gpt-4o'),
      refused('ollama:qwen2.5:14b', { ollamaHost: 'gpu-box.lab:11434' }),
      refused('ollama:qwen2.5:14b', { ollamaHost: 'http://[2001:db8::1]:11434' }),
    ]) {
      expect(error).toBeInstanceOf(LlmError);
      expect((error as LlmError).kind).toBe('refused_endpoint');
      expect((error as LlmError).message).toMatch(/allowedHosts/);
    }
    expect(spy).not.toHaveBeenCalled();
    expect(globalSpy).not.toHaveBeenCalled();
  });

  it('allows configured lab hosts and checks every request the client builds', async () => {
    const seen: string[] = [];
    const labFetch: typeof fetch = async (input) => {
      seen.push(String(input instanceof Request ? input.url : input));
      return new Response(JSON.stringify({ model: 'm', created_at: '', message: { role: 'assistant', content: '{}' }, done: true, done_reason: 'stop', prompt_eval_count: 1, eval_count: 1 }), {
        headers: { 'content-type': 'application/json' },
      });
    };
    const provider = createProvider('ollama:m', { ollamaHost: 'gpu-box.lab:11434', allowedHosts: ['gpu-box.lab'], fetch: labFetch, ...fresh() });
    await provider.chat({ messages });
    expect(seen).toEqual(['http://gpu-box.lab:11434/api/chat']);
  });

  it('refuses a redirect to another address', async () => {
    const bouncing: typeof fetch = async (_input, init) => {
      // the guarded fetch must have asked the HTTP stack not to follow redirects
      expect(init?.redirect).toBe('error');
      throw new TypeError('fetch failed', { cause: new Error('unexpected redirect') });
    };
    const provider = createProvider('ollama:m', { ollamaHost: '127.0.0.1:1', fetch: bouncing, ...fresh() });
    await expect(provider.chat({ messages })).rejects.toMatchObject({ kind: 'server_error' });
  });
});

describe('concurrency limiter and request cache', () => {
  it('never has more calls in flight than the limit; the rest queue', async () => {
    server = await startFakeLlmServer({ latencyMs: 60, respond: () => '{"ok":true,"note":"q"}' });
    const limiter = new ConcurrencyLimiter(2);
    const provider = createProvider('ollama:qwen2.5:14b', { ollamaHost: server.url, limiter });
    const results = await Promise.all(Array.from({ length: 7 }, () => provider.chat({ messages })));
    expect(results).toHaveLength(7);
    expect(server.peakConcurrent).toBe(2);
    expect(limiter.peakInFlight).toBe(2);
    expect(server.chatRequests()).toHaveLength(7);
  });

  it('shares one limiter per endpoint between providers (simulator and judge on one Ollama)', async () => {
    server = await startFakeLlmServer({ latencyMs: 50, respond: () => '{}' });
    const a = createProvider('ollama:a', { ollamaHost: server.url, maxConcurrent: 1 });
    const b = createProvider('ollama:b', { ollamaHost: server.url, maxConcurrent: 1 });
    await Promise.all([a.chat({ messages }), b.chat({ messages }), a.chat({ messages }), b.chat({ messages })]);
    expect(server.peakConcurrent).toBe(1);
  });

  it('caches identical requests but keys on the repeat index', async () => {
    server = await startFakeLlmServer({ respond: () => '{"ok":true,"note":"c"}' });
    const provider = createProvider('ollama:qwen2.5:14b', { ollamaHost: server.url, cache: new MemoryRequestCache(), ...fresh() });
    const first = await provider.chat({ messages, temperature: 0, repeat: 0 });
    const again = await provider.chat({ messages, temperature: 0, repeat: 0 });
    const otherRepeat = await provider.chat({ messages, temperature: 0, repeat: 1 });
    expect(first.cached).toBeUndefined();
    expect(again.cached).toBe(true);
    expect(otherRepeat.cached).toBeUndefined();
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('has no cache unless one is configured', async () => {
    server = await startFakeLlmServer({ respond: () => '{}' });
    const provider = createProvider('ollama:qwen2.5:14b', { ollamaHost: server.url, ...fresh() });
    await provider.chat({ messages });
    await provider.chat({ messages });
    expect(server.chatRequests()).toHaveLength(2);
  });
});
