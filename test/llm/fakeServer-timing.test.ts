import { afterEach, describe, expect, it } from 'vitest';
import { ConcurrencyLimiter, createProvider } from '../../src/llm/index.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';

let fake: FakeLlmServer | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('model calls through the providers (what bench:llm measures)', () => {
  it('both clients keep their connections alive, and the limiter accounts for the slot time', async () => {
    fake = await startFakeLlmServer({ respond: () => '{"ok":true}' });
    const limiter = new ConcurrencyLimiter(2);
    const ollama = createProvider('ollama:m', { ollamaHost: fake.url, limiter });
    const openai = createProvider(`openai-compat:${fake.url}/v1#m`, { limiter });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    for (let round = 0; round < 5; round++) await Promise.all([ollama.chat({ messages }), openai.chat({ messages })]);
    expect(fake.chatRequests()).toHaveLength(10);
    // connections are reused (kept alive), not opened per call
    expect(fake.connections).toBeLessThan(fake.chatRequests().length);
    expect(limiter.slotUse.calls).toBe(10);
    expect(limiter.slotUse.heldMs).toBeGreaterThan(0);
  });

  it('the fake server answers no sooner than latencyMs after the whole request arrived', async () => {
    fake = await startFakeLlmServer({ latencyMs: 30, respond: () => '{}' });
    const provider = createProvider('ollama:m', { ollamaHost: fake.url, limiter: new ConcurrencyLimiter(4) });
    await Promise.all(Array.from({ length: 12 }, () => provider.chat({ messages: [{ role: 'user', content: 'x' }] })));
    const delays = fake.answerDelays();
    expect(delays.answers).toBe(12);
    expect(delays.minMs).toBeGreaterThanOrEqual(30);
    expect(delays.meanMs).toBeGreaterThanOrEqual(30);
  });
});
