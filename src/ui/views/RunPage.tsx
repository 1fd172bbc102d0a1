import type { ListedRun } from '../../server/server.ts';
import { ErrorBox, Loading, RunHeader } from '../components/common.tsx';
import { useApi } from '../hooks.ts';
import { pageNamed } from '../kind-pages.ts';

/** `#/runs/<id>`: the run's own page, the one its kind's view names (the live view links here before it knows more than the id). */
export function RunPage({ runId }: { runId: string }) {
  const run = useApi<{ run: ListedRun }>(`/api/runs/${encodeURIComponent(runId)}`);
  if (run.error) return <ErrorBox message={run.error} />;
  if (!run.data) return <Loading what="run" />;
  const page = pageNamed(run.data.run.view?.page);
  return page ? <page.RunView runId={runId} /> : <GenericRunView run={run.data.run} />;
}

/**
 * The page of a run whose kind names a page this app does not have: its method line, its links and its summary.json as
 * `icabench run` writes it. A kind brings its own page to the app (a `KindPage` listed in src/ui/kind-pages.ts) when it needs more.
 */
export function GenericRunView({ run }: { run: ListedRun }) {
  const summary = useApi<unknown>(`/api/runs/${encodeURIComponent(run.id)}/summary.json`);
  return (
    <section>
      <RunHeader title={`${run.name} (${run.kind})`}>
        <span data-testid="run-method">
          {run.id} · {run.status} · {run.stored}/{run.planned} · method: {run.view?.paper ?? 'unknown (a kind this version of the app does not know)'}
        </span>
      </RunHeader>
      {(run.view?.links ?? []).map((link) => (
        <a key={link.path} href={`#/runs/${encodeURIComponent(run.id)}/${link.path}`}>
          {link.label}
        </a>
      ))}
      {summary.error && <ErrorBox message={summary.error} />}
      {summary.data !== undefined && summary.data !== null && <pre data-testid="run-summary-json">{JSON.stringify(summary.data, null, 2)}</pre>}
    </section>
  );
}
