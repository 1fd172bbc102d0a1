import type { RunRecord } from '../../store/types.ts';
import { ErrorBox, Loading } from '../components/common.tsx';
import { useApi } from '../hooks.ts';
import { kindView } from '../routes.ts';
import { ManualRunView } from './ManualRunView.tsx';
import { RunReportView } from './RunReportView.tsx';
import { ToolRunView } from './ToolRunView.tsx';

/** `#/runs/<id>`: the run's own page whatever its kind (the live view links here before it knows more than the id). */
export function RunPage({ runId }: { runId: string }) {
  const run = useApi<{ run: Omit<RunRecord, 'config'> }>(`/api/runs/${encodeURIComponent(runId)}`);
  if (run.error) return <ErrorBox message={run.error} />;
  if (!run.data) return <Loading what="run" />;
  const view = kindView(run.data.run.kind);
  if (view === 'manual') return <ManualRunView runId={runId} />;
  if (view === 'tool-agents') return <ToolRunView runId={runId} />;
  return <RunReportView runId={runId} />;
}
