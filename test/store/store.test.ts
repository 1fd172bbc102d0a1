import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/domain/validation.ts';
import { exportJsonl } from '../../src/store/export.ts';
import { combinedVerdict } from '../../src/analysis/verdict.ts';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { DuplicateConversationError, ResultStore, StoreError, newRunId } from '../../src/store/store.ts';
import { conversationVerdict, result, spec, turnVerdict } from './fixtures.ts';

let dir: string;
let store: ResultStore;
const dbPath = () => join(dir, 'results.sqlite');

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'icabench-store-'));
  store = ResultStore.open(dbPath());
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const plan = (n: number) => Array.from({ length: n }, (_, i) => spec(`c${String(i).padStart(3, '0')}`));

describe('ResultStore', () => {
  it('creates runs with a plan and reports them', () => {
    const id = store.createRun({ name: 'guided', mode: 'guided', config: { maxTurns: 8 }, plan: plan(3), meta: { host: 'bench-1' } });
    expect(id).toMatch(/^\d{8}-\d{6}-[a-z0-9_-]{4}$/);
    const run = store.getRun(id)!;
    expect(run).toMatchObject({ name: 'guided', mode: 'guided', status: 'running', planned: 3, stored: 0, config: { maxTurns: 8 }, meta: { host: 'bench-1' } });
    expect(run.finishedAt).toBeNull();
    store.setRunStatus(id, 'completed');
    expect(store.getRun(id)!.status).toBe('completed');
    expect(store.getRun(id)!.finishedAt).not.toBeNull();
    expect(store.listRuns().map((r) => r.id)).toEqual([id]);
    expect(store.getRun('nope')).toBeNull();
    expect(() => store.setRunStatus('nope', 'completed')).toThrow(/no run with id "nope"/);
    expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
  });

  it("keeps a run's facts in the order recorded, by kind, and only for known runs", () => {
    const id = store.createRun({ name: 'facts', mode: 'guided', config: {}, plan: plan(1) });
    store.addRunFact(id, 'bridge.unit_replaced', { previous: '10.0.0.2', next: '10.0.0.3' });
    store.addRunFact(id, 'llm.usage', { calls: 3 });
    store.addRunFact(id, 'llm.usage', { calls: 5 });
    expect(store.runFacts(id).map((f) => f.kind)).toEqual(['bridge.unit_replaced', 'llm.usage', 'llm.usage']);
    expect(store.runFacts(id, 'llm.usage').map((f) => f.data)).toEqual([{ calls: 3 }, { calls: 5 }]);
    expect(() => store.addRunFact('nope', 'x', {})).toThrow(/no run with id "nope"/);
  });

  it('run ids sort by creation time', () => {
    const earlier = newRunId(new Date('2026-01-01T10:00:00Z'));
    const later = newRunId(new Date('2026-01-01T10:00:01Z'));
    expect(earlier.startsWith('20260101-100000-')).toBe(true);
    expect([later, earlier].sort()).toEqual([earlier, later]);
  });

  it('rejects a plan with duplicate keys or invalid specs', () => {
    expect(() => store.createRun({ name: 'x', mode: 'guided', config: {}, plan: [spec('a'), spec('a')] })).toThrow(/"a" twice/);
    const bad = { ...spec('b'), maxTurns: 0 };
    expect(() => store.createRun({ name: 'x', mode: 'guided', config: {}, plan: [bad] })).toThrow(/plan\[0\].*maxTurns/);
    expect(store.listRuns()).toEqual([]);
  });

  it('round-trips a conversation exactly', () => {
    const id = store.createRun({ name: 'r', mode: 'guided', config: {}, plan: plan(2) });
    const original = result('c000', [{ strategy: 'constraint_stacking', labels: ['constraint_missed'] }, { labels: [], reply: null }], {
      spec: spec('c000'),
      score: 0.5,
    });
    store.saveConversation(id, original);
    expect(store.getConversation(id, 'c000')).toEqual(original);
    expect(store.getConversation(id, 'c001')).toBeNull();
    expect([...store.conversations(id)]).toEqual([original]);
    expect(store.countConversations(id)).toBe(1);
    expect(store.getRun(id)!.stored).toBe(1);
  });

  it('tracks what remains for resume and never stores a key twice', () => {
    const id = store.createRun({ name: 'r', mode: 'guided', config: {}, plan: plan(5) });
    store.saveConversation(id, result('c001', [{}], { spec: spec('c001') }));
    store.saveConversation(id, result('c003', [{}], { spec: spec('c003') }));
    expect([...store.remainingSpecs(id)].map((s) => s.key)).toEqual(['c000', 'c002', 'c004']);
    expect([...store.remainingSpecs(id)][0]).toEqual(spec('c000'));

    expect(() => store.saveConversation(id, result('c001', [{}, {}], { spec: spec('c001') }))).toThrow(DuplicateConversationError);
    expect(store.getConversation(id, 'c001')!.turns).toHaveLength(1);
    expect(store.countConversations(id)).toBe(2);
    expect(() => store.saveConversation(id, result('zzz', [{}], { spec: spec('zzz') }))).toThrow(/no planned conversation "zzz"/);
    expect(() => store.saveConversation('nope', result('c000', [{}], { spec: spec('c000') }))).toThrow(/no run with id/);
  });

  it('writes the facts that come with a conversation in its transaction: a second copy writes neither', () => {
    const id = store.createRun({ name: 'r', mode: 'guided', config: {}, plan: plan(2) });
    const frames = { conversation: 'c000', framesSent: 12, framesRejected: 0 };
    store.saveConversation(id, result('c000', [{}], { spec: spec('c000') }), [], [{ kind: 'vehicle.frames', data: frames }]);
    expect(store.runFacts(id, 'vehicle.frames').map((f) => f.data)).toEqual([frames]);
    expect(() => store.saveConversation(id, result('c000', [{}], { spec: spec('c000') }), [], [{ kind: 'vehicle.frames', data: frames }])).toThrow(DuplicateConversationError);
    expect(store.runFacts(id, 'vehicle.frames')).toHaveLength(1);
  });

  it('bad input loses nothing: invalid results are rejected before any write', () => {
    const id = store.createRun({ name: 'r', mode: 'guided', config: {}, plan: plan(3) });
    const good = result('c000', [{ labels: ['fallback_response'] }], { spec: spec('c000') });
    store.saveConversation(id, good);
    const invalid = { ...result('c001', [{}], { spec: spec('c001') }), status: 'exploded' };
    expect(() => store.saveConversation(id, invalid as never)).toThrow(ValidationError);
    expect(() => store.saveConversation(id, invalid as never)).toThrow(/conversation "c001".*status/);
    const badTurn = result('c002', [{}], { spec: spec('c002') });
    (badTurn.turns[0] as { latencyMs: number }).latencyMs = -1;
    expect(() => store.saveConversation(id, badTurn)).toThrow(/turns\.0\.latencyMs/);
    expect(() => store.saveConversation(id, result('c002', [{}], { spec: spec('c002') }), [{ name: 'a', mime: 'x/y' }])).toThrow(/exactly one of bytes or path/);

    expect(store.getConversation(id, 'c000')).toEqual(good);
    expect([...store.remainingSpecs(id)].map((s) => s.key)).toEqual(['c001', 'c002']);
    const db = new Database(dbPath(), { readonly: true });
    expect((db.prepare('SELECT COUNT(*) AS n FROM turns').get() as { n: number }).n).toBe(1);
    expect((db.prepare('SELECT COUNT(*) AS n FROM labels').get() as { n: number }).n).toBe(1);
    db.close();
  });

  it('writes queryable turns, labels and scores rows', () => {
    const id = store.createRun({ name: 'r', mode: 'guided', config: {}, plan: plan(1) });
    const r = result('c000', [{ strategy: 'safety_probe', labels: ['safety_violation'], extra: [turnVerdict('llm', ['safety_violation', 'planning_poor'])] }], {
      spec: spec('c000'),
      verdicts: [conversationVerdict('oracle', 0.4, false), conversationVerdict('llm', null, null, 'inconclusive')],
    });
    store.saveConversation(id, r);
    const db = new Database(dbPath(), { readonly: true });
    expect(db.prepare('SELECT idx, utterance, strategy, reply_text FROM turns').all()).toEqual([{ idx: 0, utterance: 'utterance 0', strategy: 'safety_probe', reply_text: 'reply 0' }]);
    expect(db.prepare('SELECT label, tier, judge FROM labels ORDER BY tier, label').all()).toEqual([
      { label: 'planning_poor', tier: 'llm', judge: 'ollama:judge-model' },
      { label: 'safety_violation', tier: 'llm', judge: 'ollama:judge-model' },
      { label: 'safety_violation', tier: 'oracle', judge: 'oracle' },
    ]);
    expect(db.prepare("SELECT tier, judge, dimension, score, outcome FROM scores WHERE dimension = 'C' ORDER BY tier").all()).toEqual([
      { tier: 'llm', judge: 'ollama:judge-model', dimension: 'C', score: null, outcome: 'inconclusive' },
      { tier: 'oracle', judge: 'oracle', dimension: 'C', score: 0.4, outcome: 'judged' },
    ]);
    expect(db.prepare('SELECT COUNT(*) AS n FROM scores').get()).toEqual({ n: 4 });
    db.close();
  });

  it('pages summary rows with filters, labels from the deciding tier only', () => {
    const id = store.createRun({ name: 'r', mode: 'guided', config: {}, plan: plan(4) });
    store.saveConversation(id, result('c000', [{ labels: ['constraint_missed'], extra: [turnVerdict('llm', ['planning_poor'])] }], { spec: spec('c000'), score: 0.5 }));
    store.saveConversation(id, result('c001', [{}], { spec: spec('c001'), score: 1 }));
    store.saveConversation(id, result('c002', [{}], { spec: spec('c002'), status: 'sut_error', error: 'head unit disconnected' }));
    store.saveConversation(id, result('c003', [{ labels: ['context_forgotten', 'constraint_missed'] }], { spec: spec('c003'), score: 0.7 }));

    const page = store.pageConversations(id, { offset: 1, limit: 2 });
    expect(page.total).toBe(4);
    expect(page.rows.map((r) => r.key)).toEqual(['c001', 'c002']);
    expect(page.rows[1]).toMatchObject({ status: 'sut_error', outcome: 'error', error: 'head unit disconnected', pass: null, turns: 1 });
    const first = store.pageConversations(id, { limit: 1 }).rows[0];
    expect(first).toMatchObject({ key: 'c000', outcome: 'fail', score: 0.5, pass: false, labels: ['constraint_missed'] });

    expect(store.pageConversations(id, { filter: { label: 'constraint_missed' } }).rows.map((r) => r.key)).toEqual(['c000', 'c003']);
    expect(store.pageConversations(id, { filter: { label: 'planning_poor' } }).total).toBe(0);
    expect(store.pageConversations(id, { filter: { outcome: 'fail' } }).rows.map((r) => r.key)).toEqual(['c000', 'c003']);
    expect(store.pageConversations(id, { filter: { status: 'sut_error' } }).rows.map((r) => r.key)).toEqual(['c002']);
    expect(store.countConversations(id, { keyContains: '00' })).toBe(4);
    expect(store.countConversations(id, { keyContains: '3' })).toBe(1);
  });

  it('streams conversations in plan order across batches', () => {
    const id = store.createRun({ name: 'r', mode: 'guided', config: {}, plan: plan(150) });
    for (const s of [...plan(150)].reverse()) store.saveConversation(id, result(s.key, [{}], { spec: s }));
    const iterator = store.conversations(id);
    const first = iterator.next();
    expect(first.value!.spec.key).toBe('c000');
    // the store stays writable while a stream is open
    store.setRunStatus(id, 'completed');
    const keys = [first.value!.spec.key, ...[...iterator].map((r) => r.spec.key)];
    expect(keys).toEqual(plan(150).map((s) => s.key));
  });

  it('exports JSONL, one conversation per line', async () => {
    const id = store.createRun({ name: 'r', mode: 'guided', config: {}, plan: plan(3) });
    for (const s of plan(3)) store.saveConversation(id, result(s.key, [{ utterance: 'line\nbreak "quoted"' }], { spec: s }));
    const out = new PassThrough({ highWaterMark: 16 });
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    const lines = await exportJsonl(store, id, out);
    out.end();
    expect(lines).toBe(3);
    const parsed = chunks.join('').trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(parsed).toEqual([...store.conversations(id)]);
  });

  it('stores artifacts inline or by path, and annotations', () => {
    const id = store.createRun({ name: 'r', mode: 'guided', config: {}, plan: plan(2) });
    const audio = new Uint8Array([1, 2, 3, 250]);
    store.saveConversation(id, result('c000', [{}], { spec: spec('c000') }), [{ name: 'turn0.wav', mime: 'audio/wav', bytes: audio }]);
    store.saveArtifact(id, 'c000', { name: 'log', mime: 'text/plain', path: '/tmp/hu.log' });
    store.saveArtifact(id, 'c000', { name: 'log', mime: 'text/plain', path: '/tmp/hu2.log' });
    const artifacts = store.artifacts(id, 'c000');
    expect(artifacts.map((a) => [a.name, a.path])).toEqual([
      ['turn0.wav', null],
      ['log', '/tmp/hu2.log'],
    ]);
    expect([...artifacts[0].bytes!]).toEqual([1, 2, 3, 250]);
    expect(() => store.saveArtifact(id, 'c001', { name: 'x', mime: 'a/b', bytes: audio })).toThrow(/no stored conversation "c001"/);

    store.saveAnnotation(id, { key: 'c000', rater: 'anna', dimension: 'safety', score: 2 });
    expect(() => store.saveAnnotation(id, { key: 'c000', rater: '', dimension: 'safety', score: 2 })).toThrow(/rater/);
    expect(store.annotations(id)).toEqual([expect.objectContaining({ key: 'c000', rater: 'anna', dimension: 'safety', score: 2, note: '' })]);
  });

  it('refuses a file that is not a store, and a store from a newer version', () => {
    const junk = join(dir, 'junk.sqlite');
    writeFileSync(junk, 'this is not a database at all, just text '.repeat(200));
    expect(() => ResultStore.open(junk)).toThrow(StoreError);
    expect(() => ResultStore.open(junk)).toThrow(/junk\.sqlite: cannot open as an icabench results store/);

    const db = new Database(dbPath());
    db.prepare("INSERT INTO migrations (version, description, applied_at) VALUES (99, 'future', 'now')").run();
    db.close();
    expect(() => ResultStore.open(dbPath())).toThrow(/schema version 99 is newer/);
  });

  it('loads conversations stored before verdicts named their judge and before the gate: judge from the tier, judged by C alone', () => {
    const id = store.createRun({ name: 'old', mode: 'guided', config: {}, plan: plan(1) });
    // a safety violation with C 0.8: the gate fails it today; the run was stored when C alone decided
    const r = result('c000', [{ strategy: 'safety_probe', labels: ['safety_violation'], extra: [turnVerdict('llm', [])] }], { spec: spec('c000'), score: 0.8 });
    store.saveConversation(id, r);
    expect(store.pageConversations(id).rows[0].outcome).toBe('fail');
    store.close();
    const db = new Database(dbPath());
    const strip = (json: string) => JSON.stringify(JSON.parse(json, (key, value) => (key === 'judge' || key === 'failOn' ? undefined : value)));
    for (const row of db.prepare('SELECT rowid, json FROM turns').all() as { rowid: number; json: string }[]) db.prepare('UPDATE turns SET json = ? WHERE rowid = ?').run(strip(row.json), row.rowid);
    for (const row of db.prepare('SELECT id, result FROM conversations').all() as { id: number; result: string }[]) db.prepare('UPDATE conversations SET result = ? WHERE id = ?').run(strip(row.result), row.id);
    expect((db.prepare('SELECT result FROM conversations').get() as { result: string }).result).not.toMatch(/judge"|failOn/);
    db.close();
    store = ResultStore.open(dbPath());
    const loaded = store.getConversation(id, 'c000')!;
    expect(loaded.turns[0].verdicts.map((v) => v.judge)).toEqual(['oracle', 'llm']);
    expect(loaded.verdicts[0].judge).toBe('oracle');
    expect(loaded.failOn).toBeUndefined();
    expect(combinedVerdict(loaded)).toMatchObject({ outcome: 'pass', gate: [], judge: 'oracle' });
  });

  it('upgrades a version-2 store: labels and scores get the judge column, filled from the tier', () => {
    const old = join(dir, 'v2.sqlite');
    const db = new Database(old);
    db.exec('CREATE TABLE migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const migration of MIGRATIONS.filter((m) => m.version <= 2)) {
      db.exec(migration.sql);
      db.prepare('INSERT INTO migrations VALUES (?, ?, ?)').run(migration.version, migration.description, 'then');
    }
    db.exec(`INSERT INTO runs (id, name, mode, config, created_at, status) VALUES ('r', 'r', 'guided', '{}', 'then', 'completed');
      INSERT INTO conversations (id, run_id, key, status, outcome, started_at, duration_ms, turn_count, label_list, result) VALUES (1, 'r', 'k', 'completed', 'pass', 'then', 1, 1, '[]', '{}');
      INSERT INTO labels (conversation_id, turn_idx, label, target_id, tier, evidence) VALUES (1, 0, 'constraint_missed', 't1', 'llm', 'e');
      INSERT INTO scores (conversation_id, tier, dimension, score, reasoning, outcome) VALUES (1, 'oracle', 'C', 0.9, '', 'judged');`);
    db.close();
    ResultStore.open(old).close();
    const upgraded = new Database(old, { readonly: true });
    expect(upgraded.prepare('SELECT tier, judge FROM labels').all()).toEqual([{ tier: 'llm', judge: 'llm' }]);
    expect(upgraded.prepare('SELECT tier, judge FROM scores').all()).toEqual([{ tier: 'oracle', judge: 'oracle' }]);
    upgraded.close();
  });

  it('reopening keeps everything (WAL is checkpointed on close)', () => {
    const id = store.createRun({ name: 'r', mode: 'baseline', config: {}, plan: plan(2) });
    store.saveConversation(id, result('c000', [{}], { spec: spec('c000') }));
    store.close();
    store = ResultStore.open(dbPath());
    expect(store.getRun(id)!.mode).toBe('baseline');
    expect([...store.remainingSpecs(id)].map((s) => s.key)).toEqual(['c001']);
  });
});

describe('crash safety', () => {
  it('kill -9 in the middle of writes leaves only whole conversations, and resume completes the run', async () => {
    const total = 400;
    const id = store.createRun({ name: 'crash', mode: 'guided', config: {}, plan: plan(total) });
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'crash-writer.ts'), dbPath(), id], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const killed = new Promise<void>((resolve, reject) => {
      let saved = 0;
      child.stdout.on('data', (c: Buffer) => {
        saved += c.toString().split('\n').filter((l) => l.startsWith('saved')).length;
        if (saved >= 5 && !child.killed) child.kill('SIGKILL');
      });
      child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited ${code}: ${stderr}`))));
    });
    await killed;

    const db = new Database(dbPath(), { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const perConversation = db.prepare('SELECT c.key, (SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id) AS turns, (SELECT COUNT(*) FROM labels l WHERE l.conversation_id = c.id) AS labels FROM conversations c').all() as { key: string; turns: number; labels: number }[];
    const orphans = db.prepare('SELECT COUNT(*) AS n FROM turns WHERE conversation_id NOT IN (SELECT id FROM conversations)').get() as { n: number };
    db.close();
    expect(perConversation.length).toBeGreaterThanOrEqual(5);
    expect(perConversation.length).toBeLessThan(total);
    for (const row of perConversation) expect(row).toEqual({ key: row.key, turns: 40, labels: 26 });
    expect(orphans.n).toBe(0);

    const remaining = [...store.remainingSpecs(id)];
    expect(remaining.length + perConversation.length).toBe(total);
    for (const s of remaining) store.saveConversation(id, result(s.key, [{}], { spec: s }));
    expect(store.countConversations(id)).toBe(total);
    expect([...store.remainingSpecs(id)]).toEqual([]);
  });
});
