import { describe, expect, it } from 'vitest';
import type { ConversationResult, ConversationSpec, TurnRecord } from '../../src/domain/conversation.ts';
import { applyCampaignEvent, emptySnapshot, liveRate, TIMELINE_LIMIT } from '../../src/server/live-snapshot.ts';

const spec = (key: string) => ({ key, seed: { text: 'x' }, persona: 'neutral', mode: 'guided', strategies: [] }) as unknown as ConversationSpec;
const labelled = (label: string) =>
  ({ index: 0, verdicts: [{ tier: 'oracle', judge: 'oracle', outcome: 'judged', labels: [{ label, targetId: null, evidence: '' }] }], targetsAfter: [] }) as unknown as TurnRecord;
const result = (key: string, pass: boolean) =>
  ({ spec: spec(key), status: 'completed', turns: [], verdicts: [{ tier: 'oracle', outcome: 'judged', pass, score: pass ? 1 : 0.2, dimensions: {}, completedShare: 0, reasoning: '' }] }) as unknown as ConversationResult;

describe('the Live screen\'s tally, findings plot and rate', () => {
  it('records the findings by label each time a conversation finishes', () => {
    const s = emptySnapshot();
    applyCampaignEvent(s, { type: 'run_started', runId: 'r', name: 'q', planned: 4, remaining: 4, budgetMs: null });
    applyCampaignEvent(s, { type: 'turn', runId: 'r', key: 'a', turn: labelled('safety_violation'), activeStrategies: [] });
    applyCampaignEvent(s, { type: 'conversation_finished', runId: 'r', key: 'a', result: result('a', false) });
    applyCampaignEvent(s, { type: 'turn', runId: 'r', key: 'b', turn: labelled('constraint_missed'), activeStrategies: [] });
    applyCampaignEvent(s, { type: 'turn', runId: 'r', key: 'b', turn: labelled('safety_violation'), activeStrategies: [] });
    applyCampaignEvent(s, { type: 'conversation_finished', runId: 'r', key: 'b', result: result('b', true) });
    expect(s.timeline.map((p) => [p.finished, p.labels])).toEqual([
      [1, { safety_violation: 1 }],
      [2, { safety_violation: 2, constraint_missed: 1 }],
    ]);
  });

  it('keeps at most TIMELINE_LIMIT points, the newest among them', () => {
    const s = emptySnapshot();
    for (let i = 0; i < TIMELINE_LIMIT * 3; i++) applyCampaignEvent(s, { type: 'conversation_finished', runId: 'r', key: `c${i}`, result: result(`c${i}`, true) });
    expect(s.timeline.length).toBeLessThanOrEqual(TIMELINE_LIMIT);
    expect(s.timeline[0].finished).toBe(1);
    expect(s.timeline[s.timeline.length - 1].finished).toBe(TIMELINE_LIMIT * 3);
  });

  it('estimates the rate and the time left from this start, capped by the budget', () => {
    const base = { ...emptySnapshot(), planned: 100, done: 10, elapsedMs: 60_000, budgetMs: null };
    base.tally.outcomes = { pass: 6, fail: 4, inconclusive: 0, error: 0 };
    expect(liveRate(base)).toEqual({ perMinute: 10, leftMs: 9 * 60_000 });
    expect(liveRate({ ...base, budgetMs: 120_000 }).leftMs).toBe(60_000);
    expect(liveRate({ ...base, done: 100 }).leftMs).toBeNull();
    expect(liveRate(emptySnapshot())).toEqual({ perMinute: null, leftMs: null });
  });
});
