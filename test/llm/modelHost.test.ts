import { afterEach, describe, expect, it } from 'vitest';
import { ConcurrencyLimiter, createProvider } from '../../src/llm/index.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { chatPromptText, LOCAL_GPU_HOST, ModelHost } from '../helpers/modelHost.ts';

/** The cost model of a local model host (test/helpers/modelHost.ts) against examples worked by hand. */
const cost = { slots: 2, prefillMsPerToken: 0.25, decodeMsPerToken: 15 };
const text = (char: string, length: number) => char.repeat(length);

describe('model host cost model', () => {
  it('a cache miss computes the whole prompt; a call that continues the slot reuses the previous prompt and completion', async () => {
    const host = new ModelHost(cost);
    const first = text('a', 400); // 100 tokens
    const slot = await host.acquire(first);
    // nothing cached: 100 × 0.25 + 10 completion tokens × 15 = 25 + 150
    expect(host.charge(slot, first, text('x', 40))).toMatchObject({ promptTokens: 100, cachedTokens: 0, completionTokens: 10, modelMs: 175, prefillMs: 25, modelMsWithoutReuse: 175 });
    host.release(slot);
    // the next call appends 200 characters to prompt + completion (640 characters, 160 tokens): 440 characters (110 tokens) are cached
    const second = `${first}${text('x', 40)}${text('b', 200)}`;
    expect(await host.acquire(second)).toBe(slot);
    // 50 uncached × 0.25 + 1 completion token × 15 = 12.5 + 15; without reuse 160 × 0.25 + 15
    expect(host.charge(slot, second, 'y')).toMatchObject({ promptTokens: 160, cachedTokens: 110, modelMs: 27.5, modelMsWithoutReuse: 55 });
  });

  it('the same prompt again still computes its last token; a prompt that differs from the first character is a miss', async () => {
    const host = new ModelHost({ ...cost, slots: 1 });
    const prompt = text('a', 400);
    host.charge(await host.acquire(prompt), prompt, '');
    host.release(0);
    // 399 characters reusable: 99 tokens cached, 1 computed (0.25 ms), no completion
    expect(host.charge(await host.acquire(prompt), prompt, '')).toMatchObject({ cachedTokens: 99, modelMs: 0.25 });
    host.release(0);
    expect(host.charge(await host.acquire(text('b', 400)), text('b', 400), '')).toMatchObject({ cachedTokens: 0, modelMs: 25 });
  });

  it('a slot that last ran another model has nothing to reuse for this one', async () => {
    const host = new ModelHost({ ...cost, slots: 1 });
    const prompt = text('a', 400);
    host.charge(await host.acquire(prompt, undefined, 'judge'), prompt, '', 'judge');
    host.release(0);
    expect(host.charge(await host.acquire(prompt, undefined, 'simulator'), prompt, '', 'simulator')).toMatchObject({ cachedTokens: 0, modelMs: 25 });
  });

  it('without prefix reuse every call computes its whole prompt', async () => {
    const host = new ModelHost(cost, false);
    const prompt = text('a', 400);
    host.charge(await host.acquire(prompt), prompt, '');
    host.release(0);
    expect(host.charge(await host.acquire(prompt), prompt, '')).toMatchObject({ cachedTokens: 0, modelMs: 25 });
  });

  it('a prompt sharing less than half of itself with every slot goes to the least recently used slot (llama.cpp)', async () => {
    const host = new ModelHost(cost);
    const a = text('a', 100);
    host.charge(await host.acquire(a), a, '');
    host.release(0);
    host.charge(await host.acquire(text('b', 100)), text('b', 100), '');
    host.release(1);
    // 100 of 250 characters shared with slot 0 (40 %): the least recently used slot, 0 here, by age not by prefix
    const shortShare = `${a}${text('c', 150)}`;
    expect(await host.acquire(shortShare)).toBe(0);
    host.release(0);
    // 100 of 160 shared with slot 0 (62 %), and slot 1 is now the older one: still slot 0, by prefix
    expect(await host.acquire(`${a}${text('d', 60)}`)).toBe(0);
  });

  it('picks the idle slot whose cache shares the longest prefix, else the least recently used one', async () => {
    const host = new ModelHost(cost);
    const a = text('a', 100);
    const b = text('b', 100);
    const [slotA, slotB] = [await host.acquire(a), await host.acquire(b)];
    expect([slotA, slotB]).toEqual([0, 1]);
    host.charge(slotA, a, '');
    host.charge(slotB, b, '');
    host.release(slotA);
    host.release(slotB);
    // slot 0 was released first (least recently used), but b's continuation shares 100 characters with slot 1
    expect(await host.acquire(`${b}more`)).toBe(1);
    // nothing shared with either: the least recently used idle slot
    host.release(1);
    expect(await host.acquire(text('c', 100))).toBe(0);
  });

  it('a call that names a busy slot (id_slot) waits for it while a later call takes the idle one', async () => {
    const host = new ModelHost(cost);
    const held = await host.acquire('p', 0);
    const order: string[] = [];
    const named = host.acquire('q', 0).then((slot) => order.push(`named→${slot}`));
    const free = host.acquire('r').then((slot) => order.push(`free→${slot}`));
    await free;
    expect(order).toEqual(['free→1']);
    host.release(held);
    await named;
    expect(order).toEqual(['free→1', 'named→0']);
  });

  it('the documented constants: 8 slots, 0.25 ms per uncached prompt token, 15 ms per completion token', () => {
    expect(LOCAL_GPU_HOST).toEqual({ slots: 8, prefillMsPerToken: 0.25, decodeMsPerToken: 15 });
  });
});

let fake: FakeLlmServer | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('the fake model server in host mode', () => {
  it('charges each call on the modelled host and reports the modelled tokens and time through both APIs', async () => {
    // time scale 0: the modelled times are charged and reported, not waited out
    fake = await startFakeLlmServer({ host: { ...cost, timeScale: 0 }, respond: () => text('z', 40) });
    const limiter = new ConcurrencyLimiter(1);
    const ollama = createProvider('ollama:m', { ollamaHost: fake.url, limiter });
    const messages = [{ role: 'user' as const, content: text('a', 389) }];
    // the prompt as the host sees it: "<|user|>\n" + 389 + "\n<|assistant|>\n" = 413 characters, 104 tokens
    expect(chatPromptText(messages)).toHaveLength(413);
    const first = await ollama.chat({ messages });
    expect(first).toMatchObject({ promptTokens: 104, completionTokens: 10 });
    // Ollama's total_duration is the modelled time: 104 × 0.25 + 10 × 15
    expect(first.computeMs).toBeCloseTo(176, 6);
    const openai = createProvider(`openai-compat:${fake.url}/v1#m`, { limiter });
    await openai.chat({ messages });
    const [a, b] = fake.chatRequests();
    expect(a.charge).toMatchObject({ cachedTokens: 0, modelMs: 176 });
    // the second call sends the same prompt: all but its last character (412, 103 tokens) comes from the slot
    expect(b.charge).toMatchObject({ slot: 0, cachedTokens: 103, modelMs: 0.25 + 150 });
    expect(b.bytes).toBe(Buffer.byteLength(JSON.stringify(b.body)));
  });
});
