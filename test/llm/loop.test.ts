import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runConversation } from '../../src/kinds/dialogue/conversation.ts';
import { InProcessHeadUnit } from '../../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../../src/headunit/reference/reference-headunit.ts';
import { createLlmJudge } from '../../src/judge/llm.ts';
import { OracleJudge } from '../../src/judge/oracle.ts';
import { ConcurrencyLimiter, LlmUsageTracker } from '../../src/llm/index.ts';
import { createLlmSimulator } from '../../src/simulator/llm.ts';
import { benchModelResponder, startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { writeTinyGguf } from '../helpers/tinyGguf.ts';
import { spec } from './fixtures.ts';

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const headUnit = () => new InProcessHeadUnit(new ReferenceHeadUnit());

describe('LLM tiers in the conversation loop (reference head unit)', () => {
  it('runs with an ollama simulator and an openai-compat judge beside the oracle, keeping both tiers per turn', async () => {
    server = await startFakeLlmServer({ respond: benchModelResponder() });
    const tracker = new LlmUsageTracker();
    const limiter = new ConcurrencyLimiter(4);
    const simulator = createLlmSimulator('ollama:sim', { tracker, provider: { ollamaHost: server.url, limiter } });
    const judge = createLlmJudge(`openai-compat:${server.url}/v1#judge`, { tracker, provider: { limiter } });
    const s = spec({ maxTurns: 4 });
    const hu = headUnit();
    const result = await runConversation({ spec: s, openSession: (ctx) => hu.openSession(s.key, ctx), simulator, judges: [new OracleJudge(), judge] });
    expect(result.status).toBe('completed');
    expect(result.turns.length).toBeGreaterThanOrEqual(3);
    for (const turn of result.turns) expect(turn.verdicts.map((v) => v.tier)).toEqual(['oracle', 'llm']);
    const llmVerdict = result.verdicts.find((v) => v.tier === 'llm');
    expect(llmVerdict).toMatchObject({ outcome: 'judged', score: 1, pass: true });
    const summary = tracker.summary(result.turns.length);
    // 2 simulator calls to start + 1 per later turn; 1 judge call per turn + 4 per conversation
    expect(summary.byKind.simulator?.calls).toBe(2 + result.turns.length - 1);
    expect(summary.byKind.judge?.calls).toBe(result.turns.length + 4);
    expect(server.chatRequests().filter((r) => r.api === 'ollama')).toHaveLength(summary.byKind.simulator!.calls);
    expect(summary.perConversation).toMatchObject({ conversations: 1, calls: summary.calls, tokensIn: summary.tokensIn });
    expect(summary.perConversation.modelSeconds).toBeGreaterThan(0);
  });

  it('records simulator_error when the simulator model keeps answering off-schema', async () => {
    server = await startFakeLlmServer({ respond: () => '{"targets": "none"}' });
    const simulator = createLlmSimulator('ollama:sim', { provider: { ollamaHost: server.url, limiter: new ConcurrencyLimiter(1) }, maxRetries: 1 });
    const s = spec();
    const hu = headUnit();
    const result = await runConversation({ spec: s, openSession: (ctx) => hu.openSession(s.key, ctx), simulator, judges: [new OracleJudge()] });
    expect(result.status).toBe('simulator_error');
    expect(result.error).toMatch(/ExtractTargets.*after 2 calls/);
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('records judge_error verdicts (not pass/fail) when the judge model fails', async () => {
    server = await startFakeLlmServer({ respond: (r) => (r.api === 'openai' ? { status: 500, error: 'boom' } : benchModelResponder()(r)) });
    const limiter = new ConcurrencyLimiter(4);
    const simulator = createLlmSimulator('ollama:sim', { provider: { ollamaHost: server.url, limiter } });
    const judge = createLlmJudge(`openai-compat:${server.url}/v1#judge`, { provider: { limiter }, maxRetries: 0 });
    const s = spec({ maxTurns: 2 });
    const hu = headUnit();
    const result = await runConversation({ spec: s, openSession: (ctx) => hu.openSession(s.key, ctx), simulator, judges: [judge] });
    expect(result.turns.every((t) => t.verdicts[0].outcome === 'judge_error')).toBe(true);
    expect(result.verdicts[0]).toMatchObject({ tier: 'llm', outcome: 'judge_error', pass: null, score: null });
    expect(result.status).toBe('judge_error');
  });

  it('runs the loop with a gguf simulator (random weights: grammar-valid JSON, noise content, bounded retries)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-gguf-loop-'));
    try {
      const path = join(dir, 'tiny.gguf');
      writeTinyGguf(path);
      const tracker = new LlmUsageTracker();
      const options = { tracker, maxTokens: 160, maxRetries: 1, provider: { gguf: { gpu: false as const, threads: 1, contextSize: 8192 } } };
      const simulator = createLlmSimulator(`gguf:${path}`, options);
      const s = spec({ maxTurns: 2 });
      const hu = headUnit();
      const result = await runConversation({ spec: s, openSession: (ctx) => hu.openSession(s.key, ctx), simulator, judges: [new OracleJudge()] });
      // ExtractTargets comes back schema-valid from the grammar; the random model then rambles past the
      // token limit on the long utterance schema, which must end as a recorded simulator_error after the bounded retry
      expect(tracker.records[0]).toMatchObject({ kind: 'simulator', retries: 0, error: null });
      expect(tracker.records[0].completionTokens).toBeGreaterThan(0);
      if (result.status === 'simulator_error') {
        expect(result.error).toMatch(/after 2 calls/);
        expect(tracker.records.filter((r) => r.error !== null).length).toBe(2);
      } else {
        expect(result.status).toBe('completed');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
