import { useEffect, useState } from 'react';
import type { CheckResult, ConformanceReport } from '../../conformance/checks.ts';
import type { ConformanceStatus, DamagedConformanceReport, ListedConformanceReport } from '../../server/conformance-runs.ts';
import { api } from '../api.ts';
import { DataTable, ErrorBox, Loading, Pill } from '../components/common.tsx';
import { navigate, useApi } from '../hooks.ts';

type Listing = { current: ConformanceStatus; reports: ListedConformanceReport[]; damaged: DamagedConformanceReport[] };

const PILL: Record<CheckResult['status'], string> = { pass: 'pass', fail: 'fail', skipped: 'muted' };

/** The checks of one run: verdict, what came back, what the protocol requires, and the messages on demand. */
function CheckTable({ checks }: { checks: readonly CheckResult[] }) {
  return (
    <DataTable headers={['Check', 'Result', 'Detail', 'The protocol requires']} testId="conformance-checks">
      {checks.map((check) => (
        <tr key={check.id} className={`row-${check.status}`}>
          <td>{check.title}</td>
          <td>
            <Pill kind={PILL[check.status]}>{check.status}</Pill>
          </td>
          <td>
            {check.detail}
            {check.evidence.length > 0 && (
              <details>
                <summary>{check.evidence.length} messages</summary>
                <pre className="evidence">
                  {check.evidence.map((e) => `${e.atMs.toFixed(1)} ms ${e.direction === 'sent' ? 'bench → unit' : e.direction === 'received' ? 'unit → bench' : 'note'} ${e.event === 'note' ? String(e.payload) : `${e.event} ${JSON.stringify(e.payload)}`}`).join('\n')}
                </pre>
              </details>
            )}
          </td>
          <td className="muted">{check.requires}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/** `icabench conformance` in the app: start a run that waits for a unit, watch its checks, read the stored reports. */
export function ConformanceView({ reportId }: { reportId: string | null }) {
  const listing = useApi<Listing>('/api/conformance');
  const [form, setForm] = useState({ port: '7311', host: '127.0.0.1', waitSeconds: '120', turnTimeoutMs: '15000', token: '' });
  const [startError, setStartError] = useState<string | null>(null);
  const active = listing.data?.current.state === 'waiting' || listing.data?.current.state === 'running';
  // while a run waits or runs, follow it
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(listing.reload, 1000);
    return () => clearInterval(timer);
  }, [active, listing.reload]);

  const start = () => {
    setStartError(null);
    api
      .post('/api/conformance/start', {
        host: form.host,
        port: Number(form.port),
        waitSeconds: Number(form.waitSeconds),
        turnTimeoutMs: Number(form.turnTimeoutMs),
        ...(form.token ? { token: form.token } : {}),
      })
      .then(listing.reload, (error: Error) => setStartError(error.message));
  };
  const field = (name: keyof typeof form, label: string, type = 'text') => (
    <label>
      {label} <input type={type} value={form[name]} onChange={(e) => setForm({ ...form, [name]: e.target.value })} disabled={active} />
    </label>
  );
  const current = listing.data?.current;

  return (
    <section>
      <div className="title-row">
        <h1>Conformance</h1>
      </div>
      <p className="muted">
        Waits for a head unit to dial in to a bridge and checks its side of the protocol: hello and token, capabilities, text turns, reply schema, turn ids, timing,
        reconnect, and audio, vehicle context and tools when it declares them (docs/conformance.md).
      </p>
      <div className="form-row">
        {field('host', 'Host')}
        {field('port', 'Port', 'number')}
        {field('waitSeconds', 'Wait (s)', 'number')}
        {field('turnTimeoutMs', 'Turn timeout (ms)', 'number')}
        {field('token', 'Token (default $ICABENCH_BRIDGE_TOKEN)', 'password')}
        <button onClick={start} disabled={active} data-testid="conformance-start">
          Start
        </button>
      </div>
      {startError && <ErrorBox message={startError} />}
      {listing.error && <ErrorBox message={listing.error} />}
      {current && current.state !== 'idle' && <CurrentRun current={current} />}
      {reportId && <StoredReport reportId={reportId} />}
      <ReportList reports={listing.data?.reports ?? null} damaged={listing.data?.damaged ?? []} />
    </section>
  );
}

/** The run in progress: waiting for a unit, its checks as they complete, then the link to its report. */
function CurrentRun({ current }: { current: ConformanceStatus }) {
  return (
    <div data-testid="conformance-current">
      <h2 data-testid="conformance-state">
        {current.state === 'waiting' && `Waiting for a head unit at ${current.bridgeUrl}`}
        {current.state === 'running' && 'Running'}
        {current.state === 'done' && 'Finished'}
        {current.state === 'failed' && 'Could not finish'}
      </h2>
      {current.error && <ErrorBox message={current.error} />}
      {current.reportId && (
        <p>
          <a href={`#/conformance/${current.reportId}`} data-testid="conformance-open-report">
            Open the report
          </a>
        </p>
      )}
      {current.checks.length > 0 && current.state !== 'done' && <CheckTable checks={current.checks} />}
    </div>
  );
}

/** One stored report: the unit, the verdict, the limits and what the unit declared, and its checks. */
function StoredReport({ reportId }: { reportId: string }) {
  const report = useApi<{ report: ConformanceReport }>(`/api/conformance/${encodeURIComponent(reportId)}`);
  if (report.error) return <ErrorBox message={report.error} />;
  if (!report.data) return <Loading what="the report" />;
  return (
    <div data-testid="conformance-report">
      <h2 data-testid="conformance-verdict">
        {report.data.report.unit ? `${report.data.report.unit.name} ${report.data.report.unit.version}` : 'No unit dialled in'}{' '}
        <Pill kind={report.data.report.passed ? 'pass' : 'fail'}>{report.data.report.passed ? 'passed' : 'failed'}</Pill>
      </h2>
      <p className="muted">
        {report.data.report.protocol} · started {report.data.report.startedAt} · turn timeout {report.data.report.limits.turnTimeoutMs} ms · declared{' '}
        <code>{JSON.stringify(report.data.report.declared)}</code>
      </p>
      <CheckTable checks={report.data.report.checks} />
    </div>
  );
}

/** The workspace's stored reports, newest first. */
function ReportList({ reports, damaged }: { reports: Listing['reports'] | null; damaged: Listing['damaged'] }) {
  return (
    <>
      <h2>Reports</h2>
      {reports && reports.length === 0 && damaged.length === 0 && <p className="muted">No conformance runs in this workspace yet.</p>}
      {damaged.map((d) => (
        <p key={d.id} className="muted" data-testid="conformance-damaged">
          Report {d.id} cannot be read: {d.problem}
        </p>
      ))}
      {reports && reports.length > 0 && (
        <DataTable headers={['Started', 'Unit', 'Result', 'Failed checks']} testId="conformance-reports">
          {reports.map((r) => (
            <tr key={r.id} className="clickable" onClick={() => navigate('conformance', r.id)}>
              <td>{r.startedAt}</td>
              <td>{r.unit ? `${r.unit.name} ${r.unit.version}` : '—'}</td>
              <td>
                <Pill kind={r.passed ? 'pass' : 'fail'}>{r.passed ? 'passed' : 'failed'}</Pill>
              </td>
              <td>{r.failed.join(', ') || '—'}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}
