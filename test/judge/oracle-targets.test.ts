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
  it('is |{g : σ_g = 1}| / |G| (Negi et al., Eq. 1): a dropped target is not completed, all dropped gives 0', () => {
    // three targets, one completed, one open, one dropped: 1/3 (the old reading left the dropped one out: 1/2)
    expect(completedTargetShare([1, 0, -1])).toBeCloseTo(1 / 3, 12);
    // two of five completed
    expect(completedTargetShare([1, 1, 0, -1, -1])).toBe(0.4);
    expect(completedTargetShare([0, -1])).toBe(0);
    // every target dropped: nothing completed (the old reading gave 1)
    expect(completedTargetShare([-1, -1])).toBe(0);
    expect(completedTargetShare([1, 1])).toBe(1);
    // no target counted at all: nothing the assistant could miss
    expect(completedTargetShare([])).toBe(1);
  });

  it('is the T the oracle scores a conversation with', async () => {
    const third = await oracleT([1, 0, -1]);
    // C = (T + 4 · 2/2) / 5 = (1/3 + 4) / 5 = 13/15
    expect(third).toMatchObject({ outcome: 'judged', pass: true });
    expect(third.completedShare).toBeCloseTo(1 / 3, 12);
    expect(third.score).toBeCloseTo(13 / 15, 12);
    expect(await oracleT([0, 0, -1])).toMatchObject({ completedShare: 0, score: 0.8, pass: true });
    // every target dropped: T = 0, C = 4/5
    expect(await oracleT([-1, -1])).toMatchObject({ completedShare: 0, score: 0.8 });
  });
});
