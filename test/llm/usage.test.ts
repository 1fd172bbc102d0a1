import { describe, expect, it } from 'vitest';
import { LlmUsageTracker, type LlmCallRecord } from '../../src/llm/usage.ts';
import { LlmCallRecorder, RUN_FACTS } from '../../src/run/run-facts.ts';

const call = (conversationKey: string): LlmCallRecord => ({ ref: 'ollama:sim', kind: 'simulator', promptTokens: 10, completionTokens: 2, latencyMs: 5, retries: 0, error: null, conversationKey });

/**
 * #26 item 4: a run's memory is bounded by what is in flight, not by how many calls it made. The recorder hands each
 * item's calls to the store and the tracker forgets them, so a 10,000-conversation model-driven run does not keep
 * a quarter of a million call records until it ends.
 */
describe('the run tracker holds only the calls not stored yet', () => {
  it("each take hands over the calls made since the last one, once, and leaves the tracker empty", () => {
    const tracker = new LlmUsageTracker();
    const recorder = new LlmCallRecorder(tracker);
    tracker.record(call('c1'));
    tracker.record(call('c2'));
    const [fact] = recorder.take('run-1', 'c1');
    expect(fact.kind).toBe(RUN_FACTS.llmCalls);
    expect((fact.data as { calls: LlmCallRecord[] }).calls.map((c) => c.conversationKey)).toEqual(['c1', 'c2']);
    expect(tracker.records).toHaveLength(0);
    expect(recorder.take('run-1', 'c2')).toEqual([]);
    tracker.record(call('c3'));
    const [next] = recorder.take('run-1', 'c3');
    expect((next.data as { calls: LlmCallRecord[] }).calls.map((c) => c.conversationKey)).toEqual(['c3']);
    expect(tracker.records).toHaveLength(0);
  });

  it('the end of an invocation records an empty fact when asked to (always)', () => {
    const recorder = new LlmCallRecorder(new LlmUsageTracker());
    const [fact] = recorder.take('run-1', null, true);
    expect((fact.data as { calls: LlmCallRecord[] }).calls).toEqual([]);
  });
});
