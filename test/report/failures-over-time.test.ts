import { describe, expect, it } from 'vitest';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import type { FailureLabel } from '../../src/domain/taxonomy.ts';
import { threeOrMoreFailureTypes } from '../../src/analysis/compare.ts';
import { cumulativeFailures, failuresOverTimeSection } from '../../src/report/failures-over-time-section.ts';

/** A completed conversation judged by C alone (failOn []) that started at `start` (minutes) and took `minutes`, with one turn carrying `labels`. */
function conversation(start: number, minutes: number, pass: boolean, labels: FailureLabel[]): ConversationResult {
  return {
    status: 'completed',
    failOn: [],
    inconclusive: 'pass',
    startedAt: new Date(Date.UTC(2026, 0, 1, 10, start)).toISOString(),
    durationMs: minutes * 60_000,
    turns: [{ index: 0, verdicts: [{ tier: 'oracle', judge: 'oracle', outcome: 'judged', labels: labels.map((label) => ({ label, targetId: null, evidence: '', tier: 'oracle' })), targetUpdates: [], reasoning: '' }] }],
    verdicts: [{ tier: 'oracle', judge: 'oracle', outcome: 'judged', dimensions: {}, completedShare: 1, score: pass ? 0.9 : 0.5, pass, reasoning: '' }],
  } as unknown as ConversationResult;
}

describe('failures over time (Negi et al., Fig. 1 bottom) and the share with ≥ 3 failure types (§VI)', () => {
  const run = [
    conversation(0, 2, false, ['planning_poor', 'safety_violation', 'constraint_missed']),
    conversation(0, 5, true, []),
    conversation(1, 2, false, ['planning_poor']),
    conversation(4, 4, false, ['context_forgotten', 'planning_poor', 'ambiguity_unresolved', 'request_omitted']),
  ];

  it('counts the failed conversations at the moment each ended, in minutes from the first start', () => {
    // ends at 2 (fail), 3 (fail), 5 (pass), 8 (fail) minutes
    const ended = run.map((r) => ({ startMs: Date.parse(r.startedAt), endMs: Date.parse(r.startedAt) + r.durationMs, failed: r.verdicts[0].pass === false }));
    expect(cumulativeFailures(ended)).toEqual([
      { minutes: 2, failed: 1 },
      { minutes: 3, failed: 2 },
      { minutes: 5, failed: 2 },
      { minutes: 8, failed: 3 },
    ]);
  });

  it('the report section states the total and the ≥ 3 share from the summary and draws the curve', () => {
    const collector = failuresOverTimeSection();
    for (const r of run) collector.add(r);
    // the summary's per-conversation distinct failure types of the run above
    const section = collector.finish({ perConversation: [3, 0, 1, 4].map((uniqueFailureTypes) => ({ uniqueFailureTypes })) } as never)!;
    expect(section.title).toBe('Failures over time');
    expect(section.html).toContain('3 of 4 in 8.0 minutes');
    // two conversations (3 and 4 distinct labels) of four
    expect(section.html).toContain('2 of 4 conversations (50.0 %) have at least three distinct failure types');
    expect(section.html).toMatch(/<svg role="img"[^>]*3 at the end/);
    expect(failuresOverTimeSection().finish({ perConversation: [] })).toBeNull();
  });

  it('compare reports the share of conversations with ≥ 3 distinct failure types', () => {
    const perConversation = [3, 0, 1, 4, 2].map((uniqueFailureTypes) => ({ uniqueFailureTypes }));
    expect(threeOrMoreFailureTypes({ perConversation } as never)).toBe(2 / 5);
    expect(threeOrMoreFailureTypes({ perConversation: [] })).toBeNull();
  });
});
