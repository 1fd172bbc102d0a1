import type { ReactNode } from 'react';
import { turnNumber } from '../../domain/conversation.ts';
import type { Target, TargetStatus } from '../../domain/targets.ts';
import { describeRequest, targetStatusText } from '../views/describe.ts';

export function Pill({ kind, children }: { kind: string; children: ReactNode }) {
  return <span className={`pill pill-${kind}`}>{children}</span>;
}

/** A target's status g_k (1 completed, -1 dropped, 0 open) as a coloured pill. */
export function TargetStatusPill({ status }: { status: TargetStatus }) {
  return <Pill kind={status === 1 ? 'ok' : status === -1 ? 'muted' : 'warn'}>{targetStatusText(status)}</Pill>;
}

/**
 * The targets G of a conversation: id, request and status, and with `turns` the turns that
 * introduced and completed each. The live view and the conversation view both show it.
 */
export function TargetTable({ targets, className, turns = false }: { targets: readonly Target[]; className: string; turns?: boolean }) {
  return (
    <table className={className} data-testid="target-table">
      <tbody>
        {targets.map((t) => (
          <tr key={t.id}>
            <td>{t.id}</td>
            <td>{describeRequest(t.request)}</td>
            <td>
              <TargetStatusPill status={t.status} />
            </td>
            {turns && (
              <td className="muted">
                introduced turn {t.introducedTurn === null ? '—' : turnNumber(t.introducedTurn)}, completed turn {t.completedTurn === null ? '—' : turnNumber(t.completedTurn)}
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Loading({ what }: { what: string }) {
  return <p className="muted">Loading {what}…</p>;
}

export function ErrorBox({ message }: { message: string }) {
  return (
    <p className="error-box" role="alert">
      {message}
    </p>
  );
}

export function Stat({ label, value, testId }: { label: string; value: ReactNode; testId?: string }) {
  return (
    <div className="stat" data-testid={testId}>
      <div className="stat-value">{value}</div>
      <div className="stat-label">{label}</div>
    </div>
  );
}

/** Fixed precision for rates and statistics; "n/a" for an undefined statistic. */
export function fmt(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);
}

export function pct(value: number | null | undefined): string {
  return value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : `${(value * 100).toFixed(1)} %`;
}

export function Pager({ offset, limit, total, onChange, noun = 'conversations' }: { offset: number; limit: number; total: number; onChange: (offset: number) => void; noun?: string }) {
  const page = Math.floor(offset / limit) + 1;
  const pages = Math.max(1, Math.ceil(total / limit));
  return (
    <div className="pager">
      <button disabled={offset === 0} onClick={() => onChange(0)}>
        «
      </button>
      <button disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
        ‹ Prev
      </button>
      <span data-testid="pager-status">
        page {page} of {pages} · {total} {noun}
      </span>
      <button disabled={page >= pages} onClick={() => onChange(offset + limit)}>
        Next ›
      </button>
      <button disabled={page >= pages} onClick={() => onChange((pages - 1) * limit)}>
        »
      </button>
    </div>
  );
}

/** A table with one header row and the given body rows: the views' one table markup. */
export function DataTable({ headers, testId, children }: { headers: readonly ReactNode[]; testId?: string; children: ReactNode }) {
  return (
    <table className="table" data-testid={testId}>
      <thead>
        <tr>
          {headers.map((h, i) => (
            <th key={i}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** The head of an item-based run's view (manual-QA, tool agents): title, the way back to the runs list, and the run's facts. */
export function RunHeader({ title, children, actions }: { title: ReactNode; children: ReactNode; actions?: ReactNode }) {
  return (
    <>
      <div className="title-row">
        <h1>{title}</h1>
        <a href="#/runs">← runs</a>
        {actions}
      </div>
      <p className="muted">{children}</p>
    </>
  );
}
