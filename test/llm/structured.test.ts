import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConcurrencyLimiter, createProvider, generateStructured, LlmError, LlmUsageTracker, parseNearJson } from '../../src/llm/index.ts';
import type { ChatRequest, ChatResponse, LlmProvider } from '../../src/llm/types.ts';
import { startFakeLlmServer } from '../helpers/fakeLlmServer.ts';

describe('parseNearJson', () => {
  const cases: Array<[string, unknown]> = [
    ['{"a": 1}', { a: 1 }],
    ['```json\n{"a": 1, "b": [1, 2,],}\n```', { a: 1, b: [1, 2] }],
    ["Sure! Here is the result: {'a': 'it\\'s', 'b': True, 'c': None} Hope it helps.", { a: "it's", b: true, c: null }],
    ['{a: 1, b: "x"}', { a: 1, b: 'x' }],
    ['The answer {"nested": {"x": "}"}} and more', { nested: { x: '}' } }],
    ['```\n[1, 2]\n```', [1, 2]],
  ];
  it.each(cases)('reads %j', (text, expected) => {
    expect(parseNearJson(text)).toEqual({ ok: true, value: expected });
  });
  it('says when the JSON is cut off or missing', () => {
    expect(parseNearJson('{"a": "unterminated')).toMatchObject({ ok: false, error: expect.stringMatching(/cut off/) });
    expect(parseNearJson('no json here')).toMatchObject({ ok: false, error: expect.stringMatching(/no JSON/) });
  });
});

/** A provider that answers from a script and records what it was asked. */
function scripted(replies: Array<string | LlmError | Partial<ChatResponse>>): LlmProvider & { seen: ChatRequest[] } {
  const seen: ChatRequest[] = [];
  return {
    ref: 'ollama:scripted',
    kind: 'ollama',
    seen,
    async chat(request) {
      seen.push(structuredClone({ ...request, signal: undefined }));
      const next = replies.shift();
      if (next === undefined) throw new Error('script exhausted');
      if (next instanceof LlmError) throw next;
      const response = typeof next === 'string' ? { text: next } : next;
      return { text: '', promptTokens: 10, completionTokens: 5, latencyMs: 100, ...response };
    },
    close: async () => {},
  };
}

const Score = z.object({ score: z.union([z.literal(0), z.literal(1), z.literal(2)]), reasoning: z.string() });

describe('generateStructured', () => {
  it('returns the validated value on the first valid answer', async () => {
    const provider = scripted(['```json\n{"score": 2, "reasoning": "ok",}\n```']);
    const tracker = new LlmUsageTracker();
    const result = await generateStructured(provider, { messages: [{ role: 'user', content: 'rate' }], temperature: 0 }, Score, { tracker, kind: 'judge' });
    expect(result).toEqual({ ok: true, value: { score: 2, reasoning: 'ok' }, calls: 1, retries: 0 });
    expect(provider.seen[0].jsonSchema).toMatchObject({ type: 'object', required: ['score', 'reasoning'] });
    expect(tracker.summary(1)).toMatchObject({ calls: 1, tokensIn: 10, tokensOut: 5, errors: { invalid_output: 0 } });
  });

  it('feeds the validation error back and succeeds on a retry', async () => {
    const provider = scripted(['{"score": 3, "reasoning": "too high"}', '{"score": 1, "reasoning": "fixed"}']);
    const tracker = new LlmUsageTracker();
    const result = await generateStructured(provider, { messages: [{ role: 'user', content: 'rate' }] }, Score, { tracker, kind: 'judge' });
    expect(result).toMatchObject({ ok: true, value: { score: 1 }, calls: 2, retries: 1 });
    const retry = provider.seen[1].messages;
    expect(retry.at(-2)).toEqual({ role: 'assistant', content: '{"score": 3, "reasoning": "too high"}' });
    expect(retry.at(-1)?.content).toMatch(/score/);
    expect(retry.at(-1)?.content).toMatch(/only one JSON object/);
    expect(tracker.records.map((r) => [r.retries, r.error])).toEqual([
      [0, 'invalid_output'],
      [1, null],
    ]);
  });

  it('tells the model its answer was cut off at the token limit', async () => {
    const provider = scripted([{ text: '{"score": 1, "reas', truncated: true }, '{"score": 1, "reasoning": "short"}']);
    const result = await generateStructured(provider, { messages: [{ role: 'user', content: 'rate' }] }, Score, { kind: 'judge' });
    expect(result.ok).toBe(true);
    expect(provider.seen[1].messages.at(-1)?.content).toMatch(/cut off at the token limit/);
  });

  it('gives up after the bounded retries with an invalid_output error, never a value', async () => {
    const provider = scripted(['not json', '{"score": "two"}', '{"reasoning": "no score"}', '{"score": 2, "reasoning": "too late"}']);
    const tracker = new LlmUsageTracker();
    const result = await generateStructured(provider, { messages: [{ role: 'user', content: 'rate' }] }, Score, { tracker, kind: 'judge', maxRetries: 2 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('invalid_output');
    expect(result.error.message).toMatch(/after 3 calls/);
    expect(result.calls).toBe(3);
    expect(provider.seen).toHaveLength(3);
    expect(tracker.summary(2)).toMatchObject({ calls: 3, callsPerTurn: 1.5, errors: { invalid_output: 3 } });
  });

  it('retries transient server errors and timeouts but not a refused endpoint', async () => {
    const flaky = scripted([new LlmError('server_error', 'HTTP 500'), new LlmError('timeout', 'slow'), '{"score": 0, "reasoning": "r"}']);
    const ok = await generateStructured(flaky, { messages: [{ role: 'user', content: 'x' }] }, Score, { kind: 'simulator' });
    expect(ok).toMatchObject({ ok: true, calls: 3 });
    const refused = scripted([new LlmError('refused_endpoint', 'no'), '{"score": 0, "reasoning": "r"}']);
    const result = await generateStructured(refused, { messages: [{ role: 'user', content: 'x' }] }, Score, { kind: 'simulator' });
    expect(result).toMatchObject({ ok: false, calls: 1 });
    expect(!result.ok && result.error.kind).toBe('refused_endpoint');
  });

  it('works end to end through the real client against the fake server, off-schema then valid', async () => {
    const server = await startFakeLlmServer({ replies: ['{"score": 5}', "{'score': 2, 'reasoning': 'single quotes',}"] });
    try {
      const provider = createProvider('ollama:judge', { ollamaHost: server.url, limiter: new ConcurrencyLimiter(1) });
      const result = await generateStructured(provider, { messages: [{ role: 'user', content: 'rate' }], temperature: 0, seed: 1 }, Score, { kind: 'judge', schemaName: 'score' });
      expect(result).toMatchObject({ ok: true, value: { score: 2, reasoning: 'single quotes' }, calls: 2 });
      const second = server.chatRequests()[1].body;
      expect(second.messages).toHaveLength(3);
      expect(second.format).toMatchObject({ properties: { score: expect.anything() } });
    } finally {
      await server.close();
    }
  });
});

describe('LlmUsageTracker', () => {
  it('sums calls, tokens, latency, errors, cost for metered refs and GPU-seconds for local ones', () => {
    const tracker = new LlmUsageTracker({ prices: { 'openai-compat:http://127.0.0.1:8000/v1#metered': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } } });
    tracker.record({ ref: 'ollama:a', kind: 'simulator', promptTokens: 100, completionTokens: 10, latencyMs: 200, retries: 0, error: null, computeMs: 150 });
    tracker.record({ ref: 'ollama:a', kind: 'judge', promptTokens: 50, completionTokens: 5, latencyMs: 100, retries: 0, error: 'invalid_output' });
    tracker.record({ ref: 'openai-compat:http://127.0.0.1:8000/v1#metered', kind: 'judge', promptTokens: 1_000_000, completionTokens: 500_000, latencyMs: 300, retries: 0, error: null });
    tracker.record({ ref: 'ollama:a', kind: 'judge', promptTokens: 50, completionTokens: 5, latencyMs: 0, retries: 0, error: null, cached: true });
    const summary = tracker.summary(3);
    expect(summary).toMatchObject({
      calls: 3,
      callsPerTurn: 1,
      tokensIn: 1_000_150,
      tokensOut: 500_015,
      meanLatencyMs: 200,
      errors: { invalid_output: 1, timeout: 0, refused_endpoint: 0, server_error: 0 },
      cachedCalls: 1,
      costUsd: 2,
      gpuSeconds: 0.25,
    });
    expect(summary.byKind).toEqual({ simulator: { calls: 1, tokensIn: 100, tokensOut: 10 }, judge: { calls: 2, tokensIn: 1_000_050, tokensOut: 500_005 } });
  });
});
