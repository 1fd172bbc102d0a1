import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { z } from 'zod';
import {
  ConversationResultSchema,
  ConversationSpecSchema,
  TurnRecordSchema,
  type ConversationResult,
  type ConversationSpec,
  type TurnRecord,
} from '../domain/conversation.ts';
import { parseOrThrow } from '../domain/validation.ts';
import { ITEMS_MODE } from '../domain/run-items.ts';
import { combinedVerdict, turnLabels } from '../analysis/verdict.ts';
import { MIGRATIONS } from './migrations.ts';
import {
  AnnotationInputSchema,
  AnnotationSchema,
  ConversationRowSchema,
  RunModeSchema,
  RunStatusSchema,
  type Annotation,
  type AnnotationInput,
  type Artifact,
  type ConversationFilter,
  type ItemAnnotation,
  type ItemRecord,
  type ConversationRow,
  type RunMode,
  type RunRecord,
  type RunStatus,
} from './types.ts';
import type { RunFact } from '../domain/run-fact.ts';

export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreError';
  }
}

/** A second save of the same conversation key in a run: the store never holds duplicates. */
export class DuplicateConversationError extends StoreError {
  constructor(
    readonly runId: string,
    readonly key: string,
  ) {
    super(`run ${runId}: conversation "${key}" is already stored; a conversation is saved exactly once`);
    this.name = 'DuplicateConversationError';
  }
}

export interface CreateRunInput {
  name: string;
  mode: RunMode;
  /** the kind of conversations the run holds (dialogue by default; suite, live: src/kinds/registry.ts) */
  kind?: string;
  /** the campaign config as loaded; stored as JSON */
  config: unknown;
  /** every conversation the run will hold; resume works from this list */
  plan: readonly ConversationSpec[];
  meta?: Record<string, unknown>;
}

/** Where a run's plan is stored: dialogue runs' conversation specs in planned, item-based runs' items in item_results. */
const PLAN_TABLES = {
  planned: { column: 'spec', noun: 'conversation' },
  item_results: { column: 'item', noun: 'item' },
} as const;

export interface CreateItemRunInput {
  name: string;
  /** the campaign kind (one whose runs hold item results) */
  kind: string;
  config: unknown;
  /** every item the run will hold, in order, each with a unique key; resume works from this list */
  plan: readonly { key: string; item: unknown }[];
  meta?: Record<string, unknown>;
}

export interface ArtifactInput {
  name: string;
  mime: string;
  /** inline content, or */
  bytes?: Uint8Array;
  /** a file kept beside the store (e.g. long audio) */
  path?: string;
}


export interface ConversationPage {
  total: number;
  rows: ConversationRow[];
}

const STREAM_BATCH = 64;
/** planned specs read per page while a run takes them (src/store/store.ts remainingSpecs): the most a run holds beyond those in flight */
export const PLAN_PAGE = 16;
const TERMINAL_STATUSES: readonly RunStatus[] = ['interrupted', 'completed', 'budget_exhausted', 'unit_unreachable'];

/** Short, sortable run id: UTC timestamp to the second plus 4 random characters. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('base64url').slice(0, 4).toLowerCase()}`;
}

interface RunRow {
  id: string;
  name: string;
  mode: string;
  kind: string;
  config: string;
  created_at: string;
  finished_at: string | null;
  status: string;
  meta: string;
  planned: number;
  stored: number;
}

interface StoredTurn {
  idx: number;
  json: string;
}

interface ConversationDbRow {
  id: number;
  key: string;
  status: string;
  error: string | null;
  score: number | null;
  pass: number | null;
  outcome: string;
  started_at: string;
  duration_ms: number;
  turn_count: number;
  label_list: string;
  result: string;
  ordinal: number;
}

/**
 * The results store: one SQLite file per workspace. A conversation is written in one transaction
 * when it finishes (WAL, synchronous=NORMAL), so a killed process leaves either the whole
 * conversation or none of it. Reads validate with zod, so a damaged or foreign file fails loudly.
 */
export class ResultStore {
  /** statements with fixed SQL, prepared once per store (preparing costs more than running a small insert) */
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {}

  private prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  static open(path: string): ResultStore {
    const absolute = resolve(path);
    mkdirSync(dirname(absolute), { recursive: true });
    let db: Database.Database;
    try {
      db = new Database(absolute);
      db.pragma('journal_mode = WAL');
    } catch (error) {
      throw new StoreError(`${absolute}: cannot open as an icabench results store (SQLite): ${(error as Error).message}`);
    }
    // WAL + NORMAL: a commit survives the process being killed; only an OS crash or power loss can roll back
    // the last few (which a resume reruns). FULL fsynced every conversation's commit on the event loop, blocking
    // every conversation in flight for the disk (docs/benchmarks.md, issue #26).
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    const store = new ResultStore(db, absolute);
    store.migrate();
    return store;
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const current = (this.db.prepare('SELECT MAX(version) AS v FROM migrations').get() as { v: number | null }).v ?? 0;
    const latest = MIGRATIONS[MIGRATIONS.length - 1].version;
    if (current > latest) {
      throw new StoreError(`${this.path}: store schema version ${current} is newer than this icabench supports (${latest}); upgrade icabench`);
    }
    for (const migration of MIGRATIONS.filter((m) => m.version > current)) {
      // the pragma is a no-op inside a transaction: it is switched around it
      if (migration.rebuildsReferencedTable) this.db.pragma('foreign_keys = OFF');
      try {
        this.db.transaction(() => {
          this.db.exec(migration.sql);
          if (migration.rebuildsReferencedTable) {
            const broken = this.db.pragma('foreign_key_check') as unknown[];
            if (broken.length > 0) throw new StoreError(`${this.path}: migration ${migration.version} left ${broken.length} rows whose run is missing; nothing was changed`);
          }
          this.db
            .prepare('INSERT INTO migrations (version, description, applied_at) VALUES (?, ?, ?)')
            .run(migration.version, migration.description, new Date().toISOString());
        })();
      } finally {
        if (migration.rebuildsReferencedTable) this.db.pragma('foreign_keys = ON');
      }
    }
  }

  schemaVersion(): number {
    return (this.db.prepare('SELECT MAX(version) AS v FROM migrations').get() as { v: number }).v;
  }

  createRun(input: CreateRunInput): string {
    const mode = parseOrThrow(RunModeSchema, input.mode, 'createRun: mode');
    const plan = input.plan.map((spec, i) => parseOrThrow(ConversationSpecSchema, spec, `createRun: plan[${i}]`));
    if (mode === ITEMS_MODE) throw new StoreError('createRun: a run of conversations has no mode "items" (item-based runs use createItemRun)');
    return this.insertRun('createRun', { ...input, mode, kind: input.kind ?? 'dialogue' }, 'planned', plan.map((spec) => ({ key: spec.key, value: spec })));
  }

  /**
   * Records an item-based run (manual-QA questions, …) with its plan: one row per item in
   * item_results, its result stored later by saveItemResult.
   */
  createItemRun(input: CreateItemRunInput): string {
    // what a run holds is chosen by the call (createRun: conversations; this: item results), not by its kind's name
    if (!input.kind) throw new StoreError('createItemRun: an item-based run needs its campaign kind (runs of conversations use createRun)');
    input.plan.forEach((entry, i) => {
      if (typeof entry?.key !== 'string' || entry.key === '') throw new StoreError(`createItemRun: plan[${i}] needs a non-empty string key`);
    });
    return this.insertRun('createItemRun', { ...input, mode: ITEMS_MODE }, 'item_results', input.plan.map((entry) => ({ key: entry.key, value: entry.item ?? null })));
  }

  /**
   * The one insert of a new run: its runs row and its plan, one row per entry in `table` (in plan
   * order), in one transaction; plan keys must be unique in the run.
   */
  private insertRun(
    caller: string,
    run: { name: string; mode: string; kind: string; config?: unknown; meta?: unknown },
    table: keyof typeof PLAN_TABLES,
    plan: readonly { key: string; value: unknown }[],
  ): string {
    const seen = new Set<string>();
    for (const { key } of plan) {
      if (seen.has(key)) throw new StoreError(`${caller}: plan has the ${PLAN_TABLES[table].noun} key "${key}" twice; keys must be unique in a run`);
      seen.add(key);
    }
    const id = newRunId();
    const insertPlan = this.prepared(`INSERT INTO ${table} (run_id, key, ordinal, ${PLAN_TABLES[table].column}) VALUES (?, ?, ?, ?)`);
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO runs (id, name, mode, kind, config, created_at, finished_at, status, meta) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)')
        .run(id, run.name, run.mode, run.kind, JSON.stringify(run.config ?? null), new Date().toISOString(), 'running', JSON.stringify(run.meta ?? {}));
      plan.forEach((entry, ordinal) => insertPlan.run(id, entry.key, ordinal, JSON.stringify(entry.value)));
    })();
    return id;
  }


  /**
   * Stores the result of one planned item, exactly once (a second save, an unknown run or an
   * unplanned key is rejected without writing). `outcome` is the kind's one-word verdict (pass,
   * fail, error, …) for lists and filters. `facts` (the item's model calls) are written in the same transaction.
   */
  saveItemResult(runId: string, key: string, outcome: string, result: unknown, facts: readonly { kind: string; data: unknown }[] = []): void {
    if (!outcome) throw new StoreError(`saveItemResult: run ${runId} item "${key}" needs an outcome`);
    this.requireRun(runId);
    this.db.transaction(() => {
      const row = this.prepared('SELECT result FROM item_results WHERE run_id = ? AND key = ?').get(runId, key) as { result: string | null } | undefined;
      if (!row) throw new StoreError(`saveItemResult: run ${runId} has no planned item "${key}"; only planned keys can be stored`);
      if (row.result !== null) throw new StoreError(`run ${runId}: item "${key}" is already stored; an item result is saved exactly once`);
      this.prepared('UPDATE item_results SET outcome = ?, result = ?, finished_at = ? WHERE run_id = ? AND key = ?').run(outcome, JSON.stringify(result ?? null), new Date().toISOString(), runId, key);
      for (const fact of facts) this.addRunFact(runId, fact.kind, fact.data);
    })();
  }

  /** The items of an item-based run in plan order, with their results where stored (`done`: only those). */
  itemResults(runId: string, options: { done?: boolean } = {}): ItemRecord[] {
    this.requireRun(runId);
    const rows = this.prepared(`SELECT key, ordinal, item, outcome, result, finished_at FROM item_results WHERE run_id = ?${options.done ? ' AND result IS NOT NULL' : ''} ORDER BY ordinal`).all(runId) as {
      key: string;
      ordinal: number;
      item: string;
      outcome: string | null;
      result: string | null;
      finished_at: string | null;
    }[];
    return rows.map((row) => ({ key: row.key, ordinal: row.ordinal, item: JSON.parse(row.item), outcome: row.outcome, result: row.result === null ? null : JSON.parse(row.result), finishedAt: row.finished_at }));
  }

  /** The planned items whose result is not stored yet, in plan order: what a resumed item run still has to do. */
  remainingItems(runId: string): { key: string; item: unknown }[] {
    this.requireRun(runId);
    return (this.prepared('SELECT key, item FROM item_results WHERE run_id = ? AND result IS NULL ORDER BY ordinal').all(runId) as { key: string; item: string }[]).map((row) => ({
      key: row.key,
      item: JSON.parse(row.item),
    }));
  }

  /**
   * Un-stores the results of the given items (their outcome, result and annotations), in one transaction, so a resumed run
   * runs them again: on --resume, the items whose result never reached the head unit (the kind decides which,
   * src/run/unit-reach.ts). Keys without a stored result are left as they are.
   */
  forgetItemResults(runId: string, keys: readonly string[]): void {
    this.requireRun(runId);
    this.db.transaction(() => {
      const reset = this.prepared('UPDATE item_results SET outcome = NULL, result = NULL, finished_at = NULL WHERE run_id = ? AND key = ?');
      const unannotate = this.prepared('DELETE FROM item_annotations WHERE run_id = ? AND key = ?');
      for (const key of keys) {
        unannotate.run(runId, key);
        reset.run(runId, key);
      }
    })();
  }

  /** Records a rater's annotation of a stored item (the kind validates `data` before and after). */
  saveItemAnnotation(runId: string, key: string, rater: string, data: unknown): void {
    if (!rater) throw new StoreError('saveItemAnnotation: a rater is required');
    this.requireRun(runId);
    if (!this.prepared('SELECT 1 FROM item_results WHERE run_id = ? AND key = ? AND result IS NOT NULL').get(runId, key)) {
      throw new StoreError(`run ${runId}: no stored item "${key}" to annotate`);
    }
    this.prepared('INSERT INTO item_annotations (run_id, key, rater, data, created_at) VALUES (?, ?, ?, ?, ?)').run(runId, key, rater, JSON.stringify(data ?? null), new Date().toISOString());
  }

  /** A run's item annotations in the order they were made. */
  itemAnnotations(runId: string): ItemAnnotation[] {
    this.requireRun(runId);
    return (this.prepared('SELECT key, rater, data, created_at FROM item_annotations WHERE run_id = ? ORDER BY id').all(runId) as { key: string; rater: string; data: string; created_at: string }[]).map((row) => ({
      key: row.key,
      rater: row.rater,
      data: JSON.parse(row.data),
      createdAt: row.created_at,
    }));
  }

  getRun(runId: string): RunRecord | null {
    const row = this.prepared(`${RUN_SELECT} WHERE r.id = ?`).get(runId) as RunRow | undefined;
    return row ? this.toRunRecord(row) : null;
  }

  /** Newest first; runs created in the same millisecond in the order they were created (rowid), not by their random id suffix. */
  listRuns(): RunRecord[] {
    return (this.db.prepare(`${RUN_SELECT} ORDER BY r.created_at DESC, r.rowid DESC`).all() as RunRow[]).map((row) => this.toRunRecord(row));
  }

  setRunStatus(runId: string, status: RunStatus): void {
    parseOrThrow(RunStatusSchema, status, 'setRunStatus: status');
    const finishedAt = TERMINAL_STATUSES.includes(status) ? new Date().toISOString() : null;
    const changed = this.prepared('UPDATE runs SET status = ?, finished_at = ? WHERE id = ?').run(status, finishedAt, runId).changes;
    if (changed === 0) throw this.unknownRun(runId);
  }

  /**
   * The planned specs not yet stored, in plan order: what a run (new or resumed) still has to do. Read a page at a
   * time as the caller takes them, so a run holds the specs in flight, not its whole plan; a spec stored meanwhile
   * (in flight when its page was read) is not handed out again, as the next page starts after the last one.
   */
  *remainingSpecs(runId: string): Generator<ConversationSpec> {
    this.requireRun(runId);
    const page = this.prepared(
      `SELECT p.key, p.spec, p.ordinal FROM planned p
       WHERE p.run_id = ? AND p.ordinal > ? AND NOT EXISTS (SELECT 1 FROM conversations c WHERE c.run_id = p.run_id AND c.key = p.key)
       ORDER BY p.ordinal LIMIT ?`,
    );
    let after = -1;
    for (;;) {
      const rows = page.all(runId, after, PLAN_PAGE) as { key: string; spec: string; ordinal: number }[];
      for (const row of rows) yield parseOrThrow(ConversationSpecSchema, JSON.parse(row.spec), `${this.path}: run ${runId} planned spec "${row.key}"`);
      if (rows.length < PLAN_PAGE) return;
      after = rows[rows.length - 1].ordinal;
    }
  }

  /**
   * Deletes the run's conversations of `status` that `forget` picks, with their turns, labels, scores and artifacts,
   * in one transaction; returns their keys in plan order. The rule is the caller's (src/run/unit-reach.ts: those that
   * never reached the head unit, which a resumed run runs again); `status` only narrows what is read.
   */
  forgetConversations(runId: string, status: ConversationResult['status'], forget: (result: ConversationResult) => boolean): string[] {
    this.requireRun(runId);
    return this.db.transaction(() => {
      const rows = this.db
        .prepare(
          `SELECT c.*, p.ordinal FROM conversations c JOIN planned p ON p.run_id = c.run_id AND p.key = c.key
           WHERE c.run_id = ? AND c.status = ? ORDER BY p.ordinal`,
        )
        .all(runId, status) as ConversationDbRow[];
      const turns = this.turnsOf(rows);
      const forgotten = rows.filter((row) => forget(this.toResult(runId, row, turns.get(row.id) ?? [])));
      const remove = this.prepared('DELETE FROM conversations WHERE id = ?');
      for (const row of forgotten) remove.run(row.id);
      return forgotten.map((row) => row.key);
    })();
  }

  /**
   * Stores a finished conversation with its turns, labels, scores and (optionally) artifacts in one
   * transaction, with the run facts it produced when they come with it (a fleet worker's `llm.calls`,
   * `vehicle.frames`). Rejects, without writing anything: an invalid result, an unknown run, a key
   * outside the run's plan, and a key already stored.
   *
   * `validated`: the result was built in this process by the run loop from parts validated where they came in (bridge
   * replies, model outputs, a fleet worker's message), so it is not parsed again (test/kinds/dialogue/one-record.test.ts
   * proves such a result is what the schema keeps). Anything else, from disk or an import, is validated here.
   */
  saveConversation(
    runId: string,
    result: ConversationResult,
    artifacts: readonly ArtifactInput[] = [],
    facts: readonly { kind: string; data: unknown }[] = [],
    options: { validated?: boolean } = {},
  ): void {
    const key = typeof result?.spec?.key === 'string' ? result.spec.key : '(no key)';
    const valid = options.validated ? result : parseOrThrow(ConversationResultSchema, result, `saveConversation: run ${runId} conversation "${key}"`);
    this.requireRun(runId);
    const planned = this.prepared('SELECT 1 FROM planned WHERE run_id = ? AND key = ?').get(runId, valid.spec.key);
    if (!planned) throw new StoreError(`saveConversation: run ${runId} has no planned conversation "${valid.spec.key}"; only planned keys can be stored`);
    artifacts.forEach((artifact, i) => checkArtifact(artifact, `saveConversation: artifacts[${i}]`));

    const combined = combinedVerdict(valid);
    const labels = [...new Set(valid.turns.flatMap((turn) => turnLabels(turn).map((l) => l.label)))];
    const { turns, ...withoutTurns } = valid;
    const insertTurn = this.prepared(
      'INSERT INTO turns (conversation_id, idx, utterance, strategy, reply_text, latency_ms, json) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const insertLabel = this.prepared('INSERT INTO labels (conversation_id, turn_idx, label, target_id, tier, judge, evidence) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const insertScore = this.prepared('INSERT INTO scores (conversation_id, tier, judge, dimension, score, reasoning, outcome) VALUES (?, ?, ?, ?, ?, ?, ?)');

    this.db.transaction(() => {
      const exists = this.prepared('SELECT 1 FROM conversations WHERE run_id = ? AND key = ?').get(runId, valid.spec.key);
      if (exists) throw new DuplicateConversationError(runId, valid.spec.key);
      const conversationId = Number(
        this
          .prepared(
            `INSERT INTO conversations (run_id, key, status, error, score, pass, outcome, started_at, duration_ms, turn_count, label_list, result)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            runId,
            valid.spec.key,
            valid.status,
            valid.error,
            combined.score,
            combined.outcome === 'pass' ? 1 : combined.outcome === 'fail' ? 0 : null,
            combined.outcome,
            valid.startedAt,
            valid.durationMs,
            turns.length,
            JSON.stringify(labels),
            JSON.stringify(withoutTurns),
          ).lastInsertRowid,
      );
      for (const turn of turns) {
        insertTurn.run(conversationId, turn.index, turn.utterance.text, turn.utterance.strategy, turn.reply?.text ?? null, turn.latencyMs, JSON.stringify(turn));
        for (const verdict of turn.verdicts) {
          for (const label of verdict.labels) insertLabel.run(conversationId, turn.index, label.label, label.targetId, label.tier, verdict.judge, label.evidence);
        }
      }
      for (const verdict of valid.verdicts) {
        insertScore.run(conversationId, verdict.tier, verdict.judge, 'C', verdict.score, verdict.reasoning, verdict.outcome);
        for (const [dimension, value] of Object.entries(verdict.dimensions)) {
          if (value) insertScore.run(conversationId, verdict.tier, verdict.judge, dimension, value.score, value.reasoning, verdict.outcome);
        }
      }
      for (const artifact of artifacts) this.insertArtifact(conversationId, artifact);
      for (const fact of facts) this.addRunFact(runId, fact.kind, fact.data);
    })();
  }

  /**
   * Records a fact about a run besides its conversations (an event such as a unit replaced, a
   * snapshot such as model usage). Facts of one kind are kept in the order they were recorded.
   */
  addRunFact(runId: string, kind: string, data: unknown): void {
    if (!kind) throw new StoreError('addRunFact: a fact needs a kind');
    this.requireRun(runId);
    this.prepared('INSERT INTO run_facts (run_id, kind, at, data) VALUES (?, ?, ?, ?)').run(runId, kind, new Date().toISOString(), JSON.stringify(data ?? null));
  }

  /** A run's facts in the order they were recorded, optionally of one kind only. */
  runFacts(runId: string, kind?: string): RunFact[] {
    this.requireRun(runId);
    const rows = (
      kind === undefined
        ? this.prepared('SELECT kind, at, data FROM run_facts WHERE run_id = ? ORDER BY id').all(runId)
        : this.prepared('SELECT kind, at, data FROM run_facts WHERE run_id = ? AND kind = ? ORDER BY id').all(runId, kind)
    ) as { kind: string; at: string; data: string }[];
    return rows.map((row) => ({ kind: row.kind, at: row.at, data: JSON.parse(row.data) as unknown }));
  }

  /** A run's stored items by outcome (conversations by their combined outcome, other kinds' items by their one word): the runs list's pass / fail columns. */
  outcomeCounts(runId: string): Record<string, number> {
    return this.outcomeCountsByRun(runId).get(runId) ?? {};
  }

  /** outcomeCounts of every run in the workspace (the runs list), or of one run, in one query; a run with nothing stored has no entry. */
  outcomeCountsByRun(runId?: string): Map<string, Record<string, number>> {
    const of = runId === undefined ? '' : ' AND run_id = ?';
    const rows = this.prepared(
      `SELECT run_id, outcome, COUNT(*) AS n FROM conversations WHERE 1${of} GROUP BY run_id, outcome
       UNION ALL SELECT run_id, outcome, COUNT(*) AS n FROM item_results WHERE result IS NOT NULL${of} GROUP BY run_id, outcome`,
    ).all(...(runId === undefined ? [] : [runId, runId])) as { run_id: string; outcome: string | null; n: number }[];
    const byRun = new Map<string, Record<string, number>>();
    for (const row of rows) {
      if (row.outcome === null) continue;
      let counts = byRun.get(row.run_id);
      if (!counts) byRun.set(row.run_id, (counts = {}));
      counts[row.outcome] = (counts[row.outcome] ?? 0) + row.n;
    }
    return byRun;
  }

  /**
   * A stamp that changes whenever the stored run does (a conversation or item stored, its status, a fact recorded):
   * what the bench app computes from a run (its summary, its output files) is cached under it.
   */
  runStamp(run: Pick<RunRecord, 'id' | 'stored' | 'status'>): string {
    const facts = (this.prepared('SELECT COUNT(*) AS n FROM run_facts WHERE run_id = ?').get(run.id) as { n: number }).n;
    return `${run.stored}:${run.status}:${facts}`;
  }

  countConversations(runId: string, filter: ConversationFilter = {}): number {
    const { where, params } = filterClause(runId, filter);
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM conversations c WHERE ${where}`).get(...params) as { n: number }).n;
  }

  /**
   * Streams a run's conversations in plan order, STREAM_BATCH at a time (two queries per batch: its conversations,
   * then all their turns), so a large run never sits in memory. Each batch is read whole before the first of it is
   * handed out: no statement stays open while the caller works, so it may write to the store (or await) meanwhile.
   */
  *conversations(runId: string): Generator<ConversationResult> {
    this.requireRun(runId);
    const page = this.prepared(
      `SELECT c.*, p.ordinal FROM conversations c JOIN planned p ON p.run_id = c.run_id AND p.key = c.key
       WHERE c.run_id = ? AND p.ordinal > ? ORDER BY p.ordinal LIMIT ?`,
    );
    let after = -1;
    for (;;) {
      const rows = page.all(runId, after, STREAM_BATCH) as ConversationDbRow[];
      const turns = this.turnsOf(rows);
      for (const row of rows) yield this.toResult(runId, row, turns.get(row.id) ?? []);
      if (rows.length < STREAM_BATCH) return;
      after = rows[rows.length - 1].ordinal;
    }
  }

  /** The stored turns of these conversations, in one query: per conversation id, its turns' JSON in turn order. */
  private turnsOf(rows: readonly ConversationDbRow[]): Map<number, StoredTurn[]> {
    const byConversation = new Map<number, StoredTurn[]>();
    if (rows.length === 0) return byConversation;
    const turns = this.prepared('SELECT conversation_id, idx, json FROM turns WHERE conversation_id IN (SELECT value FROM json_each(?)) ORDER BY conversation_id, idx').all(
      JSON.stringify(rows.map((row) => row.id)),
    ) as (StoredTurn & { conversation_id: number })[];
    for (const turn of turns) {
      let list = byConversation.get(turn.conversation_id);
      if (!list) byConversation.set(turn.conversation_id, (list = []));
      list.push(turn);
    }
    return byConversation;
  }

  getConversation(runId: string, key: string): ConversationResult | null {
    const row = this.db
      .prepare(
        `SELECT c.*, p.ordinal FROM conversations c JOIN planned p ON p.run_id = c.run_id AND p.key = c.key
         WHERE c.run_id = ? AND c.key = ?`,
      )
      .get(runId, key) as ConversationDbRow | undefined;
    return row ? this.toResult(runId, row, this.turnsOf([row]).get(row.id) ?? []) : null;
  }

  /** Summary rows (no turns) in plan order, for conversation lists in UIs and reports. */
  pageConversations(runId: string, options: { offset?: number; limit?: number; filter?: ConversationFilter } = {}): ConversationPage {
    const { where, params } = filterClause(runId, options.filter ?? {});
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM conversations c WHERE ${where}`).get(...params) as { n: number }).n;
    const rows = this.db
      .prepare(
        `SELECT c.id, c.key, c.status, c.error, c.score, c.pass, c.outcome, c.started_at, c.duration_ms, c.turn_count, c.label_list, p.ordinal
         FROM conversations c JOIN planned p ON p.run_id = c.run_id AND p.key = c.key
         WHERE ${where} ORDER BY p.ordinal LIMIT ? OFFSET ?`,
      )
      .all(...params, options.limit ?? 50, options.offset ?? 0) as Omit<ConversationDbRow, 'result'>[];
    return {
      total,
      rows: rows.map((row) =>
        parseOrThrow(
          ConversationRowSchema,
          {
            key: row.key,
            status: row.status,
            outcome: row.outcome,
            score: row.score,
            pass: row.pass === null ? null : row.pass === 1,
            error: row.error,
            turns: row.turn_count,
            labels: JSON.parse(row.label_list),
            startedAt: row.started_at,
            durationMs: row.duration_ms,
          },
          `${this.path}: run ${runId} conversation "${row.key}"`,
        ),
      ),
    };
  }

  /** Adds an artifact to a stored conversation (replacing one of the same name). */
  saveArtifact(runId: string, key: string, artifact: ArtifactInput): void {
    checkArtifact(artifact, 'saveArtifact');
    const conversationId = this.conversationId(runId, key);
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM artifacts WHERE conversation_id = ? AND name = ?').run(conversationId, artifact.name);
      this.insertArtifact(conversationId, artifact);
    })();
  }

  artifacts(runId: string, key: string): Artifact[] {
    const conversationId = this.conversationId(runId, key);
    const rows = this.db
      .prepare('SELECT name, mime, bytes, path, created_at FROM artifacts WHERE conversation_id = ? ORDER BY id')
      .all(conversationId) as { name: string; mime: string; bytes: Buffer | null; path: string | null; created_at: string }[];
    return rows.map((row) => ({
      name: row.name,
      mime: row.mime,
      bytes: row.bytes ? new Uint8Array(row.bytes) : null,
      path: row.path,
      createdAt: row.created_at,
    }));
  }

  saveAnnotation(runId: string, input: AnnotationInput): void {
    const annotation = parseOrThrow(AnnotationInputSchema, input, 'saveAnnotation');
    const conversationId = this.conversationId(runId, annotation.key);
    this.db
      .prepare('INSERT INTO annotations (conversation_id, rater, dimension, score, note, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(conversationId, annotation.rater, annotation.dimension, annotation.score, annotation.note, new Date().toISOString());
  }

  annotations(runId: string): Annotation[] {
    this.requireRun(runId);
    const rows = this.db
      .prepare(
        `SELECT c.key, a.rater, a.dimension, a.score, a.note, a.created_at AS createdAt
         FROM annotations a JOIN conversations c ON c.id = a.conversation_id WHERE c.run_id = ? ORDER BY a.id`,
      )
      .all(runId);
    return rows.map((row, i) => parseOrThrow(AnnotationSchema, row, `${this.path}: run ${runId} annotation ${i + 1}`));
  }

  close(): void {
    this.db.close();
  }

  private insertArtifact(conversationId: number, artifact: ArtifactInput): void {
    this.db
      .prepare('INSERT INTO artifacts (conversation_id, name, mime, bytes, path, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(
        conversationId,
        artifact.name,
        artifact.mime,
        artifact.bytes ? Buffer.from(artifact.bytes.buffer, artifact.bytes.byteOffset, artifact.bytes.byteLength) : null,
        artifact.path ?? null,
        new Date().toISOString(),
      );
  }

  private toResult(runId: string, row: ConversationDbRow, stored: readonly StoredTurn[]): ConversationResult {
    const where = `${this.path}: run ${runId} conversation "${row.key}"`;
    const turns = stored.map((turn) => parseOrThrow(TurnRecordSchema, JSON.parse(turn.json), `${where} turn ${turn.idx}`));
    return parseOrThrow(StoredConversationSchema, { ...JSON.parse(row.result), turns }, where);
  }

  private toRunRecord(row: RunRow): RunRecord {
    const where = `${this.path}: run ${row.id}`;
    return {
      id: row.id,
      name: row.name,
      mode: parseOrThrow(RunModeSchema, row.mode, `${where} mode`),
      kind: row.kind,
      config: JSON.parse(row.config),
      createdAt: row.created_at,
      finishedAt: row.finished_at,
      status: parseOrThrow(RunStatusSchema, row.status, `${where} status`),
      meta: parseOrThrow(z.record(z.string(), z.unknown()), JSON.parse(row.meta), `${where} meta`),
      planned: row.planned,
      stored: row.stored,
    };
  }

  private conversationId(runId: string, key: string): number {
    this.requireRun(runId);
    const row = this.prepared('SELECT id FROM conversations WHERE run_id = ? AND key = ?').get(runId, key) as { id: number } | undefined;
    if (!row) throw new StoreError(`run ${runId}: no stored conversation "${key}"`);
    return row.id;
  }

  private requireRun(runId: string): void {
    if (!this.prepared('SELECT 1 FROM runs WHERE id = ?').get(runId)) throw this.unknownRun(runId);
  }

  private unknownRun(runId: string): StoreError {
    return new StoreError(`${this.path}: no run with id "${runId}"`);
  }
}

/**
 * A stored conversation around turns `toResult` has just validated one by one (each error naming its turn):
 * ConversationResultSchema would validate every turn a second time. `extend` keeps `turns` in its place, so
 * the result's keys come out in the same order.
 */
const StoredConversationSchema = ConversationResultSchema.extend({ turns: z.array(z.custom<TurnRecord>()) });

/** planned / stored count conversations for dialogue runs and items for item-based runs (a run has only one of them) */
const RUN_SELECT = `SELECT r.*,
  (SELECT COUNT(*) FROM planned p WHERE p.run_id = r.id) + (SELECT COUNT(*) FROM item_results i WHERE i.run_id = r.id) AS planned,
  (SELECT COUNT(*) FROM conversations c WHERE c.run_id = r.id) + (SELECT COUNT(*) FROM item_results i WHERE i.run_id = r.id AND i.result IS NOT NULL) AS stored
  FROM runs r`;

function checkArtifact(artifact: ArtifactInput, where: string): void {
  if (!artifact.name || !artifact.mime) throw new StoreError(`${where}: an artifact needs a name and a mime type`);
  if ((artifact.bytes === undefined) === (artifact.path === undefined)) {
    throw new StoreError(`${where}: artifact "${artifact.name}" needs exactly one of bytes or path`);
  }
}

function filterClause(runId: string, filter: ConversationFilter): { where: string; params: unknown[] } {
  const parts = ['c.run_id = ?'];
  const params: unknown[] = [runId];
  if (filter.status) {
    parts.push('c.status = ?');
    params.push(filter.status);
  }
  if (filter.outcome) {
    parts.push('c.outcome = ?');
    params.push(filter.outcome);
  }
  if (filter.label) {
    parts.push('EXISTS (SELECT 1 FROM json_each(c.label_list) WHERE value = ?)');
    params.push(filter.label);
  }
  if (filter.keyContains) {
    parts.push("instr(c.key, ?) > 0");
    params.push(filter.keyContains);
  }
  return { where: parts.join(' AND '), params };
}
