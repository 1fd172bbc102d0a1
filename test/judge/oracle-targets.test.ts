import { describe, expect, it } from 'vitest';
import type { ConversationSpec, TurnRecord } from '../../src/domain/conversation.ts';
import type { Target, TargetStatus } from '../../src/domain/targets.ts';
import { OracleJudge } from '../../src/judge/oracle.ts';
import { completedTargetShare } from '../../src/judge/targets.ts';

function target(id: string, status: TargetStatus): Target {
  return { id, request: { intent: 'set_climate', setpointC: 21 }, status, introducedTurn: 0, completedTurn: status === 1 ? 0 : null };
}

/** One turn that asks for every target and that the oracle judged and found no failure in: every dimension scores 2. */
function cleanTurn(ids: string[]): TurnRecord {
  return {
    utterance: { annotation: { addresses: ids, returnsTo: [] } },
    verdicts: [{ tier: 'oracle', judge: 'oracle', outcome: 'judged', labels: [], targetUpdates: [], reasoning: '' }],
  } as unknown as TurnRecord;
}

async function oracleT(statuses: TargetStatus[]) {
  const targets = statuses.map((s, i) => target(`t${i + 1}`, s));
  return new OracleJudge().evaluateConversation({ spec: {} as ConversationSpec, turns: [cleanTurn(targets.map((t) => t.id))], targets });
}

describe('the completed-target share T', () => {
  it('is completed / (completed + incomplete): dropped targets do not count, none live gives 1', () => {
    expect(completedTargetShare([1, 0, -1])).toBe(0.5);
    expect(completedTargetShare([1, 1, 0, -1, -1])).toBeCloseTo(2 / 3, 12);
    expect(completedTargetShare([0, -1])).toBe(0);
    expect(completedTargetShare([-1, -1])).toBe(1);
    expect(completedTargetShare([])).toBe(1);
  });

  it('is the T the oracle scores a conversation with', async () => {
    const half = await oracleT([1, 0, -1]);
    // C = (T + 4 · 2/2) / 5 = (0.5 + 4) / 5
    expect(half).toMatchObject({ outcome: 'judged', completedShare: 0.5, pass: true });
    expect(half.score).toBeCloseTo(0.9, 12);
    expect(await oracleT([0, 0, -1])).toMatchObject({ completedShare: 0, score: 0.8, pass: true });
    expect(await oracleT([-1, -1])).toMatchObject({ completedShare: 1, score: 1 });
  });
});
