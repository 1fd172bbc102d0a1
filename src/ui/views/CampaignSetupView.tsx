import { useEffect, useMemo, useRef, useState } from 'react';
import type { ConfigFieldError, ConfigListing } from '../../server/configs.ts';
import type { LiveSnapshot } from '../../server/live-snapshot.ts';
import type { ListedRun } from '../../server/server.ts';
import { api, ApiFailure } from '../api.ts';
import { ErrorBox, Pill } from '../components/common.tsx';
import { campaignBusy, isResumable, ResumeButton, StopButton } from '../components/CampaignButtons.tsx';
import { navigate, useApi } from '../hooks.ts';

const LINE_HEIGHT = 20;

export function CampaignSetupView() {
  const configs = useApi<{ configs: ConfigListing[] }>('/api/configs');
  const runs = useApi<{ runs: ListedRun[] }>('/api/runs');
  const live = useApi<LiveSnapshot>('/api/campaign');
  const [name, setName] = useState<string | null>(null);
  const [original, setOriginal] = useState('');
  const [text, setText] = useState('');
  const [errors, setErrors] = useState<ConfigFieldError[]>([]);
  const [originalErrors, setOriginalErrors] = useState<ConfigFieldError[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [scrollTop, setScrollTop] = useState(0);
  const editor = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    if (name === null && configs.data?.configs.length) {
      setName(configs.data.configs.find((c) => c.name === 'quickstart.yaml')?.name ?? configs.data.configs[0].name);
    }
  }, [configs.data, name]);

  useEffect(() => {
    if (!name) return;
    api.get<{ text: string; errors: ConfigFieldError[] }>(`/api/configs/${encodeURIComponent(name)}`).then(
      (read) => {
        setOriginal(read.text);
        setText(read.text);
        setOriginalErrors(read.errors);
      },
      (error: Error) => setMessage(error.message),
    );
  }, [name]);

  // validate edits as the user types (same schema as `icabench run`)
  useEffect(() => {
    if (text === original) {
      setErrors(originalErrors);
      return;
    }
    const timer = setTimeout(() => {
      api.post<{ valid: boolean; errors: ConfigFieldError[] }>('/api/configs/validate', { text }).then(
        (check) => setErrors(check.errors),
        (error: Error) => setMessage(error.message),
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [text, original, originalErrors]);

  const errorsByLine = useMemo(() => {
    const map = new Map<number, ConfigFieldError[]>();
    for (const e of errors) if (e.line !== null) map.set(e.line, [...(map.get(e.line) ?? []), e]);
    return map;
  }, [errors]);
  const lineCount = text.split('\n').length;
  const running = campaignBusy(live.data);
  const resumable = (runs.data?.runs ?? []).filter((r) => isResumable(r.status));
  const listing = configs.data?.configs.find((c) => c.name === name);

  async function act(what: () => Promise<unknown>, then?: () => void) {
    setBusy(true);
    setMessage(null);
    try {
      await what();
      then?.();
    } catch (error) {
      if (error instanceof ApiFailure && error.fields.length) setErrors(error.fields.map((f) => ({ ...f, line: (f as ConfigFieldError).line ?? null })));
      setMessage((error as Error).message);
    } finally {
      setBusy(false);
      live.reload();
      runs.reload();
    }
  }

  const start = () => act(() => api.post('/api/campaign/start', { configName: name, ...(text !== original ? { text } : {}) }), () => navigate('live'));

  return (
    <section>
      <h1>Campaign setup</h1>
      {configs.error && <ErrorBox message={configs.error} />}
      <div className="setup">
        <aside className="config-list">
          <h2>Configs</h2>
          <ul>
            {(configs.data?.configs ?? []).map((c) => (
              <li key={c.name}>
                <button className={c.name === name ? 'link active' : 'link'} onClick={() => setName(c.name)} data-testid={`config-${c.name}`}>
                  {c.name}
                </button>{' '}
                {c.kind && <Pill kind="tier">{c.kind}</Pill>}
                {c.valid ? <Pill kind="ok">valid</Pill> : <Pill kind="fail">{c.errors.length} errors</Pill>}
              </li>
            ))}
          </ul>
          <h2>Campaign</h2>
          <p>
            State: <Pill kind={running ? 'warn' : 'ok'}>{live.data?.state ?? '…'}</Pill>
          </p>
          <div className="buttons">
            <button
              className="primary"
              disabled={busy || running || !name || errors.length > 0}
              title={running ? 'a campaign is running: stop it or wait for its end first' : errors.length > 0 ? 'fix the problems marked in the config first' : undefined}
              onClick={start}
              data-testid="start-campaign"
            >
              Start {name}
              {listing?.kind ? ` (${listing.kind})` : ''}
              {text !== original ? ' (edited)' : ''}
            </button>
            <StopButton live={live.data ?? { state: 'idle' }} onStopped={() => (live.reload(), runs.reload())} />
          </div>
          {errors.length > 0 && !running && (
            <p className="muted" data-testid="start-blocked">
              Start is off until the {errors.length} problem(s) marked in the config are fixed.
            </p>
          )}
          {resumable.length > 0 && (
            <>
              <h2>Resume</h2>
              <ul>
                {resumable.map((r) => (
                  <li key={r.id}>
                    <ResumeButton run={r} live={live.data} label={`Resume ${r.name} (${r.stored}/${r.planned}, ${r.status})`} />
                  </li>
                ))}
              </ul>
            </>
          )}
          {message && <ErrorBox message={message} />}
        </aside>
        <div className="editor-wrap">
          <div className="editor-head">
            <strong>{name ?? '—'}</strong> {errors.length === 0 ? <Pill kind="ok">valid</Pill> : <Pill kind="fail">{errors.length} problems</Pill>}
            {text !== original && (
              <button className="link" onClick={() => setText(original)}>
                revert edits
              </button>
            )}
          </div>
          <div className="editor">
            <div className="gutter" aria-hidden="true">
              <div style={{ transform: `translateY(${-scrollTop}px)` }}>
                {Array.from({ length: lineCount }, (_, i) => (
                  <div key={i} className={errorsByLine.has(i + 1) ? 'gutter-line bad' : 'gutter-line'} style={{ height: LINE_HEIGHT }}>
                    {i + 1}
                  </div>
                ))}
              </div>
            </div>
            <textarea
              ref={editor}
              spellCheck={false}
              value={text}
              onChange={(e) => setText(e.target.value)}
              onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
              aria-label="campaign config YAML"
              data-testid="config-editor"
            />
            <div className="field-errors" aria-live="polite">
              <div style={{ transform: `translateY(${-scrollTop}px)` }}>
                {[...errorsByLine.entries()].map(([line, list]) => (
                  <div key={line} className="field-error" style={{ top: (line - 1) * LINE_HEIGHT }} data-testid="field-error">
                    ← {list.map((e) => `${e.path}: ${e.message}`).join('; ')}
                  </div>
                ))}
              </div>
            </div>
          </div>
          {errors.filter((e) => e.line === null).map((e, i) => (
            <p key={i} className="error-box">
              {e.path}: {e.message}
            </p>
          ))}
        </div>
      </div>
    </section>
  );
}
