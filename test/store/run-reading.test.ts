import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ResultStore } from '../../src/store/store.ts';
import { result, spec } from './fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-run-reading-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A run of `planned` conversations of which the first `stored` are stored (one turn each; every third one failing). */
function runOf(store: ResultStore, planned: number, stored: number): string {
  const keys = Array.from({ length: planned }, (_, i) => `k${String(i).padStart(3, '0')}`);
  const runId = store.createRun({ name: 'reading', mode: 'guided', config: {}, plan: keys.map((key) => spec(key)) });
  for (const key of keys.slice(0, stored)) store.saveConversation(runId, conversation(key));
  return runId;
}

const conversation = (key: string) => result(key, [{ labels: Number(key.slice(1)) % 3 === 0 ? ['constraint_missed'] : [] }, {}], { score: Number(key.slice(1)) % 3 === 0 ? 0.4 : 0.9 });

describe('reading a run from the store', () => {
  it('streams a batch at a time: what is stored after the stream started, past its first batch, is read too', () => {
    const store = ResultStore.open(join(dir, 'batches.db'));
    // 300 planned, the first 200 stored; the last planned one is stored once the stream has handed out its first conversation
    const runId = runOf(store, 300, 200);
    const stream = store.conversations(runId);
    expect(stream.next().value?.spec.key).toBe('k000');
    // a write while the stream is open: no statement is left running between conversations
    store.saveConversation(runId, conversation('k299'));
    const rest = [...stream].map((c) => c.spec.key);
    // had the stream read the whole run up front, k299 would be missing: it holds a bounded batch, not the run
    expect(rest).toHaveLength(200);
    expect(rest.at(-1)).toBe('k299');
    expect(rest.slice(0, 3)).toEqual(['k001', 'k002', 'k003']);
    store.close();
  });

  it('gives each conversation its own turns, in order, as they were saved', () => {
    const store = ResultStore.open(join(dir, 'turns.db'));
    const runId = runOf(store, 70, 70);
    const read = [...store.conversations(runId)];
    expect(read).toEqual(Array.from({ length: 70 }, (_, i) => conversation(`k${String(i).padStart(3, '0')}`)));
    expect(store.getConversation(runId, 'k069')).toEqual(conversation('k069'));
    store.close();
  });

  it('counts outcomes of every run in one query, the same as run by run, item runs included', () => {
    const store = ResultStore.open(join(dir, 'outcomes.db'));
    const dialogue = runOf(store, 9, 7);
    const empty = runOf(store, 3, 0);
    const items = store.createItemRun({ name: 'qa', kind: 'manual-qa', config: {}, plan: [{ key: 'q1', item: {} }, { key: 'q2', item: {} }, { key: 'q3', item: {} }] });
    store.saveItemResult(items, 'q1', 'pass', {});
    store.saveItemResult(items, 'q2', 'fail', {});
    const all = store.outcomeCountsByRun();
    expect(all.get(dialogue)).toEqual({ fail: 3, pass: 4 });
    expect(all.get(items)).toEqual({ pass: 1, fail: 1 });
    expect(all.has(empty)).toBe(false);
    for (const run of [dialogue, empty, items]) expect(store.outcomeCounts(run)).toEqual(all.get(run) ?? {});
    store.close();
  });

  it('stamps a run anew when a conversation is stored, its status changes or a fact is recorded', () => {
    const store = ResultStore.open(join(dir, 'stamps.db'));
    const runId = runOf(store, 3, 1);
    const stamp = () => store.runStamp(store.getRun(runId)!);
    const seen = [stamp()];
    expect(stamp()).toBe(seen[0]);
    store.saveConversation(runId, conversation('k001'));
    seen.push(stamp());
    store.setRunStatus(runId, 'completed');
    seen.push(stamp());
    store.addRunFact(runId, 'note', { any: 1 });
    seen.push(stamp());
    expect(new Set(seen).size).toBe(4);
    store.close();
  });
});
