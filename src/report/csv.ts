import type { ConversationResult } from '../domain/conversation.ts';
import { combinedVerdict, turnLabels } from '../analysis/verdict.ts';
import { csvRow } from './escape.ts';
import { RowSpool } from './spool.ts';

export const CONVERSATION_CSV_COLUMNS = [
  'key',
  'seed_id',
  'persona',
  'mode',
  'repeat',
  'status',
  'outcome',
  'score',
  'decided_by',
  'score_pass',
  'gate',
  'failed_by',
  'turns',
  'unique_failure_types',
  'labels',
  'strategies_used',
  'error',
  'started_at',
  'duration_ms',
] as const;

/** conversations.csv: one row per conversation; labels and strategies joined with ";". */
export class ConversationCsvWriter {
  private readonly rows: RowSpool;

  /** `path`: the CSV to write; its rows are spooled beside it as they come */
  constructor(path: string) {
    this.rows = new RowSpool(path);
  }

  add(result: ConversationResult, combined = combinedVerdict(result)): void {
    const labels = [...new Set(result.turns.flatMap((t) => turnLabels(t).map((l) => l.label)))];
    const strategies = [...new Set(result.turns.flatMap((t) => (t.utterance.strategy ? [t.utterance.strategy] : [])))];
    this.rows.add(
      csvRow([
        result.spec.key,
        result.spec.seed.id,
        result.spec.persona,
        result.spec.mode,
        result.spec.repeat,
        result.status,
        combined.outcome,
        combined.score,
        combined.judge,
        combined.scorePass,
        combined.gate.join(';'),
        combined.failedBy.join(';'),
        result.turns.length,
        labels.length,
        labels.join(';'),
        strategies.join(';'),
        result.error,
        result.startedAt,
        Math.round(result.durationMs),
      ]),
    );
  }

  write(): void {
    this.rows.writeAround(csvRow(CONVERSATION_CSV_COLUMNS), '');
  }

  discard(): void {
    this.rows.discard();
  }
}
