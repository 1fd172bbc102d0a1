import { describe, expect, it } from 'vitest';
import type { ConversationResult, TurnVerdict } from '../../src/domain/conversation.ts';
import { judgeAgreementByLabel, listJudgeDisagreements } from '../../src/judge/agreement.ts';
import { spec, TARGETS, turn } from './fixtures.ts';

const verdict = (judge: string, labels: Array<[string, string | null]>, outcome: TurnVerdict['outcome'] = 'judged'): TurnVerdict => {
  const tier = judge === 'oracle' ? 'oracle' : 'llm';
  return {
    tier,
    judge,
    outcome,
    labels: labels.map(([label, targetId]) => ({ label: label as TurnVerdict['labels'][number]['label'], targetId, evidence: '', tier })),
    targetUpdates: [],
    reasoning: '',
  };
};

const A = 'ollama:judge-a';
const B = 'openai-compat:http://127.0.0.1:8080/v1#judge-b';

/** Three judges; the model judges are both compared with the oracle and with each other. */
function result(): ConversationResult {
  const turns = [turn(0, 'a', 'A'), turn(1, 'b', 'B'), turn(2, 'c', 'C'), turn(3, 'd', 'D')];
  turns[0].verdicts = [verdict('oracle', [['constraint_missed', 'g1']]), verdict(A, [['constraint_missed', 'g1']]), verdict(B, [['constraint_missed', 'g1']])];
  turns[1].verdicts = [verdict('oracle', [['constraint_missed', 'g1']]), verdict(A, [['request_omitted', 'g1'], ['safety_violation', null]]), verdict(B, [['constraint_missed', 'g1']])];
  turns[2].verdicts = [verdict('oracle', [['context_forgotten', null]]), verdict(A, [], 'judge_error'), verdict(B, [['context_forgotten', null]])];
  turns[3].verdicts = [verdict('oracle', []), verdict(A, []), verdict(B, [], 'inconclusive')];
  return { spec: spec(), status: 'completed', error: null, turns, targets: TARGETS, verdicts: [], startedAt: '', durationMs: 0 };
}

describe('judge disagreements over every pair of judges', () => {
  it('lists the turns two judges both judged and labelled differently, naming both judges', () => {
    const shared = { conversationKey: 'llm-test-0', turnIndex: 1, userText: 'b', replyText: 'B' };
    expect(listJudgeDisagreements(result())).toEqual([
      { ...shared, judges: ['oracle', A], onlyFirst: ['constraint_missed@g1'], onlySecond: ['request_omitted@g1', 'safety_violation'] },
      // the second model judge is compared with the first, not only with the oracle
      { ...shared, judges: [A, B], onlyFirst: ['request_omitted@g1', 'safety_violation'], onlySecond: ['constraint_missed@g1'] },
    ]);
  });

  it('counts agreement per label for each pair', () => {
    expect(judgeAgreementByLabel([result()])).toEqual({
      [`oracle vs ${A}`]: {
        constraint_missed: { both: 1, onlyFirst: 1, onlySecond: 0 },
        request_omitted: { both: 0, onlyFirst: 0, onlySecond: 1 },
        safety_violation: { both: 0, onlyFirst: 0, onlySecond: 1 },
      },
      [`oracle vs ${B}`]: {
        constraint_missed: { both: 2, onlyFirst: 0, onlySecond: 0 },
        context_forgotten: { both: 1, onlyFirst: 0, onlySecond: 0 },
      },
      [`${A} vs ${B}`]: {
        constraint_missed: { both: 1, onlyFirst: 0, onlySecond: 1 },
        request_omitted: { both: 0, onlyFirst: 1, onlySecond: 0 },
        safety_violation: { both: 0, onlyFirst: 1, onlySecond: 0 },
      },
    });
  });
});
