import type { RunRecord } from '../../store/types.ts';
import { DataTable, ErrorBox, Loading, Pill } from '../components/common.tsx';
import { useApi } from '../hooks.ts';

/** The view a run of an item-based kind opens in (dialogue runs open the run report). */
const KIND_VIEW: Record<string, string> = { 'manual-qa': '/manual', 'tool-agents': '/tool-agents' };

export function RunsView() {
  const runs = useApi<{ runs: Omit<RunRecord, 'config'>[] }>('/api/runs');
  return (
    <section>
      <h1>Runs</h1>
      {runs.error && <ErrorBox message={runs.error} />}
      {!runs.data && !runs.error && <Loading what="runs" />}
      {runs.data && runs.data.runs.length === 0 && <p className="muted">No runs yet. Start one from Campaign setup.</p>}
      {runs.data && runs.data.runs.length > 0 && (
        <DataTable headers={['Run', 'Name', 'Kind · mode', 'Status', 'Stored / planned', 'Started', '']} testId="runs-table">
          {runs.data.runs.map((r) => (
            <tr key={r.id}>
              <td>
                <a href={`#/runs/${encodeURIComponent(r.id)}${KIND_VIEW[r.kind] ?? ''}`}>{r.id}</a>
              </td>
              <td>{r.name}</td>
              <td>
                {r.kind} · {r.mode}
              </td>
              <td>
                <Pill kind={r.status === 'completed' ? 'ok' : r.status === 'running' ? 'warn' : 'muted'}>{r.status}</Pill>
              </td>
              <td>
                {r.stored} / {r.planned}
              </td>
              <td>{new Date(r.createdAt).toLocaleString()}</td>
              <td>
                {r.kind === 'tool-agents' ? (
                  <a href={`#/runs/${encodeURIComponent(r.id)}/tool-agents`}>tasks & trials</a>
                ) : (
                  <a href={`#/runs/${encodeURIComponent(r.id)}${r.kind === 'manual-qa' ? '/manual' : '/agreement'}`}>{r.kind === 'manual-qa' ? 'facts & annotation' : 'agreement'}</a>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
