import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProvider, generateStructured, LlmUsageTracker, type LlmProvider } from '../../src/llm/index.ts';
import { toGrammarSchema } from '../../src/llm/providers/gguf.ts';
import { writeTinyGguf } from '../helpers/tinyGguf.ts';

// node-llama-cpp with its prebuilt linux-x64 CPU binding, on a random-weight model the test writes itself.
// Nothing here says anything about answer quality: only that the in-process path loads a GGUF, applies the
// JSON-schema grammar and returns output that validates.
const Verdict = z.object({
  score: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  verdict: z.enum(['pass', 'fail']),
  note: z.string().max(12),
});

let dir: string;
let modelPath: string;
let provider: LlmProvider;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'icabench-gguf-'));
  modelPath = join(dir, 'tiny.gguf');
  writeTinyGguf(modelPath);
  // one thread: on a shared 2-core CI box, spinning worker threads slow a tiny model down a hundredfold
  provider = createProvider(`gguf:${modelPath}`, { gguf: { gpu: false, threads: 1, contextSize: 2048 } });
});

afterAll(async () => {
  await provider?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('gguf provider (node-llama-cpp, tiny random-weight model)', () => {
  it('maps zod JSON schema onto the grammar subset (anyOf becomes oneOf, annotations dropped)', () => {
    const mapped = toGrammarSchema({ $schema: 'x', type: 'object', properties: { a: { anyOf: [{ const: 0 }, { const: 1 }], description: 'd' } } });
    expect(mapped).toEqual({ type: 'object', properties: { a: { oneOf: [{ const: 0 }, { const: 1 }] } } });
  });

  it('loads the generated GGUF and, with the schema grammar, returns output that validates on the first call', async () => {
    const tracker = new LlmUsageTracker();
    const result = await generateStructured(
      provider,
      { messages: [{ role: 'system', content: 'Answer in JSON.' }, { role: 'user', content: 'Rate it.' }], temperature: 0, seed: 1, maxTokens: 64 },
      Verdict,
      { kind: 'judge', tracker, maxRetries: 0 },
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Verdict.parse(result.value)).toEqual(result.value);
    expect(result.calls).toBe(1);
    const [call] = tracker.records;
    expect(call.promptTokens).toBeGreaterThan(0);
    expect(call.completionTokens).toBeGreaterThan(0);
    expect(tracker.summary(1).gpuSeconds).toBeGreaterThan(0);
  });

  it('shares one loaded model between providers on the same file; closing one leaves the other working', async () => {
    const other = createProvider(`gguf:${modelPath}`, { gguf: { gpu: false, threads: 1, contextSize: 2048 } });
    const ask = (p: LlmProvider) => generateStructured(p, { messages: [{ role: 'user', content: 'Rate.' }], temperature: 0, maxTokens: 64 }, Verdict, { kind: 'judge', maxRetries: 0 });
    expect((await ask(other)).ok).toBe(true);
    await other.close();
    expect((await ask(provider)).ok).toBe(true);
  });

  it('reports a missing model file as a server_error naming the path', async () => {
    const missing = createProvider(`gguf:${join(dir, 'absent.gguf')}`, { gguf: { gpu: false, threads: 1 } });
    await expect(missing.chat({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ kind: 'server_error', message: expect.stringMatching(/absent\.gguf not found/) });
  });
});
