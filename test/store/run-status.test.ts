import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { ResultStore } from '../../src/store/store.ts';

describe('run status unit_unreachable (migration 5: the runs table rebuilt with the new status allowed)', () => {
  it('upgrades a version-4 workspace keeping every row that refers to a run; the new status is stored, and deleting a run still cascades', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'run-status-')), 'icabench.db');
    const db = new Database(path);
    db.pragma('foreign_keys = ON');
    db.exec('CREATE TABLE migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const m of MIGRATIONS.filter((m) => m.version <= 4)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO migrations VALUES (?, ?, ?)').run(m.version, m.description, 'then');
    }
    for (const id of ['r1', 'r2']) {
      db.prepare("INSERT INTO runs (id, name, mode, config, created_at, status, kind) VALUES (?, 'old', 'guided', '{}', 'then', 'interrupted', 'dialogue')").run(id);
      db.prepare("INSERT INTO planned (run_id, key, ordinal, spec) VALUES (?, 'c1', 0, '{}')").run(id);
      db.prepare("INSERT INTO conversations (run_id, key, status, error, score, pass, outcome, started_at, duration_ms, turn_count, label_list, result) VALUES (?, 'c1', 'sut_error', 'unavailable: x', NULL, NULL, 'error', 'then', 1, 0, '', '{}')").run(id);
      db.prepare("INSERT INTO run_facts (run_id, kind, at, data) VALUES (?, 'run.invocation', 'then', '{}')").run(id);
      db.prepare("INSERT INTO item_results (run_id, key, ordinal, item) VALUES (?, 'q1', 0, '{}')").run(id);
    }
    expect(() => db.prepare("UPDATE runs SET status = 'unit_unreachable' WHERE id = 'r1'").run()).toThrow(/CHECK constraint/);
    db.close();

    const store = ResultStore.open(path);
    try {
      expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
      const count = (table: string) => (new Database(path, { readonly: true }).prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
      for (const table of ['runs', 'planned', 'conversations', 'run_facts', 'item_results']) expect(count(table), table).toBe(2);
      store.setRunStatus('r1', 'unit_unreachable');
      expect(store.getRun('r1')).toMatchObject({ status: 'unit_unreachable' });
      expect(store.getRun('r1')!.finishedAt).not.toBeNull();
      expect(store.listRuns().map((r) => [r.id, r.status]).sort()).toEqual([
        ['r1', 'unit_unreachable'],
        ['r2', 'interrupted'],
      ]);
      // the references to runs survived the rebuild: removing a run removes what belongs to it
      const raw = new Database(path);
      raw.pragma('foreign_keys = ON');
      raw.prepare("DELETE FROM runs WHERE id = 'r2'").run();
      raw.close();
      for (const table of ['planned', 'conversations', 'run_facts', 'item_results']) expect(count(table), table).toBe(1);
    } finally {
      store.close();
    }
  });
});
