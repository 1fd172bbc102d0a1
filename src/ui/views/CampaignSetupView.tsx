import { useEffect, useState } from 'react';
import type { ConfigFieldError, ConfigListing } from '../../server/configs.ts';
import type { LiveSnapshot } from '../../server/live-snapshot.ts';
import type { ListedRun } from '../../server/server.ts';
import { api, ApiFailure } from '../api.ts';
import { ErrorBox, Pill } from '../components/common.tsx';
import { campaignBusy, isResumable, ResumeButton, StopButton } from '../components/CampaignButtons.tsx';
import { YamlEditor } from '../components/YamlEditor.tsx';
import { TestSetGeneratorPanel } from '../components/TestSetGeneratorPanel.tsx';
import { navigate, useApi } from '../hooks.ts';

/** The config being edited: its text as read and as edited, and the field errors of the edit (validated as the user types, with the schema of `icabench run`). */
function useConfigText(name: string | null, onError: (message: string) => void) {
  const [original, setOriginal] = useState('');
  const [text, setText] = useState('');
  const [errors, setErrors] = useState<ConfigFieldError[]>([]);
  const [originalErrors, setOriginalErrors] = useState<ConfigFieldError[]>([]);
  useEffect(() => {
    if (!name) return;
    api.get<{ text: string; errors: ConfigFieldError[] }>(`/api/configs/${encodeURIComponent(name)}`).then(
      (read) => {
        setOriginal(read.text);
        setText(read.text);
        setOriginalErrors(read.errors);
      },
      (error: Error) => onError(error.message),
    );
  }, [name]); // onError is a state setter: stable
  useEffect(() => {
    if (text === original) {
      setErrors(originalErrors);
      return;
    }
    const timer = setTimeout(() => {
      api.post<{ valid: boolean; errors: ConfigFieldError[] }>('/api/configs/validate', { text }).then(
        (check) => setErrors(check.errors),
        (error: Error) => onError(error.message),
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [text, original, originalErrors]);
  return { original, text, setText, errors, setErrors, edited: text !== original };
}

export function CampaignSetupView() {
  const configs = useApi<{ configs: ConfigListing[] }>('/api/configs');
  const runs = useApi<{ runs: ListedRun[] }>('/api/runs');
  const live = useApi<LiveSnapshot>('/api/campaign');
  const [name, setName] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const config = useConfigText(name, setMessage);

  useEffect(() => {
    if (name === null && configs.data?.configs.length) {
      setName(configs.data.configs.find((c) => c.name === 'quickstart.yaml')?.name ?? configs.data.configs[0].name);
    }
  }, [configs.data, name]);

  async function act(what: () => Promise<unknown>, then?: () => void) {
    setBusy(true);
    setMessage(null);
    try {
      await what();
      then?.();
    } catch (error) {
      if (error instanceof ApiFailure && error.fields.length) config.setErrors(error.fields.map((f) => ({ ...f, line: (f as ConfigFieldError).line ?? null })));
      setMessage((error as Error).message);
    } finally {
      setBusy(false);
      live.reload();
      runs.reload();
    }
  }
  const start = () => act(() => api.post('/api/campaign/start', { configName: name, ...(config.edited ? { text: config.text } : {}) }), () => navigate('live'));
  const listing = configs.data?.configs.find((c) => c.name === name);

  return (
    <section>
      <h1>Campaign setup</h1>
      {configs.error && <ErrorBox message={configs.error} />}
      <div className="setup">
        <aside className="config-list">
          <ConfigList configs={configs.data?.configs ?? []} selected={name} onSelect={setName} />
          <CampaignPanel
            live={live.data}
            resumable={(runs.data?.runs ?? []).filter((r) => isResumable(r.status))}
            startLabel={`Start ${name ?? ''}${listing?.kind ? ` (${listing.kind})` : ''}${config.edited ? ' (edited)' : ''}`}
            canStart={!busy && Boolean(name)}
            problems={config.errors.length}
            onStart={start}
            onStopped={() => (live.reload(), runs.reload())}
          />
          {message && <ErrorBox message={message} />}
          {/* a config that names a manual (a manual-QA config) can have its test set generated with a model */}
          {name && /^manual:/m.test(config.original) && <TestSetGeneratorPanel configName={name} />}
        </aside>
        <div className="editor-wrap">
          <div className="editor-head">
            <strong>{name ?? '—'}</strong> {config.errors.length === 0 ? <Pill kind="ok">valid</Pill> : <Pill kind="fail">{config.errors.length} problems</Pill>}
            {config.edited && (
              <button className="link" onClick={() => config.setText(config.original)}>
                revert edits
              </button>
            )}
          </div>
          <YamlEditor text={config.text} onChange={config.setText} errors={config.errors} />
          {config.errors
            .filter((e) => e.line === null)
            .map((e, i) => (
              <p key={i} className="error-box">
                {e.path}: {e.message}
              </p>
            ))}
        </div>
      </div>
    </section>
  );
}

/** The configs in bench-configs/, each with its kind (other than dialogue) and whether it validates. */
function ConfigList({ configs, selected, onSelect }: { configs: readonly ConfigListing[]; selected: string | null; onSelect: (name: string) => void }) {
  return (
    <>
      <h2>Configs</h2>
      <ul>
        {configs.map((c) => (
          <li key={c.name}>
            <button className={c.name === selected ? 'link active' : 'link'} onClick={() => onSelect(c.name)} data-testid={`config-${c.name}`}>
              {c.name}
            </button>{' '}
            {c.kind && <Pill kind="tier">{c.kind}</Pill>}
            {c.valid ? <Pill kind="ok">valid</Pill> : <Pill kind="fail">{c.errors.length} errors</Pill>}
          </li>
        ))}
      </ul>
    </>
  );
}

/** Start (off while a campaign runs or the config has problems, saying why), Stop, and the runs that can be resumed. */
function CampaignPanel(props: {
  live: LiveSnapshot | null;
  resumable: readonly ListedRun[];
  startLabel: string;
  canStart: boolean;
  problems: number;
  onStart: () => void;
  onStopped: () => void;
}) {
  const running = campaignBusy(props.live);
  return (
    <>
      <h2>Campaign</h2>
      <p>
        State: <Pill kind={running ? 'warn' : 'ok'}>{props.live?.state ?? '…'}</Pill>
      </p>
      <div className="buttons">
        <button
          className="primary"
          disabled={!props.canStart || running || props.problems > 0}
          title={running ? 'a campaign is running: stop it or wait for its end first' : props.problems > 0 ? 'fix the problems marked in the config first' : undefined}
          onClick={props.onStart}
          data-testid="start-campaign"
        >
          {props.startLabel}
        </button>
        <StopButton live={props.live ?? { state: 'idle' }} onStopped={props.onStopped} />
      </div>
      {props.problems > 0 && !running && (
        <p className="muted" data-testid="start-blocked">
          Start is off until the {props.problems} problem(s) marked in the config are fixed.
        </p>
      )}
      {props.resumable.length > 0 && (
        <>
          <h2>Resume</h2>
          <ul>
            {props.resumable.map((r) => (
              <li key={r.id}>
                <ResumeButton run={r} live={props.live} label={`Resume ${r.name} (${r.stored}/${r.planned}, ${r.status})`} />
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}
