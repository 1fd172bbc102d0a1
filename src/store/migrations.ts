/**
 * Schema migrations of the results store, applied in order inside one transaction each.
 * Never edit a shipped migration: append a new one, so existing workspaces upgrade in place.
 */
export interface Migration {
  version: number;
  description: string;
  sql: string;
  /**
   * The migration rebuilds a table others refer to (SQLite changes a CHECK constraint only by copying the table):
   * foreign keys are off while it runs, so dropping the old table deletes nothing, and checked before it commits.
   */
  rebuildsReferencedTable?: true;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs, plan, conversations, turns, labels, scores, artifacts, annotations',
    sql: `
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        mode TEXT NOT NULL,
        config TEXT NOT NULL,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('running','interrupted','completed','budget_exhausted')),
        meta TEXT NOT NULL DEFAULT '{}'
      );
      CREATE TABLE planned (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        spec TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
      );
      CREATE INDEX planned_order ON planned(run_id, ordinal);
      CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        score REAL,
        pass INTEGER,
        outcome TEXT NOT NULL,
        started_at TEXT NOT NULL,
        duration_ms REAL NOT NULL,
        turn_count INTEGER NOT NULL,
        label_list TEXT NOT NULL,
        result TEXT NOT NULL,
        UNIQUE (run_id, key)
      );
      CREATE TABLE turns (
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        utterance TEXT NOT NULL,
        strategy TEXT,
        reply_text TEXT,
        latency_ms REAL NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (conversation_id, idx)
      );
      CREATE TABLE labels (
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        turn_idx INTEGER NOT NULL,
        label TEXT NOT NULL,
        target_id TEXT,
        tier TEXT NOT NULL,
        evidence TEXT NOT NULL
      );
      CREATE INDEX labels_by_conversation ON labels(conversation_id);
      CREATE INDEX labels_by_label ON labels(label);
      CREATE TABLE scores (
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        tier TEXT NOT NULL,
        dimension TEXT NOT NULL,
        score REAL,
        reasoning TEXT NOT NULL,
        outcome TEXT NOT NULL
      );
      CREATE INDEX scores_by_conversation ON scores(conversation_id);
      CREATE TABLE artifacts (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        mime TEXT NOT NULL,
        bytes BLOB,
        path TEXT,
        created_at TEXT NOT NULL,
        CHECK ((bytes IS NULL) <> (path IS NULL)),
        UNIQUE (conversation_id, name)
      );
      CREATE TABLE annotations (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        rater TEXT NOT NULL,
        dimension TEXT NOT NULL,
        score REAL NOT NULL,
        note TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
      );
      CREATE INDEX annotations_by_conversation ON annotations(conversation_id);
    `,
  },
  {
    version: 2,
    description: 'run facts: what a run records besides its conversations (events, usage, counts), in order',
    sql: `
      CREATE TABLE run_facts (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        at TEXT NOT NULL,
        data TEXT NOT NULL
      );
      CREATE INDEX run_facts_by_run ON run_facts(run_id, kind, id);
    `,
  },
  {
    version: 3,
    description: 'labels and scores name the judge that gave them (its reference; older rows: the tier)',
    sql: `
      ALTER TABLE labels ADD COLUMN judge TEXT;
      ALTER TABLE scores ADD COLUMN judge TEXT;
      UPDATE labels SET judge = tier;
      UPDATE scores SET judge = tier;
    `,
  },
  {
    version: 4,
    description: 'campaign kinds: runs.kind (dialogue by default) and item_results, the plan and results of item-based runs (manual-QA questions, …)',
    sql: `
      ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'dialogue';
      CREATE TABLE item_results (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        item TEXT NOT NULL,
        outcome TEXT,
        result TEXT,
        finished_at TEXT,
        PRIMARY KEY (run_id, key)
      );
      CREATE INDEX item_results_order ON item_results(run_id, ordinal);
      CREATE TABLE item_annotations (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        key TEXT NOT NULL,
        rater TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL,
        FOREIGN KEY (run_id, key) REFERENCES item_results(run_id, key) ON DELETE CASCADE
      );
      CREATE INDEX item_annotations_by_run ON item_annotations(run_id, key);
    `,
  },
  {
    version: 5,
    description: 'run status unit_unreachable: a run in which no conversation reached the head unit',
    rebuildsReferencedTable: true,
    sql: `
      CREATE TABLE runs_rebuilt (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        mode TEXT NOT NULL,
        config TEXT NOT NULL,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('running','interrupted','completed','budget_exhausted','unit_unreachable')),
        meta TEXT NOT NULL DEFAULT '{}',
        kind TEXT NOT NULL DEFAULT 'dialogue'
      );
      INSERT INTO runs_rebuilt (id, name, mode, config, created_at, finished_at, status, meta, kind)
        SELECT id, name, mode, config, created_at, finished_at, status, meta, kind FROM runs;
      DROP TABLE runs;
      ALTER TABLE runs_rebuilt RENAME TO runs;
    `,
  },
  {
    version: 6,
    description:
      'suite and live runs are kinds of their own: runs stored as dialogue runs with mode "scripted" (a suite) or "live" (a live session) get their kind and their own config ' +
      '(a suite run the config its meta kept under "source"; a live run its session fields, without the dialogue fields it was given to ride the dialogue run path)',
    sql: `
      UPDATE runs SET kind = 'suite', config = COALESCE(json_extract(meta, '$.source.config'), config), meta = json_remove(meta, '$.source')
        WHERE kind = 'dialogue' AND mode = 'scripted';
      UPDATE runs SET kind = 'live', config = json_remove(json_set(config, '$.kind', 'live'),
          '$.description', '$.mode', '$.method', '$.seeds', '$.seedIds', '$.domains', '$.conversations', '$.repeats', '$.personas', '$.strategies', '$.consecutiveLimits',
          '$.maxTurns', '$.dates', '$.timeWindow', '$.budgetMinutes', '$.pipeline', '$.maxErrorShare', '$.seed', '$.world', '$.simulator', '$.voice', '$.diversity')
        WHERE kind = 'dialogue' AND mode = 'live' AND json_valid(config);
    `,
  },
];
