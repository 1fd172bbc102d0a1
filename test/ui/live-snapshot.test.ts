import { describe, expect, it } from 'vitest';
import type { ConversationResult, ConversationSpec, TurnRecord } from '../../src/domain/conversation.ts';
import { applyCampaignEvent, emptySnapshot, rigsLine } from '../../src/server/live-snapshot.ts';

const spec = { key: 'c1', seed: { text: 'Cheap Italian in Schwabing' }, persona: 'polite', mode: 'guided', strategies: ['safety_probe', 'context_confusion'] } as unknown as ConversationSpec;
const turn = (index: number) => ({ index, verdicts: [], targetsAfter: [] }) as unknown as TurnRecord;
const failed = {
  spec,
  status: 'completed',
  turns: [turn(0), turn(1)],
  verdicts: [{ tier: 'oracle', outcome: 'judged', pass: false, score: 0.4, dimensions: {}, completedShare: 0, reasoning: '' }],
} as unknown as ConversationResult;

describe('applyCampaignEvent (the live view state, server and UI alike)', () => {
  it('folds a run from start to finish', () => {
    const s = emptySnapshot();
    applyCampaignEvent(s, { type: 'run_started', runId: 'r1', name: 'quickstart', planned: 10, remaining: 7, budgetMs: 60_000 });
    expect(s).toMatchObject({ runId: 'r1', name: 'quickstart', planned: 10, done: 3, budgetMs: 60_000 });
    applyCampaignEvent(s, { type: 'conversation_started', runId: 'r1', key: 'c1', spec });
    expect(s.active).toHaveLength(1);
    expect(s.active[0]).toMatchObject({ key: 'c1', seedText: 'Cheap Italian in Schwabing', activeStrategies: ['safety_probe', 'context_confusion'] });
    applyCampaignEvent(s, { type: 'turn', runId: 'r1', key: 'c1', turn: turn(0), activeStrategies: ['context_confusion'] });
    applyCampaignEvent(s, { type: 'turn', runId: 'r1', key: 'c1', turn: turn(1), activeStrategies: [] });
    expect(s.active[0].turns.map((t) => t.index)).toEqual([0, 1]);
    expect(s.active[0].activeStrategies).toEqual([]);
    expect(s.feed.map((f) => f.turn.index)).toEqual([1, 0]);
    applyCampaignEvent(s, { type: 'conversation_finished', runId: 'r1', key: 'c1', result: failed });
    expect(s.active).toEqual([]);
    expect(s.recent[0]).toEqual({ key: 'c1', status: 'completed', outcome: 'fail', score: 0.4, turns: 2, rig: null, word: null });
    // a local run has no rigs
    expect(s.rigs).toEqual([]);
    expect(rigsLine(s)).toBe('');
    // the feed outlives the conversation, so the live view keeps showing its turns
    expect(s.feed).toHaveLength(2);
    applyCampaignEvent(s, { type: 'progress', runId: 'r1', done: 4, planned: 10, elapsedMs: 1234, budgetMs: 60_000 });
    expect(s).toMatchObject({ done: 4, elapsedMs: 1234 });
    applyCampaignEvent(s, { type: 'run_finished', runId: 'r1', status: 'budget_exhausted', done: 4, planned: 10 });
    expect(s.finalStatus).toBe('budget_exhausted');
  });

  it('a fleet run: which rig runs which conversation, a stalled one moving to another rig, and each rig\'s tally', () => {
    const s = emptySnapshot();
    applyCampaignEvent(s, { type: 'conversation_started', runId: 'r1', key: 'c1', spec });
    applyCampaignEvent(s, { type: 'conversation_started', runId: 'r1', key: 'c2', spec: { ...spec, key: 'c2' } });
    expect(s.active.map((c) => c.rig)).toEqual([null, null]);
    applyCampaignEvent(s, { type: 'conversation_rig', runId: 'r1', key: 'c1', rig: 'rig-b' });
    applyCampaignEvent(s, { type: 'conversation_rig', runId: 'r1', key: 'c2', rig: 'rig-b' });
    expect(s.active.map((c) => c.rig)).toEqual(['rig-b', 'rig-b']);
    expect(s.rigs).toEqual([{ rig: 'rig-b', running: 2, done: 0 }]);
    // rig-b's worker died: c2 went back to the queue and rig-a took it
    applyCampaignEvent(s, { type: 'conversation_rig', runId: 'r1', key: 'c2', rig: 'rig-a' });
    expect(s.rigs).toEqual([
      { rig: 'rig-a', running: 1, done: 0 },
      { rig: 'rig-b', running: 1, done: 0 },
    ]);
    applyCampaignEvent(s, { type: 'conversation_finished', runId: 'r1', key: 'c2', result: { ...failed, spec: { ...spec, key: 'c2' } } });
    expect(s.recent[0]).toMatchObject({ key: 'c2', rig: 'rig-a' });
    expect(s.active.map((c) => [c.key, c.rig])).toEqual([['c1', 'rig-b']]);
    expect(rigsLine(s)).toBe('rig-a 0 running, 1 done | rig-b 1 running, 0 done');
    // an event for a conversation that is not running (already finished) changes nothing
    applyCampaignEvent(s, { type: 'conversation_rig', runId: 'r1', key: 'c2', rig: 'rig-c' });
    expect(s.rigs.map((r) => r.rig)).toEqual(['rig-a', 'rig-b']);
    // stopped with c1 still on rig-b: it is abandoned, no rig runs anything any more
    applyCampaignEvent(s, { type: 'run_finished', runId: 'r1', status: 'interrupted', done: 1, planned: 2 });
    expect(s.active).toEqual([]);
    expect(rigsLine(s)).toBe('rig-a 0 running, 1 done | rig-b 0 running, 0 done');
  });

  it('folds the items of another kind (questions, task trials): what each asks while it runs, the kind\'s nouns and word', () => {
    const s = emptySnapshot();
    applyCampaignEvent(s, { type: 'run_started', runId: 'r2', name: 'carbench-train', kind: 'tool-agents', nouns: { item: 'task trial', items: 'task trials' }, planned: 4, remaining: 4, budgetMs: null });
    expect(s).toMatchObject({ kind: 'tool-agents', nouns: { item: 'task trial', items: 'task trials' }, done: 0 });
    applyCampaignEvent(s, { type: 'item_started', runId: 'r2', key: 'base_0#0', label: 'base_0 (trial 1)' });
    expect(s.active).toEqual([{ key: 'base_0#0', seedText: 'base_0 (trial 1)', persona: '', mode: 'tool-agents', turns: [], activeStrategies: [], rig: null, shape: 'item' }]);
    applyCampaignEvent(s, { type: 'item_finished', runId: 'r2', key: 'base_0#0', outcome: 'inconclusive', word: 'not_runnable' });
    expect(s.active).toEqual([]);
    expect(s.recent).toEqual([{ key: 'base_0#0', status: 'completed', outcome: 'inconclusive', score: null, turns: 0, rig: null, word: 'not_runnable' }]);
    expect(s.tally.outcomes.inconclusive).toBe(1);
    // a dialogue run's events carry no nouns: conversations
    expect(emptySnapshot().nouns).toEqual({ item: 'conversation', items: 'conversations' });
  });

  it('keeps the feed and the recent list bounded', () => {
    const s = emptySnapshot();
    applyCampaignEvent(s, { type: 'conversation_started', runId: 'r1', key: 'c1', spec });
    for (let i = 0; i < 100; i++) applyCampaignEvent(s, { type: 'turn', runId: 'r1', key: 'c1', turn: turn(i), activeStrategies: [] });
    expect(s.feed).toHaveLength(30);
    expect(s.feed[0].turn.index).toBe(99);
    for (let i = 0; i < 80; i++) applyCampaignEvent(s, { type: 'conversation_finished', runId: 'r1', key: `k${i}`, result: failed });
    expect(s.recent).toHaveLength(50);
    expect(s.recent[0].key).toBe('k79');
  });
});
