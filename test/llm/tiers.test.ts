import { describe, expect, it } from 'vitest';
import { LlmSettingsSchema, LlmUsageTracker } from '../../src/llm/index.ts';
import { resolveLlmJudge, resolveLlmSimulator } from '../../src/llm/tiers.ts';
import { startFakeLlmServer } from '../helpers/fakeLlmServer.ts';

describe('picking the LLM tiers for a run', () => {
  it('uses the model when the server has it and says plainly when it falls back', async () => {
    const server = await startFakeLlmServer({ models: ['qwen2.5:14b'] });
    try {
      const lines: string[] = [];
      const context = { settings: LlmSettingsSchema.parse({ ollamaHost: server.url }), tracker: new LlmUsageTracker(), log: (l: string) => void lines.push(l) };
      const simulator = await resolveLlmSimulator('ollama:qwen2.5:14b', context);
      expect(simulator).toMatchObject({ kind: 'llm', describe: 'ollama:qwen2.5:14b' });
      const judge = await resolveLlmJudge('ollama:qwen2.5:32b', context);
      expect(judge).toBeNull();
      expect(lines[0]).toMatch(/^simulator: ollama:qwen2\.5:14b/);
      expect(lines[1]).toMatch(/judge: ollama:qwen2\.5:32b is not available .*fix: ollama pull qwen2\.5:32b\. Falling back to the oracle tier\./);
      const refused = await resolveLlmJudge('openai-compat:http://10.0.0.5:8000/v1#m', context);
      expect(refused).toBeNull();
      expect(lines[2]).toMatch(/refused_endpoint.*Falling back to the oracle tier/);
    } finally {
      await server.close();
    }
  });
});
