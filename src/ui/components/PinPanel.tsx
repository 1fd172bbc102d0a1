import { useEffect, useState } from 'react';
import type { ConversationPage } from '../../store/store.ts';
import type { ConversationRow } from '../../store/types.ts';
import { api } from '../api.ts';
import { useLiveCampaign } from '../hooks.ts';
import { ErrorBox, Pill } from './common.tsx';

interface Pinned {
  path: string;
  file: string;
  yaml: string;
  folder: string;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Pin → suite → run (docs/suites.md, docs/bench-app.md): pins the conversation as a scripted suite into the suites
 * folder `icabench pin` writes to, replays it in one click against the head unit of the run it came from (judged by
 * that run's rules), and once the replay ends sets its outcome beside the original's, with the two runs' comparison.
 */
export function PinPanel({ runId, conversationKey, path }: { runId: string; conversationKey: string; path: string }) {
  const [pinned, setPinned] = useState<Pinned | null>(null);
  const [replayRun, setReplayRun] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function pin() {
    setError(null);
    try {
      setPinned(await api.post<Pinned>(`${path}/pin`, {}));
      setReplayRun(null);
    } catch (e) {
      setError(message(e));
    }
  }
  async function run(file: string) {
    setError(null);
    try {
      setReplayRun((await api.post<{ runId: string }>('/api/suites/run', { suite: file, runId })).runId);
    } catch (e) {
      setError(message(e));
    }
  }
  return (
    <div className="pin">
      <div className="buttons">
        <button onClick={pin} data-testid="pin-conversation" title="Pin as a regression: a scripted suite of this conversation's turns, contexts and expectations">
          Pin as regression
        </button>
        {pinned && (
          <button className="primary" onClick={() => void run(pinned.file)} disabled={replayRun !== null} data-testid="run-pinned-suite" title="Replay the pinned suite against the head unit of this run, judged by its rules">
            Run pinned suite
          </button>
        )}
      </div>
      {error && <ErrorBox message={error} />}
      {replayRun && <ReplayResult originalRun={runId} replayRun={replayRun} conversationKey={conversationKey} />}
      {pinned && (
        <details open data-testid="pinned-suite">
          <summary>
            Pinned as <code>{pinned.path}</code> (the suites folder {pinned.folder}, shared with <code>icabench pin</code>)
          </summary>
          <pre className="pinned-yaml">{pinned.yaml}</pre>
        </details>
      )}
    </div>
  );
}

async function conversationRow(runId: string, key: string): Promise<ConversationRow | null> {
  const page = await api.get<ConversationPage>(`/api/runs/${encodeURIComponent(runId)}/conversations?key=${encodeURIComponent(key)}&limit=50`);
  return page.rows.find((row) => row.key === key) ?? null;
}

function RowOutcome({ row }: { row: ConversationRow | null }) {
  if (!row) return <span className="muted">not stored</span>;
  return (
    <>
      <Pill kind={row.outcome}>{row.outcome}</Pill>
      {row.labels.length ? row.labels.map((l) => <Pill key={l} kind="label">{l}</Pill>) : <span className="muted">no findings</span>}
    </>
  );
}

/** The replay while it runs (a link to Live), then its outcome beside the original's and the link to the two runs' comparison. */
function ReplayResult({ originalRun, replayRun, conversationKey }: { originalRun: string; replayRun: string; conversationKey: string }) {
  const { snapshot } = useLiveCampaign();
  const finished = snapshot.runId === replayRun && (snapshot.state === 'finished' || snapshot.state === 'failed');
  const [rows, setRows] = useState<{ original: ConversationRow | null; replay: ConversationRow | null } | null>(null);
  useEffect(() => {
    if (!finished) return;
    void Promise.all([conversationRow(originalRun, conversationKey), conversationRow(replayRun, conversationKey)]).then(([original, replay]) => setRows({ original, replay }));
  }, [finished, originalRun, replayRun, conversationKey]);
  if (!finished || !rows) {
    return (
      <p data-testid="pinned-replay-running">
        Replaying as run <a href={`#/runs/${encodeURIComponent(replayRun)}`}>{replayRun}</a>… <a href="#/live">follow it live →</a>
      </p>
    );
  }
  return (
    <div className="card" data-testid="pinned-replay-result">
      <div>
        Original (run {originalRun}): <RowOutcome row={rows.original} />
      </div>
      <div>
        Replay (run <a href={`#/runs/${encodeURIComponent(replayRun)}`}>{replayRun}</a>): <RowOutcome row={rows.replay} />
      </div>
      <div>
        {rows.original?.outcome === rows.replay?.outcome ? 'Same outcome as the original.' : `Outcome changed: ${rows.original?.outcome ?? '–'} → ${rows.replay?.outcome ?? '–'}.`}{' '}
        <a href={`#/compare/${encodeURIComponent(originalRun)}/${encodeURIComponent(replayRun)}`} data-testid="compare-replay">
          Compare the two runs →
        </a>
      </div>
    </div>
  );
}
