import type { ListedRun } from '../../server/server.ts';
import type { RunRecord, RunStatus } from '../../store/types.ts';
import { useState } from 'react';
import { DataTable, ErrorBox, Loading, Pager, Pill } from '../components/common.tsx';
import { useApi } from '../hooks.ts';
import { runHref } from '../routes.ts';
import { runKindLabel } from '../../domain/run-items.ts';


/** A run as the list shows it: the API's ListedRun, its outcome counts and its kind's view where the server sent them. */
type ListedRows = (Omit<RunRecord, 'config'> & Partial<Pick<ListedRun, 'outcomes' | 'view'>>)[];

/** How each run status reads in the list: a run whose head unit never answered is a failure, not a result. */
const STATUS_PILL: Record<RunStatus, { kind: string; text: string; title?: string }> = {
  running: { kind: 'warn', text: 'running' },
  completed: { kind: 'ok', text: 'completed' },
  interrupted: { kind: 'muted', text: 'interrupted', title: 'stopped before its end; continue it with --resume' },
  budget_exhausted: { kind: 'muted', text: 'budget exhausted' },
  unit_unreachable: { kind: 'fail', text: 'head unit unreachable', title: 'no conversation reached the head unit: its results say nothing about the unit (icabench run exited 4)' },
};

export function RunsView() {
  const runs = useApi<{ runs: ListedRows }>('/api/runs');
  return (
    <section>
      <h1>Runs</h1>
      {runs.error && <ErrorBox message={runs.error} />}
      {!runs.data && !runs.error && <Loading what="runs" />}
      {runs.data && runs.data.runs.length === 0 && <p className="muted">No runs yet. Start one from Campaign setup.</p>}
      {runs.data && runs.data.runs.length > 0 && <PagedRuns runs={runs.data.runs} />}
    </section>
  );
}

/** Runs shown a page at a time: a workspace collects hundreds. */
export const RUNS_PAGE = 50;

export function PagedRuns({ runs }: { runs: ListedRows }) {
  const [offset, setOffset] = useState(0);
  return (
    <>
      {runs.length > RUNS_PAGE && <Pager offset={offset} limit={RUNS_PAGE} total={runs.length} onChange={setOffset} noun="runs" />}
      <RunsTable runs={runs.slice(offset, offset + RUNS_PAGE)} />
    </>
  );
}

/** The runs, newest first, each with its status badge and links to its views. */
export function RunsTable({ runs }: { runs: ListedRows }) {
  return (
    <DataTable headers={['Run', 'Name', 'Kind', 'Status', 'Passed', 'Failed', 'Stored / planned', 'Started', '']} testId="runs-table">
      {runs.map((r) => (
        <tr key={r.id}>
          <td>
            <a href={runHref(r.id, r.view?.page)}>{r.id}</a>
          </td>
          <td>{r.name}</td>
          <td data-testid="run-kind">{runKindLabel(r)}</td>
          <td>
            <span title={STATUS_PILL[r.status].title} data-status={r.status}>
              <Pill kind={STATUS_PILL[r.status].kind}>{STATUS_PILL[r.status].text}</Pill>
            </span>
          </td>
          <td data-testid="run-passed">{r.outcomes?.pass ?? 0}</td>
          <td data-testid="run-failed">{r.outcomes?.fail ?? 0}</td>
          <td>
            {r.stored} / {r.planned}
          </td>
          <td>{new Date(r.createdAt).toLocaleString()}</td>
          <td>
            {(r.view?.links ?? []).map((link) => (
              <a key={link.path} href={`#/runs/${encodeURIComponent(r.id)}/${link.path}`}>
                {link.label}
              </a>
            ))}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
