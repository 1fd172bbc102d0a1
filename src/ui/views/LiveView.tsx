import { turnNumber, type TurnRecord } from '../../domain/conversation.ts';
import type { VehicleState } from '../../domain/context.ts';
import { turnLabels } from '../../analysis/verdict.ts';
import { rigsLine, type LiveConversation, type LiveFinished, type LiveSnapshot } from '../../server/live-snapshot.ts';
import { Pill, Stat, TargetTable } from '../components/common.tsx';
import { isResumable, ResumeButton, StopButton } from '../components/CampaignButtons.tsx';
import { useLiveCampaign } from '../hooks.ts';
import { itemHref, runHref } from '../routes.ts';
import { TurnVehicleLine, TurnVoiceLine } from './ConversationView.tsx';
import { reading } from '../format.ts';
import { duration, LiveTally } from '../components/LiveTally.tsx';
import type { PhysicalQuantity } from '../../domain/physical-context.ts';


function Bar({ value, max, label, testId }: { value: number; max: number; label: string; testId?: string }) {
  const share = max > 0 ? Math.min(1, value / max) : 0;
  return (
    <div className="bar" data-testid={testId}>
      <div className="bar-fill" style={{ width: `${(share * 100).toFixed(1)}%` }} />
      <span className="bar-label">{label}</span>
    </div>
  );
}

function Gauge({ label, value, quantity, max }: { label: string; value: number | undefined; quantity: PhysicalQuantity; max: number }) {
  if (value === undefined) return null;
  return (
    <div className="gauge">
      <div className="gauge-label">{label}</div>
      <Bar value={value} max={max} label={reading(quantity, value)} />
    </div>
  );
}

export function VehicleGauges({ vehicle }: { vehicle: VehicleState }) {
  return (
    <div className="gauges" data-testid="vehicle-gauges">
      <Gauge label="Speed" value={vehicle.speedKmh} quantity="speedKmh" max={200} />
      <Gauge label="State of charge" value={vehicle.stateOfChargePct} quantity="stateOfChargePct" max={100} />
      <Gauge label="Range" value={vehicle.rangeKm} quantity="rangeKm" max={600} />
      <Gauge label="Outside" value={vehicle.outsideTempC} quantity="outsideTempC" max={45} />
      <div className="gauge">
        <div className="gauge-label">Gear</div>
        <strong>{vehicle.gear}</strong>
      </div>
    </div>
  );
}

export function LiveTurn({ turn, conversationKey }: { turn: TurnRecord; conversationKey?: string }) {
  const labels = turnLabels(turn);
  return (
    <li className="turn" data-testid="live-turn">
      <div className="utterance">
        {conversationKey && <span className="muted">{conversationKey} · </span>}
        <span className="who">Turn {turnNumber(turn.index)} · User</span>
        {turn.utterance.strategy && <Pill kind="strategy">{turn.utterance.strategy}</Pill>} {turn.utterance.text}
        <TurnVoiceLine turn={turn} />
      </div>
      <div className="reply">
        <span className="who">Assistant</span> {turn.reply?.text ?? <em>no reply</em>}
      </div>
      <TurnVehicleLine turn={turn} />
      {labels.length > 0 && (
        <div className="labels">
          {labels.map((l, i) => (
            <Pill key={i} kind="label">
              {l.label}
              {l.targetId ? ` · ${l.targetId}` : ''}
            </Pill>
          ))}
        </div>
      )}
    </li>
  );
}

/** An item of a kind other than dialogue while it runs: its key and what it asks (the question, the task trial). */
export function ActiveItem({ item }: { item: LiveConversation }) {
  return (
    <li className="card live-item" data-testid="live-item">
      <strong>{item.key}</strong> <span className="muted">{item.seedText}</span>
    </li>
  );
}

/** The items that finished last, newest first, each linking to its page (a conversation, a question, a task trial). */
export function RecentTable({ snapshot }: { snapshot: Pick<LiveSnapshot, 'recent' | 'runId' | 'page' | 'rigs'> }) {
  const link = (r: LiveFinished) => (snapshot.runId ? <a href={itemHref(snapshot.runId, snapshot.page, r.key)}>{r.key}</a> : r.key);
  return (
    <table className="table" data-testid="recent-table">
      <tbody>
        {snapshot.recent.slice(0, 15).map((r) => (
          <tr key={r.key}>
            <td>{link(r)}</td>
            <td>
              <Pill kind={r.outcome}>{r.outcome}</Pill>
            </td>
            {r.word === null ? (
              <>
                <td>{r.score === null ? '—' : r.score.toFixed(2)}</td>
                <td>{r.turns} turns</td>
              </>
            ) : (
              <td colSpan={2}>{r.word !== r.outcome ? r.word : ''}</td>
            )}
            {snapshot.rigs.length > 0 && <td>{r.rig ?? '—'}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ActiveConversation({ conversation }: { conversation: LiveConversation }) {
  const last = conversation.turns[conversation.turns.length - 1];
  return (
    <article className="card live-conversation" data-testid="live-conversation">
      <header>
        <strong>{conversation.key}</strong> <Pill kind="muted">{conversation.persona}</Pill> <Pill kind="muted">{conversation.mode}</Pill>
        {conversation.rig !== null && (
          <>
            {' '}
            <span data-testid="live-conversation-rig">
              <Pill kind="muted">rig {conversation.rig}</Pill>
            </span>
          </>
        )}
        <div className="muted">{conversation.seedText}</div>
        <div>
          Active strategies:{' '}
          {conversation.activeStrategies.length ? conversation.activeStrategies.map((s) => <Pill key={s} kind="strategy">{s}</Pill>) : <em>none left</em>}
        </div>
      </header>
      {last && <TargetTable targets={last.targetsAfter} className="targets" />}
      {last?.context.vehicle && <VehicleGauges vehicle={last.context.vehicle} />}
      <ol className="turns">
        {conversation.turns.map((t) => (
          <LiveTurn key={t.index} turn={t} />
        ))}
      </ol>
    </article>
  );
}

export function LiveView() {
  const { snapshot, connected } = useLiveCampaign();
  const { items, item } = snapshot.nouns;
  const conversations = snapshot.active.filter((c) => c.shape === 'conversation');
  const others = snapshot.active.filter((c) => c.shape === 'item');
  // a run of questions or task trials has no turns to show
  const hasTurns = snapshot.feed.length > 0 || conversations.length > 0 || item === 'conversation';
  return (
    <section>
      <div className="title-row">
        <h1>Live</h1>
        <Pill kind={connected ? 'ok' : 'fail'}>{connected ? 'live feed connected' : 'live feed disconnected'}</Pill>
        <button onClick={() => window.open('#/demo', 'icabench-demo', 'popup,width=1280,height=800')} data-testid="open-demo" title="A full-screen live view for a second screen">
          Demo screen
        </button>
        <StopButton live={snapshot} />
        {snapshot.state === 'finished' && snapshot.runId && snapshot.finalStatus && isResumable(snapshot.finalStatus) && <ResumeButton run={{ id: snapshot.runId, status: snapshot.finalStatus }} live={snapshot} />}
      </div>
      <div className="stats">
        <Stat label="State" value={<span data-testid="live-state">{snapshot.state === 'finished' && snapshot.finalStatus ? snapshot.finalStatus.replace(/_/g, ' ') : snapshot.state}</span>} />
        <Stat label="Run" value={snapshot.runId ? <a href={runHref(snapshot.runId, snapshot.page)} data-testid="live-run-link">{snapshot.name ?? snapshot.runId}</a> : '—'} />
        {snapshot.kind && <Stat label="Kind" value={<span data-testid="live-kind">{snapshot.kind}</span>} />}
        <Stat label="Done" value={<span data-testid="live-done">{`${snapshot.done} / ${snapshot.planned}`}</span>} />
        <Stat label="Elapsed" value={duration(snapshot.elapsedMs)} />
      </div>
      <LiveTally snapshot={snapshot} />
      <Bar value={snapshot.done} max={snapshot.planned} label={`${items} ${snapshot.done}/${snapshot.planned}`} testId="progress-bar" />
      {snapshot.budgetMs !== null ? (
        <Bar value={snapshot.elapsedMs} max={snapshot.budgetMs} label={`time ${duration(snapshot.elapsedMs)} of ${duration(snapshot.budgetMs)} budget`} />
      ) : (
        <p className="muted">No time budget: the run ends when every planned {item} is done.</p>
      )}
      {snapshot.rigs.length > 0 && (
        <p data-testid="live-rigs">
          Fleet rigs: {rigsLine(snapshot)}
        </p>
      )}
      {snapshot.error && <p className="error-box">{snapshot.error}</p>}
      {snapshot.stopReason && (
        <p className="error-box" data-testid="live-stop-reason">
          The run stopped: {snapshot.stopReason}. Resume it once the head unit is back.
        </p>
      )}
      {snapshot.headUnit.length > 0 && (
        <div data-testid="live-headunit">
          <h2>Head unit</h2>
          <ul className="notices">
            {snapshot.headUnit.slice(0, 8).map((n, i) => (
              <li key={i}>
                <Pill kind={n.kind === 'connected' || n.kind === 'resumed' ? 'ok' : n.kind === 'text_only' ? 'warn' : 'fail'}>{n.kind === 'text_only' ? 'text only' : n.kind}</Pill> {n.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      <div className="live-grid">
        <div>
          <h2>Running now ({snapshot.active.length})</h2>
          {snapshot.active.length === 0 && <p className="muted">No {item} is running.</p>}
          {conversations.map((c) => (
            <ActiveConversation key={c.key} conversation={c} />
          ))}
          {others.length > 0 && (
            <ul className="live-items" data-testid="live-items">
              {others.map((c) => (
                <ActiveItem key={c.key} item={c} />
              ))}
            </ul>
          )}
        </div>
        <div>
          {hasTurns && (
            <>
              <h2>Latest turns</h2>
              {snapshot.feed.length === 0 && <p className="muted">No turns yet.</p>}
              <ol className="turns feed" data-testid="turn-feed">
                {snapshot.feed.slice(0, 12).map((f) => (
                  <LiveTurn key={`${f.key}#${f.turn.index}`} turn={f.turn} conversationKey={f.key} />
                ))}
              </ol>
            </>
          )}
          <h2>Just finished</h2>
          <RecentTable snapshot={snapshot} />
        </div>
      </div>
    </section>
  );
}
