import { describe, expect, it } from 'vitest';
import type { ConversationResult, TurnVerdict } from '../../src/domain/conversation.ts';
import { listTierDisagreements, tierAgreementByLabel } from '../../src/judge/llmAgreement.ts';
import { spec, TARGETS, turn } from './fixtures.ts';

const verdict = (tier: 'oracle' | 'llm', labels: Array<[string, string | null]>, outcome: TurnVerdict['outcome'] = 'judged'): TurnVerdict => ({
  tier,
  outcome,
  labels: labels.map(([label, targetId]) => ({ label: label as TurnVerdict['labels'][number]['label'], targetId, evidence: '', tier })),
  targetUpdates: [],
  reasoning: '',
});

function result(): ConversationResult {
  const turns = [turn(0, 'a', 'A'), turn(1, 'b', 'B'), turn(2, 'c', 'C'), turn(3, 'd', 'D')];
  turns[0].verdicts = [verdict('oracle', [['constraint_missed', 'g1']]), verdict('llm', [['constraint_missed', 'g1']])];
  turns[1].verdicts = [verdict('oracle', [['constraint_missed', 'g1']]), verdict('llm', [['request_omitted', 'g1'], ['safety_violation', null]])];
  turns[2].verdicts = [verdict('oracle', [['context_forgotten', null]]), verdict('llm', [], 'judge_error')];
  turns[3].verdicts = [verdict('oracle', []), verdict('llm', [])];
  return { spec: spec(), status: 'completed', error: null, turns, targets: TARGETS, verdicts: [], startedAt: '', durationMs: 0 };
}

describe('oracle vs LLM tier', () => {
  it('lists only turns both tiers judged and where their labels differ', () => {
    const list = listTierDisagreements(result());
    expect(list).toEqual([
      { conversationKey: 'llm-test-0', turnIndex: 1, tiers: ['oracle', 'llm'], onlyFirst: ['constraint_missed@g1'], onlySecond: ['request_omitted@g1', 'safety_violation'], userText: 'b', replyText: 'B' },
    ]);
  });

  it('counts agreement per label', () => {
    expect(tierAgreementByLabel([result()])).toEqual({
      constraint_missed: { both: 1, onlyFirst: 1, onlySecond: 0 },
      request_omitted: { both: 0, onlyFirst: 0, onlySecond: 1 },
      safety_violation: { both: 0, onlyFirst: 0, onlySecond: 1 },
    });
  });
});
