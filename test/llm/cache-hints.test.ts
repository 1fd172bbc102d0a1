import { afterEach, describe, expect, it } from 'vitest';
import { ConcurrencyLimiter, createProvider, endSession, generateStructured, SessionSlots } from '../../src/llm/index.ts';
import { turnAnswerSchema } from '../../src/judge/answers.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { ModelHost } from '../helpers/modelHost.ts';

/** Cache hints (issue #37): each conversation kept where the model host has its prompt, per provider flavour. */
let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const text = (char: string, length: number) => char.repeat(length);
const cost = { slots: 2, prefillMsPerToken: 0.25, decodeMsPerToken: 15 };

describe('the cost model with slot hints, worked by hand', () => {
  it("a conversation that names its slot (id_slot) reuses it; left to llama-server's choice, a short share goes to the least recently used slot", async () => {
    const host = new ModelHost(cost);
    const a = text('a', 400); // conversation A: 100 tokens
    const b = text('b', 400); // conversation B
    host.charge(await host.acquire(a, 0), a, ''); // A on slot 0: a miss, 100 × 0.25 = 25 ms
    host.release(0);
    host.charge(await host.acquire(b, 1), b, ''); // B on slot 1
    host.release(1);
    // A's next call: its 400 characters, then 600 new ones (250 tokens). It shares 40 % with slot 0, under llama-server's half.
    const next = `${a}${text('c', 600)}`;
    // named: slot 0, 100 tokens cached, 150 computed: 150 × 0.25 = 37.5 ms (62.5 without reuse)
    expect(await host.acquire(next, 0)).toBe(0);
    expect(host.charge(0, next, '')).toMatchObject({ slot: 0, cachedTokens: 100, modelMs: 37.5, modelMsWithoutReuse: 62.5 });
    host.release(0);
    // unnamed, after A has just called again on slot 0: llama-server takes the least recently used idle slot, B's 1,
    // since 40 % is under its half; nothing shared there, all 250 tokens computed
    const unnamed = new ModelHost(cost);
    unnamed.charge(await unnamed.acquire(a, 0), a, '');
    unnamed.release(0);
    unnamed.charge(await unnamed.acquire(b, 1), b, '');
    unnamed.release(1);
    unnamed.charge(await unnamed.acquire(a, 0), a, '');
    unnamed.release(0);
    const slot = await unnamed.acquire(next);
    expect(slot).toBe(1);
    expect(unnamed.charge(slot, next, '')).toMatchObject({ cachedTokens: 0, modelMs: 62.5 });
  });

  it("cache_prompt false computes the whole prompt, as llama-server does", async () => {
    const host = new ModelHost({ ...cost, slots: 1 });
    const a = text('a', 400);
    host.charge(await host.acquire(a, 0), a, '');
    host.release(0);
    const next = `${a}${text('c', 400)}`; // 200 tokens
    expect(host.charge(await host.acquire(next, 0), next, '', '', false)).toMatchObject({ cachedTokens: 0, modelMs: 50 });
  });
});

describe('session slots', () => {
  it("a session keeps its slot; a new one takes a free slot, else the one whose session called least recently; an ended session's slot is free", () => {
    const slots = new SessionSlots(2);
    expect(slots.slotFor('A')).toBe(0);
    expect(slots.slotFor('B')).toBe(1);
    expect(slots.slotFor('A')).toBe(0);
    slots.end('A');
    expect(slots.slotFor('C')).toBe(0);
    // both slots held: D takes the one whose session called least recently, B's
    expect(slots.slotFor('D')).toBe(1);
    expect(slots.slotFor('C')).toBe(0);
    // B lost its slot; calling again it takes the least recently called one, now D's
    expect(slots.slotFor('B')).toBe(1);
  });

  it("a session's calls run one after the other; another session's do not wait for them", async () => {
    const slots = new SessionSlots(2);
    const order: string[] = [];
    let finishFirst!: () => void;
    const first = slots.run('A', async (slot) => {
      order.push(`A1 on ${slot}`);
      await new Promise<void>((resolve) => (finishFirst = resolve));
      order.push('A1 done');
    });
    const second = slots.run('A', async (slot) => void order.push(`A2 on ${slot}`));
    await slots.run('B', async (slot) => void order.push(`B1 on ${slot}`));
    expect(order).toEqual(['A1 on 0', 'B1 on 1']);
    finishFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['A1 on 0', 'B1 on 1', 'A1 done', 'A2 on 0']);
  });
});

describe('requests carry the hints of their provider flavour', () => {
  const ask = (ref: string, options: Parameters<typeof createProvider>[1], conversationKey: string) =>
    generateStructured(createProvider(ref, { limiter: new ConcurrencyLimiter(4), ...options }), { messages: [{ role: 'user', content: 'EvaluateTurn: x' }] }, turnAnswerSchema(['g1']), { kind: 'judge', conversationKey });

  it('llama.cpp: id_slot per conversation and cache_prompt; a finished conversation frees its slot', async () => {
    server = await startFakeLlmServer({ respond: () => '{}' });
    const ref = `openai-compat:${server.url}/v1#hints-llama`;
    const options = { cacheHints: 'llama.cpp' as const, slots: 2 };
    for (const key of ['conv-a', 'conv-b', 'conv-a']) await ask(ref, options, key);
    endSession('conv-a');
    await ask(ref, options, 'conv-c');
    const bodies = server.chatRequests().map((r) => r.body);
    expect(bodies.map((b) => b.id_slot)).toEqual([0, 1, 0, 0]);
    expect(bodies.every((b) => b.cache_prompt === true && b.prompt_cache_key === undefined)).toBe(true);
    endSession('conv-b');
    endSession('conv-c');
  });

  it('prompt-cache-key: the conversation key as prompt_cache_key, no slot', async () => {
    server = await startFakeLlmServer({ respond: () => '{}' });
    await ask(`openai-compat:${server.url}/v1#hints-key`, { cacheHints: 'prompt-cache-key' }, 'conv-a');
    expect(server.chatRequests()[0].body).toMatchObject({ prompt_cache_key: 'conv-a' });
    expect(server.chatRequests()[0].body).not.toHaveProperty('id_slot');
  });

  it('off (the default): none of them; Ollama: keep_alive on every call, no slot field', async () => {
    server = await startFakeLlmServer({ respond: () => '{}' });
    await ask(`openai-compat:${server.url}/v1#hints-off`, {}, 'conv-a');
    await ask('ollama:judge', { ollamaHost: server.url, cacheHints: 'llama.cpp' }, 'conv-a');
    const [openai, ollama] = server.chatRequests().map((r) => r.body);
    for (const field of ['id_slot', 'cache_prompt', 'prompt_cache_key']) expect(openai).not.toHaveProperty(field);
    expect(ollama).toMatchObject({ keep_alive: '30m' });
    expect(ollama).not.toHaveProperty('id_slot');
  });
});
