import { useState } from 'react';
import type { LiveSnapshot } from '../../server/live-snapshot.ts';
import type { ListedRun } from '../../server/server.ts';
import type { RunStatus } from '../../store/types.ts';
import { api } from '../api.ts';
import { navigate, useApi } from '../hooks.ts';

/** Run statuses a run continues from (under the same run id, with the config it stored); a completed run has nothing left. */
const RESUMABLE: readonly string[] = ['interrupted', 'budget_exhausted', 'unit_unreachable'] satisfies RunStatus[];

export function isResumable(status: string): boolean {
  return RESUMABLE.includes(status);
}

/** A campaign is running (or stopping): nothing else may start until it has ended. */
export function campaignBusy(live: Pick<LiveSnapshot, 'state'> | null): boolean {
  return live?.state === 'running' || live?.state === 'stopping';
}

/**
 * Resume for a run that has work left: shown only then, disabled with the reason when the server would refuse it
 * (another campaign runs: the rig runs one at a time; or the run's stored config can no longer start, as
 * `resumeRefusal` of GET /api/runs/:id says), and on success the live view follows it.
 */
export function ResumeButton({ run, live, label = 'Resume' }: { run: { id: string; status: string; resumeRefusal?: string | null }; live?: Pick<LiveSnapshot, 'state' | 'runId'> | null; label?: string }) {
  const resumable = isResumable(run.status);
  const polled = useApi<LiveSnapshot>(live === undefined && resumable ? '/api/campaign' : null);
  // the refusal comes with a listed run; a run page's summary does not carry it
  const listed = useApi<{ run: ListedRun }>(resumable && run.resumeRefusal === undefined ? `/api/runs/${encodeURIComponent(run.id)}` : null);
  const current = live === undefined ? polled.data : live;
  const action = useAction();
  if (!resumable || (current?.runId === run.id && campaignBusy(current))) return null;
  const refusal = run.resumeRefusal !== undefined ? run.resumeRefusal : (listed.data?.run.resumeRefusal ?? null);
  const blocked = campaignBusy(current ?? null) ? 'a campaign is running: stop it or wait for its end first' : refusal;
  const resume = () => action.run(() => api.post('/api/campaign/resume', { runId: run.id }), () => navigate('live'));
  return (
    <span className="buttons">
      <button className="primary" disabled={action.busy || blocked !== null || (run.resumeRefusal === undefined && !listed.data)} title={blocked ?? `continue run ${run.id} (${run.status}) where it stopped`} onClick={() => void resume()} data-testid="resume-run">
        {label}
      </button>
      {blocked && (
        <span className="muted" data-testid="resume-blocked">
          {' '}
          {blocked}
        </span>
      )}
      {action.message && <span className="error-box">{action.message}</span>}
    </span>
  );
}

/** Stop for the running campaign: items in flight are abandoned and run again on resume. */
export function StopButton({ live, onStopped }: { live: Pick<LiveSnapshot, 'state'>; onStopped?: () => void }) {
  const action = useAction();
  const stop = () => action.run(() => api.post('/api/campaign/stop'), onStopped);
  return (
    <span className="buttons">
      <button disabled={action.busy || live.state !== 'running'} onClick={() => void stop()} data-testid="stop-campaign" title="stop after the items in flight; Resume continues the run">
        {live.state === 'stopping' ? 'Stopping…' : 'Stop'}
      </button>
      {action.message && <span className="error-box">{action.message}</span>}
    </span>
  );
}

/** One button's request: busy while it is in flight, and the server's message when it is refused. */
function useAction(): { busy: boolean; message: string | null; run: (request: () => Promise<unknown>, then?: () => void) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const run = async (request: () => Promise<unknown>, then?: () => void) => {
    setBusy(true);
    setMessage(null);
    try {
      await request();
      then?.();
    } catch (error) {
      setMessage((error as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { busy, message, run };
}
