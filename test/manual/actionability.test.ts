import { beforeAll, describe, expect, it } from 'vitest';
import { ConcurrencyLimiter } from '../../src/llm/index.ts';
import type { ManualCorpus } from '../../src/manual/corpus.ts';
import { DeterministicManualEvaluator } from '../../src/manual/evaluate.ts';
import { LlmManualEvaluator } from '../../src/manual/llm.ts';
import { generateDeterministicTestSet, type TestItem } from '../../src/manual/testset.ts';
import { startFakeLlmServer, systemPromptOf } from '../helpers/fakeLlmServer.ts';
import { bmwCorpus, manualResponder } from './helpers.ts';

/**
 * Actionability as GEAR defines it (Fig. 15): instructions, recommendations, warnings, next steps or insight that
 * informs action; "I don't know" is not actionable. The paper judges it on every question type; the lab only where
 * the question asks for steps.
 */
const REFUSAL = "Sorry, I couldn't find that in the owner's manual.";
let corpus: ManualCorpus;
let items: TestItem[];
beforeAll(async () => {
  corpus = await bmwCorpus();
  items = generateDeterministicTestSet(corpus);
}, 120_000);

describe('the deterministic tier', () => {
  it('paper: every question type is judged — the reference answer is actionable, a refusal is not; the lab judges step questions only', () => {
    const lab = new DeterministicManualEvaluator(corpus);
    const paper = new DeterministicManualEvaluator(corpus, 'paper');
    for (const kind of ['definition', 'safety', 'procedure'] as const) {
      const item = items.find((i) => i.kind === kind)!;
      expect([kind, paper.evaluate(item, item.answer).metrics.actionability]).toMatchObject([kind, { status: 'judged', value: 1 }]);
      expect([kind, paper.evaluate(item, REFUSAL).metrics.actionability]).toMatchObject([kind, { status: 'judged', value: 0 }]);
      expect(lab.evaluate(item, item.answer).metrics.actionability.status).toBe(kind === 'procedure' ? 'judged' : 'not_applicable');
    }
    // a safety question answered with its warning: a warning to heed is something to act on
    const safety = items.find((i) => i.kind === 'safety')!;
    const warning = safety.facts.find((f) => f.role === 'warning')!;
    expect(paper.evaluate(safety, warning.text).metrics.actionability).toMatchObject({ status: 'judged', value: 1, reason: expect.stringMatching(/\(warning\) to act on/) });
  });
});

describe('the model tiers', () => {
  it("use the paper's broad prompt (recommendations, warnings, insight; not \"I don't know\") and judge a definition question under paper only", async () => {
    const server = await startFakeLlmServer({ respond: manualResponder() });
    try {
      const definition = items.find((i) => i.kind === 'definition')!;
      const judge = (method: 'lab' | 'paper') => new LlmManualEvaluator(`openai-compat:${server.url}/v1#m`, corpus, { method, provider: { limiter: new ConcurrencyLimiter(4) } });
      const lab = await judge('lab').evaluate(definition, 'Press the button.');
      expect(lab.metrics.actionability.status).toBe('not_applicable');
      const paper = await judge('paper').evaluate(definition, 'Press the button.');
      expect(paper.metrics.actionability).toMatchObject({ status: 'judged', value: 1 });
      const calls = server.chatRequests().filter((r) => systemPromptOf(r).includes('actionability evaluator'));
      expect(calls).toHaveLength(1);
      expect(systemPromptOf(calls[0])).toMatch(/a recommendation or a warning to heed/);
      expect(systemPromptOf(calls[0])).toMatch(/only says it does not know[\s\S]*is not actionable \(0\)/);
    } finally {
      await server.close();
    }
  });
});
