import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { callSignal } from '../../src/llm/providers/common.ts';

/**
 * Every model call gets its own time limit and follows the caller's signal (a run's Ctrl+C). Many calls share one
 * caller signal (a judge benchmark's self-consistency samples, eight conversations in flight): the caller's signal
 * must carry one listener, not one per call (past ten, Node printed a MaxListenersExceededWarning on every run).
 */
describe('callSignal', () => {
  it('twenty calls under one caller signal add one listener to it, and its abort reaches every call still in flight', () => {
    const caller = new AbortController();
    const calls = Array.from({ length: 20 }, () => callSignal(60_000, caller.signal));
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    // a finished call no longer follows the caller
    calls[0].done();
    caller.abort(new Error('stopped by the operator'));
    expect(calls[0].signal.aborted).toBe(false);
    for (const call of calls.slice(1)) {
      expect(call.signal.aborted).toBe(true);
      expect((call.signal.reason as Error).message).toBe('stopped by the operator');
      expect(call.timedOut()).toBe(false);
      call.done();
    }
  });

  it('a call started after the caller aborted is aborted at once', () => {
    const caller = new AbortController();
    caller.abort(new Error('already stopped'));
    const call = callSignal(60_000, caller.signal);
    expect(call.signal.aborted).toBe(true);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    call.done();
  });
});
