import { useEffect, useState } from 'react';
import { observationLines } from '../../domain/bus-observation.ts';
import { combinedVerdict } from '../../analysis/verdict.ts';
import { decidingTurnVerdict } from '../../judge/precedence.ts';
import { turnNumber, type ConversationResult, type TurnRecord } from '../../domain/conversation.ts';
import type { TargetStatus } from '../../domain/targets.ts';
import { DIMENSIONS, DIMENSION_TITLES, FAILURE_LABELS, type Dimension, type FailureLabel } from '../../domain/taxonomy.ts';
import type { Rating } from '../../kinds/dialogue/ratings.ts';
import { api, ApiFailure, blobUrl } from '../api.ts';
import { ErrorBox, Loading, Pill, TargetTable, fmt } from '../components/common.tsx';
import { useApi } from '../hooks.ts';
import { describeAction, describeRequest } from './describe.ts';
import { PinPanel } from '../components/PinPanel.tsx';
import { COMPLETION_HELP, RUBRIC } from './rubric.ts';
import { reading } from '../format.ts';

interface Detail {
  result: ConversationResult;
  artifacts: { name: string; mime: string; size: number | null }[];
  ratings: Rating[];
}

export function ConversationView({ runId, conversationKey }: { runId: string; conversationKey: string }) {
  const path = `/api/runs/${encodeURIComponent(runId)}/conversations/${encodeURIComponent(conversationKey)}`;
  const detail = useApi<Detail>(path);
  if (detail.error) return <ErrorBox message={detail.error} />;
  if (!detail.data) return <Loading what="conversation" />;
  const { result, artifacts, ratings } = detail.data;
  return (
    <section>
      <div className="title-row">
        <h1 data-testid="conversation-title">{result.spec.key}</h1>
        <a href={`#/runs/${encodeURIComponent(runId)}`}>← run report</a>
      </div>
      <p className="muted">
        “{result.spec.seed.text}” · persona {result.spec.persona} · {result.spec.mode} · {result.spec.context.location.city}, {result.spec.context.location.district} ·{' '}
        {result.spec.context.date} {result.spec.context.time} · status {result.status}
        {result.error ? ` (${result.error})` : ''}
      </p>
      <PinPanel runId={runId} conversationKey={conversationKey} path={path} />
      <div className="conversation-grid">
        <div>
          <Outcome result={result} />
          <Verdicts result={result} />
          <Targets result={result} />
          {artifacts.length > 0 && <Artifacts path={path} artifacts={artifacts} />}
          <h2>Turns</h2>
          <ol className="turns">
            {result.turns.map((turn) => (
              <TurnDetail key={turn.index} turn={turn} />
            ))}
          </ol>
        </div>
        <RatingPanel path={path} result={result} ratings={ratings} onSaved={detail.reload} runId={runId} />
      </div>
    </section>
  );
}

/** The verdict that counts (combinedVerdict): outcome, C, why, and every finding with its turn and evidence. */
function Outcome({ result }: { result: ConversationResult }) {
  const combined = combinedVerdict(result);
  const why = [
    combined.gate.length ? `failed by its findings (failOn: ${combined.gate.join(', ')})` : '',
    combined.scorePass === null ? 'no judge reached a verdict on C' : `C ${combined.scorePass ? '≥' : '<'} θ by ${combined.judge}`,
    combined.undecidedTurns.length ? `needs review: no judge could decide turn(s) ${combined.undecidedTurns.join(', ')}` : '',
  ].filter(Boolean);
  return (
    <>
      <h2>Verdict</h2>
      <div className="card verdict" data-testid="conversation-outcome">
        <Pill kind={combined.outcome}>{combined.outcome}</Pill> C = <span data-testid="conversation-score">{fmt(combined.score)}</span> · {why.join(' · ')}
        {combined.findings.length === 0 ? (
          <p className="muted">No findings.</p>
        ) : (
          <table className="table" data-testid="findings-table">
            <thead>
              <tr>
                <th>Turn</th>
                <th>Finding</th>
                <th>Severity</th>
                <th>Judge</th>
                <th>Evidence</th>
              </tr>
            </thead>
            <tbody>
              {combined.findings.map((f, i) => (
                <tr key={i} data-testid="finding-row">
                  <td>{f.turn}</td>
                  <td>
                    <Pill kind="label">{f.label}</Pill>
                    {f.targetId ? ` ${f.targetId}` : ''}
                  </td>
                  <td>{f.severity}</td>
                  <td>{f.judge}</td>
                  <td>{f.evidence}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </>
  );
}

function Verdicts({ result }: { result: ConversationResult }) {
  return (
    <>
      <h2>Judge verdicts</h2>
      {result.verdicts.length === 0 && <p className="muted">No conversation verdict.</p>}
      {result.verdicts.map((v, i) => (
        <div key={i} className="card verdict" data-testid="conversation-verdict">
          <div>
            <Pill kind="tier">judge: {v.judge}</Pill> <Pill kind={v.outcome === 'judged' ? 'ok' : 'warn'}>{v.outcome}</Pill>{' '}
            {v.pass !== null && <Pill kind={v.pass ? 'pass' : 'fail'}>{v.pass ? 'pass' : 'fail'}</Pill>} C = {fmt(v.score)} · T = {fmt(v.completedShare)}
          </div>
          <table className="dims">
            <tbody>
              {DIMENSIONS.map((d) => (
                <tr key={d}>
                  <td>{DIMENSION_TITLES[d]}</td>
                  <td>
                    <strong>{v.dimensions[d]?.score ?? '—'}</strong>
                  </td>
                  <td className="muted">{v.dimensions[d]?.reasoning}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {v.reasoning && <p className="reasoning">Reasoning: {v.reasoning}</p>}
        </div>
      ))}
    </>
  );
}

export function Targets({ result }: { result: ConversationResult }) {
  return (
    <>
      <h2>Targets</h2>
      <TargetTable targets={result.targets} className="table" turns />
    </>
  );
}

function Artifacts({ path, artifacts }: { path: string; artifacts: Detail['artifacts'] }) {
  const [urls, setUrls] = useState<Record<string, string>>({});
  useEffect(() => {
    let cancelled = false;
    const made: string[] = [];
    for (const a of artifacts.filter((x) => x.mime.startsWith('audio/'))) {
      blobUrl(`${path}/artifacts/${encodeURIComponent(a.name)}`).then((url) => {
        made.push(url);
        if (!cancelled) setUrls((u) => ({ ...u, [a.name]: url }));
      });
    }
    return () => {
      cancelled = true;
      made.forEach((u) => URL.revokeObjectURL(u));
    };
  }, [path, artifacts]);
  return (
    <>
      <h2>Recordings and artifacts</h2>
      <ul>
        {artifacts.map((a) => (
          <li key={a.name}>
            {a.name} <span className="muted">({a.mime})</span>
            {a.mime.startsWith('audio/') && urls[a.name] && <audio controls src={urls[a.name]} />}
          </li>
        ))}
      </ul>
    </>
  );
}

/** What the head unit heard on a spoken turn, at which SNR, and how soon its reply audio began (conversation view and live feed). */
export function TurnVoiceLine({ turn }: { turn: TurnRecord }) {
  if (!turn.voice) return null;
  return (
    <div className="muted" data-testid="turn-voice">
      heard: {turn.voice.recognizedText ?? '(not reported)'} · {turn.voice.snrDb === null ? 'clean' : `${turn.voice.snrDb} dB SNR`}
      {turn.voice.firstReplyLatencyMs !== null && ` · first reply audio after ${turn.voice.firstReplyLatencyMs.toFixed(0)} ms`}
      {turn.voice.voiceError && ` · ${turn.voice.voiceError}`}
    </div>
  );
}

/** The car's state the turn was judged in (a turn that passed because the car was in P shows P): conversation view and live feed. */
export function TurnVehicleLine({ turn }: { turn: TurnRecord }) {
  const vehicle = turn.context.vehicle;
  if (!vehicle) return null;
  return (
    <div className="muted" data-testid="turn-vehicle">
      vehicle: {reading('speedKmh', vehicle.speedKmh)}, gear {vehicle.gear}
      {vehicle.stateOfChargePct !== undefined ? `, SoC ${reading('stateOfChargePct', vehicle.stateOfChargePct)}` : ''}
    </div>
  );
}

export function TurnDetail({ turn }: { turn: TurnRecord }) {
  const deciding = decidingTurnVerdict(turn.verdicts);
  return (
    <li className="turn" data-testid="turn">
      <div className="utterance">
        <span className="who">Turn {turnNumber(turn.index)} · User</span>
        {turn.utterance.strategy && <Pill kind="strategy">{turn.utterance.strategy}</Pill>} {turn.utterance.text}
        <TurnVoiceLine turn={turn} />
      </div>
      <div className="reply">
        <span className="who">Assistant</span> {turn.reply?.text ?? <em>no reply</em>} <span className="muted">({turn.latencyMs.toFixed(0)} ms)</span>
        {turn.reply && turn.reply.actions.length > 0 && (
          <ul className="actions">
            {turn.reply.actions.map((a, i) => (
              <li key={i}>{describeAction(a)}</li>
            ))}
          </ul>
        )}
      </div>
      <TurnVehicleLine turn={turn} />
      {turn.observed && (
        <div className="muted" data-testid="turn-bus">
          on the bus:
          <ul className="actions">
            {observationLines(turn.observed).map((line, i) => (
              <li key={i}>{line}</li>
            ))}
          </ul>
        </div>
      )}
      {turn.expectations && (
        <div data-testid="turn-expectations">
          {turn.expectations.checks.map((c, i) => (
            <div key={i} className={c.met ? 'expectation' : 'expectation unmet'}>
              <Pill kind={c.met ? 'pass' : 'fail'}>{c.met ? 'expected' : 'unmet'}</Pill> {c.expected}: {c.detail}
            </div>
          ))}
        </div>
      )}
      {turn.verdicts.map((v, i) => (
        <div key={i} className={v === deciding ? 'turn-verdict deciding' : 'turn-verdict'}>
          <Pill kind="tier">judge: {v.judge}</Pill> <Pill kind={v.outcome === 'judged' ? 'ok' : 'warn'}>{v.outcome}</Pill>
          {v.labels.map((l, j) => (
            <span key={j} className="label-line" data-testid="turn-label">
              <Pill kind="label">{l.label}</Pill>
              {l.targetId ? ` target ${l.targetId}: ` : ' '}
              {l.evidence}
            </span>
          ))}
          {v.labels.length === 0 && <span className="muted"> no failure</span>}
          {v.reasoning && <div className="reasoning">Reasoning: {v.reasoning}</div>}
        </div>
      ))}
    </li>
  );
}

const RATER_KEY = 'icabench.rater';

function RatingPanel({ path, result, ratings, onSaved, runId }: { path: string; result: ConversationResult; ratings: Rating[]; onSaved: () => void; runId: string }) {
  const [rater, setRater] = useState(() => localStorage.getItem(RATER_KEY) ?? '');
  const mine = ratings.find((r) => r.rater === rater.trim()) ?? null;
  const [dims, setDims] = useState<Partial<Record<Dimension, 0 | 1 | 2>>>({});
  const [targets, setTargets] = useState<Record<string, TargetStatus>>({});
  const [labels, setLabels] = useState<{ turn: number; label: FailureLabel }[]>([]);
  const [note, setNote] = useState('');
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});

  // a rater sees their own earlier rating, never the others' (to keep ratings independent)
  useEffect(() => {
    setDims(mine?.dimensions ?? {});
    setTargets(mine?.targets ?? Object.fromEntries(result.targets.map((t) => [t.id, 0 as TargetStatus])));
    setLabels(mine?.turnLabels ?? []);
    setNote(mine?.note ?? '');
    setFieldErrors({});
  }, [mine, result]);

  async function save() {
    localStorage.setItem(RATER_KEY, rater.trim());
    try {
      const saved = await api.post<{ rating: Rating }>(`${path}/ratings`, { rater, dimensions: dims, targets, turnLabels: labels, note });
      setMessage({ kind: 'ok', text: `Saved for ${saved.rating.rater}: C = ${saved.rating.score.toFixed(2)}, ${saved.rating.pass ? 'pass' : 'fail'}` });
      setFieldErrors({});
      onSaved();
    } catch (error) {
      setMessage({ kind: 'error', text: (error as Error).message });
      if (error instanceof ApiFailure) setFieldErrors(Object.fromEntries(error.fields.map((f) => [f.path.split('.')[0] === 'dimensions' ? f.path : f.path.split('.')[0], f.message])));
    }
  }

  const toggleLabel = (turn: number, label: FailureLabel) =>
    setLabels((current) => (current.some((l) => l.turn === turn && l.label === label) ? current.filter((l) => !(l.turn === turn && l.label === label)) : [...current, { turn, label }]));

  return (
    <aside className="card rating" data-testid="rating-panel">
      <h2>Rate this conversation</h2>
      <p className="muted">{ratings.length} rater(s) so far: {ratings.map((r) => r.rater).join(', ') || 'none'}</p>
      <label>
        Rater{' '}
        <input value={rater} onChange={(e) => {
            setRater(e.target.value);
            setMessage(null);
          }} placeholder="your name" data-testid="rater-name" />
      </label>
      {fieldErrors.rater && <div className="field-error-inline">{fieldErrors.rater}</div>}
      <DimensionScores dims={dims} onScore={(d, score) => setDims((x) => ({ ...x, [d]: score }))} fieldErrors={fieldErrors} />
      <TargetCompletion result={result} targets={targets} onStatus={(id, status) => setTargets((x) => ({ ...x, [id]: status }))} />
      <TurnLabelChoices result={result} labels={labels} onToggle={toggleLabel} />
      <label>
        Note
        <textarea value={note} onChange={(e) => setNote(e.target.value)} rows={2} />
      </label>
      <div className="buttons">
        <button className="primary" onClick={save} data-testid="save-rating">
          Save rating
        </button>
        <a href={`#/runs/${encodeURIComponent(runId)}/agreement`} data-testid="agreement-link">
          Agreement →
        </a>
      </div>
      {message && (
        <p className={message.kind === 'ok' ? 'ok-box' : 'error-box'} data-testid="rating-message">
          {message.text}
        </p>
      )}
    </aside>
  );
}

/** The four rubric dimensions, 0/1/2 each, with the rubric's levels and a worked example on screen. */
function DimensionScores({ dims, onScore, fieldErrors }: { dims: Partial<Record<Dimension, 0 | 1 | 2>>; onScore: (d: Dimension, score: 0 | 1 | 2) => void; fieldErrors: Record<string, string> }) {
  return (
    <>
      {DIMENSIONS.map((d) => (
        <fieldset key={d} className="dimension">
          <legend>{DIMENSION_TITLES[d]}</legend>
          <div className="choices">
            {([0, 1, 2] as const).map((score) => (
              <label key={score} title={RUBRIC[d].levels[score]}>
                <input type="radio" name={`dim-${d}`} checked={dims[d] === score} onChange={() => onScore(d, score)} data-testid={`dim-${d}-${score}`} /> {score}
              </label>
            ))}
          </div>
          {fieldErrors[`dimensions.${d}`] && <div className="field-error-inline">{fieldErrors[`dimensions.${d}`]}</div>}
          <ul className="rubric">
            {RUBRIC[d].levels.map((level) => (
              <li key={level}>{level}</li>
            ))}
            <li className="example">Example: {RUBRIC[d].example}</li>
          </ul>
        </fieldset>
      ))}
    </>
  );
}

/** Each target's status as the rater sees it: completed, incomplete or dropped. */
function TargetCompletion({ result, targets, onStatus }: { result: ConversationResult; targets: Record<string, TargetStatus>; onStatus: (id: string, status: TargetStatus) => void }) {
  return (
    <fieldset>
      <legend>Target completion</legend>
      <p className="muted">{COMPLETION_HELP}</p>
      {result.targets.map((t) => (
        <label key={t.id} className="target-choice">
          {t.id} · {describeRequest(t.request)}{' '}
          <select value={targets[t.id] ?? 0} onChange={(e) => onStatus(t.id, Number(e.target.value) as TargetStatus)} data-testid={`target-${t.id}`}>
            <option value={1}>completed</option>
            <option value={0}>incomplete</option>
            <option value={-1}>dropped</option>
          </select>
        </label>
      ))}
    </fieldset>
  );
}

/** Optional failure labels per turn. */
function TurnLabelChoices({ result, labels, onToggle }: { result: ConversationResult; labels: readonly { turn: number; label: FailureLabel }[]; onToggle: (turn: number, label: FailureLabel) => void }) {
  return (
    <details>
      <summary>Turn labels (optional)</summary>
      {result.turns.map((turn) => (
        <div key={turn.index} className="turn-labels">
          <strong>Turn {turnNumber(turn.index)}</strong>{' '}
          {FAILURE_LABELS.map((l) => (
            <label key={l} className="chip">
              <input type="checkbox" checked={labels.some((x) => x.turn === turn.index && x.label === l)} onChange={() => onToggle(turn.index, l)} /> {l}
            </label>
          ))}
        </div>
      ))}
    </details>
  );
}
