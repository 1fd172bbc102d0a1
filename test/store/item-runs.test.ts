import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { ResultStore } from '../../src/store/store.ts';

const stores: ResultStore[] = [];
afterEach(() => {
  while (stores.length) stores.pop()!.close();
});
const open = (path = join(mkdtempSync(join(tmpdir(), 'items-')), 'icabench.db')) => {
  const store = ResultStore.open(path);
  stores.push(store);
  return store;
};
const plan = [
  { key: 'q1', item: { question: 'How do I wash the car?' } },
  { key: 'q2', item: { question: 'What is the tyre pressure?' } },
  { key: 'q3', item: { question: 'Is it safe to tow?' } },
];

describe('item-based runs in the store (migration 4)', () => {
  it('plans items, stores each result exactly once, and resumes from what is left', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'items-')), 'icabench.db');
    const store = open(path);
    const runId = store.createItemRun({ name: 'manual', kind: 'manual-qa', config: { kind: 'manual-qa' }, plan });
    expect(store.getRun(runId)).toMatchObject({ kind: 'manual-qa', mode: 'items', planned: 3, stored: 0, status: 'running' });
    store.saveItemResult(runId, 'q2', 'pass', { answer: 'Check monthly.' });
    expect(() => store.saveItemResult(runId, 'q2', 'fail', {})).toThrow(/item "q2" is already stored/);
    expect(() => store.saveItemResult(runId, 'q9', 'pass', {})).toThrow(/no planned item "q9"/);
    expect(() => store.saveItemResult('nope', 'q1', 'pass', {})).toThrow(/no run with id "nope"/);
    expect(store.remainingItems(runId).map((r) => r.key)).toEqual(['q1', 'q3']);
    expect(store.getRun(runId)).toMatchObject({ stored: 1 });
    store.close();
    stores.pop();

    const reopened = open(path);
    expect(reopened.remainingItems(runId)).toEqual([plan[0], plan[2]]);
    reopened.saveItemResult(runId, 'q1', 'fail', { answer: 'maybe' });
    const all = reopened.itemResults(runId);
    expect(all.map((r) => [r.key, r.ordinal, r.outcome])).toEqual([['q1', 0, 'fail'], ['q2', 1, 'pass'], ['q3', 2, null]]);
    expect(all[0].result).toEqual({ answer: 'maybe' });
    expect(all[2]).toMatchObject({ result: null, finishedAt: null, item: plan[2].item });
    expect(reopened.itemResults(runId, { done: true }).map((r) => r.key)).toEqual(['q1', 'q2']);
  });

  it('rejects a run without its kind, duplicate keys and annotations of items not stored; keeps annotations in order', () => {
    const store = open();
    expect(() => store.createItemRun({ name: 'x', kind: '', config: {}, plan })).toThrow(/needs its campaign kind \(runs of conversations use createRun\)/);
    expect(() => store.createItemRun({ name: 'x', kind: 'manual-qa', config: {}, plan: [plan[0], plan[0]] })).toThrow(/"q1" twice/);
    const runId = store.createItemRun({ name: 'x', kind: 'manual-qa', config: {}, plan });
    expect(() => store.saveItemAnnotation(runId, 'q1', 'ann', {})).toThrow(/no stored item "q1"/);
    store.saveItemResult(runId, 'q1', 'pass', {});
    store.saveItemAnnotation(runId, 'q1', 'ann', { covered: [true] });
    store.saveItemAnnotation(runId, 'q1', 'bob', { covered: [false] });
    expect(store.itemAnnotations(runId).map((a) => [a.key, a.rater, a.data])).toEqual([
      ['q1', 'ann', { covered: [true] }],
      ['q1', 'bob', { covered: [false] }],
    ]);
  });

  it('upgrades a version-3 workspace in place: old runs become dialogue runs', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'items-')), 'icabench.db');
    const db = new Database(path);
    db.exec('CREATE TABLE migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const m of MIGRATIONS.filter((m) => m.version <= 3)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO migrations VALUES (?, ?, ?)').run(m.version, m.description, 'then');
    }
    db.prepare("INSERT INTO runs (id, name, mode, config, created_at, status) VALUES ('old', 'old', 'guided', '{}', 'then', 'completed')").run();
    db.close();
    const store = open(path);
    expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
    expect(store.getRun('old')).toMatchObject({ kind: 'dialogue', mode: 'guided', planned: 0, stored: 0 });
  });
});
