import { describe, expect, it } from 'vitest';
import type { ConversationResult, ConversationVerdict, TurnVerdict } from '../../src/domain/conversation.ts';
import { JudgePairAgreementSchema, judgeAgreementCollector, judgeAgreementView } from '../../src/judge/agreement.ts';
import { judgeDisagreementSection } from '../../src/report/judge-section.ts';
import { collect } from '../../src/report/html.ts';
import { spec, TARGETS, turn } from '../llm/fixtures.ts';
import { startHarness } from '../server/helpers.ts';

const A = 'oracle';
const B = 'sc-5:ollama:judge';
const tv = (judge: string, labels: string[], outcome: TurnVerdict['outcome'] = 'judged'): TurnVerdict => {
  const tier = judge === 'oracle' ? 'oracle' : 'llm';
  return { tier, judge, outcome, labels: labels.map((label) => ({ label: label as TurnVerdict['labels'][number]['label'], targetId: null, evidence: '', tier })), targetUpdates: [], reasoning: '' };
};
const cv = (judge: string, scores: [number, number, number, number]): ConversationVerdict => {
  const [instruction, context, plan, safety] = scores.map((score) => ({ score: score as 0 | 1 | 2, reasoning: 'r' }));
  return { tier: judge === 'oracle' ? 'oracle' : 'llm', judge, outcome: 'judged', dimensions: { instruction, context, plan, safety }, completedShare: 1, score: 1, pass: true, reasoning: '' };
};

/**
 * 50 turns: safety_violation both 20, only A 5, only B 10, neither 15 — Wikipedia's worked example
 * for Cohen's κ (κ = 0.4); context_forgotten never given (κ = 1 by convention: no disagreement possible).
 */
function results(): ConversationResult[] {
  const plan: Array<[string[], string[]]> = [
    ...Array.from({ length: 20 }, () => [['safety_violation'], ['safety_violation']] as [string[], string[]]),
    ...Array.from({ length: 5 }, () => [['safety_violation'], []] as [string[], string[]]),
    ...Array.from({ length: 10 }, () => [[], ['safety_violation']] as [string[], string[]]),
    ...Array.from({ length: 15 }, () => [[], []] as [string[], string[]]),
  ];
  return Array.from({ length: 5 }, (_, c) => {
    const turns = plan.slice(c * 10, c * 10 + 10).map(([a, b], i) => ({ ...turn(i, `u${i}`, `r${i}`), verdicts: [tv(A, a), tv(B, b)] }));
    // B fails on one extra turn: that turn is compared by no pair
    turns.push({ ...turn(10, 'x', 'y'), verdicts: [tv(A, ['planning_poor']), tv(B, [], 'judge_error')] });
    const scoresB: [number, number, number, number] = c < 3 ? [2, 2, 1, 0] : [1, 2, 1, 0];
    return { spec: { ...spec(), key: `c${c}` }, status: 'completed', error: null, turns, targets: TARGETS, verdicts: [cv(A, [2, 2, 1, 0]), cv(B, scoresB)], startedAt: '', durationMs: 0 };
  });
}

describe('agreement between judges: κ per label, exact agreement per dimension', () => {
  it('matches the hand computation', () => {
    const collector = judgeAgreementCollector();
    for (const r of results()) collector.add(r);
    const [pair] = collector.finish();
    JudgePairAgreementSchema.parse(pair);
    expect(pair.judges).toEqual([A, B]);
    expect(pair.turns).toBe(50);
    expect(pair.labels.safety_violation).toEqual({ both: 20, onlyFirst: 5, onlySecond: 10, neither: 15, kappa: expect.closeTo(0.4, 10) });
    expect(pair.labels.planning_poor).toMatchObject({ both: 0, onlyFirst: 0, neither: 50 });
    expect(pair.labels.context_forgotten.kappa).toBe(1);
    // instruction: 3 of 5 equal (2 vs 2), 2 differ (2 vs 1)
    expect(pair.dimensions.instruction).toMatchObject({ items: 5, exact: 0.6 });
    expect(pair.dimensions.safety).toMatchObject({ items: 5, exact: 1 });
  });

  it('the report section and the bench app view carry the agreement and the disagreement turns', () => {
    const section = collect(judgeDisagreementSection(), results())!;
    expect(section.title).toBe('Judge agreement');
    expect(section.html).toContain(`${A} vs ${B}`);
    expect(section.html).toContain('<td class="n">0.40</td>');
    expect(section.html).toContain('Judge disagreements');
    const view = judgeAgreementView(results(), 4);
    expect(view.totalDisagreements).toBe(15);
    expect(view.disagreements).toHaveLength(4);
    expect(view.disagreements[0]).toMatchObject({ conversationKey: 'c2', judges: [A, B], onlyFirst: ['safety_violation'], onlySecond: [] });
  });

  it('the bench app serves the judge pairs and the disagreement turns of a stored run for review', async () => {
    const harness = await startHarness();
    try {
      const all = results();
      const id = harness.store.createRun({ name: 'two judges', mode: 'guided', config: {}, plan: all.map((r) => r.spec) });
      for (const r of all) harness.store.saveConversation(id, r);
      const { status, json } = await harness.api(`/api/runs/${id}/judge-agreement`);
      expect(status).toBe(200);
      expect(json.pairs).toHaveLength(1);
      expect(json.pairs[0].labels.safety_violation.kappa).toBeCloseTo(0.4, 10);
      expect(json.totalDisagreements).toBe(15);
      expect(json.disagreements[0]).toMatchObject({ conversationKey: 'c2', turnIndex: 0, judges: [A, B] });
      expect((await harness.api('/api/runs/nope/judge-agreement')).status).toBe(404);
    } finally {
      await harness.close();
    }
  });
});
