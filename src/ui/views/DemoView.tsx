import type { TurnRecord } from '../../domain/conversation.ts';
import { turnLabels } from '../../analysis/verdict.ts';
import type { LiveSnapshot } from '../../server/live-snapshot.ts';
import { useLiveCampaign } from '../hooks.ts';
import { VehicleGauges } from './LiveView.tsx';

/** The conversation the demo screen follows: the one the newest turn belongs to, with its turns so far. */
function followed(snapshot: LiveSnapshot): { key: string; turns: TurnRecord[] } | null {
  const newest = snapshot.feed[0];
  if (!newest) return null;
  const active = snapshot.active.find((c) => c.key === newest.key);
  // a finished conversation keeps showing from the feed (newest first there) until the next one speaks
  const turns = active?.turns ?? snapshot.feed.filter((f) => f.key === newest.key).map((f) => f.turn).reverse();
  return { key: newest.key, turns };
}

/**
 * Demo mode (#/demo): a full-screen live view for a second screen at a stakeholder rig while a campaign or a
 * live session runs: the conversation being spoken in large type, the car's gauges, the judge's labels
 * appearing as turns end, and a running tally. It follows the same live feed as the Live screen.
 */
export function DemoView() {
  const { snapshot, connected } = useLiveCampaign();
  const conversation = followed(snapshot);
  const shown = conversation?.turns.slice(-4) ?? [];
  const last = conversation?.turns.at(-1);
  const { outcomes, labels, turns } = snapshot.tally;
  return (
    <div className="demo" data-testid="demo">
      <header className="demo-head">
        <span className="brand">icabench</span>
        <span data-testid="demo-run">{snapshot.name ?? 'waiting for a campaign or a live session'}</span>
        <span className={connected ? 'demo-dot ok' : 'demo-dot'} title={connected ? 'live feed connected' : 'live feed disconnected'} />
        <button className="demo-full" onClick={() => void document.documentElement.requestFullscreen?.()}>
          Full screen
        </button>
      </header>
      <main className="demo-main">
        <section className="demo-conversation" data-testid="demo-conversation">
          {shown.length === 0 && <p className="demo-idle">No turn yet.</p>}
          {shown.map((turn) => (
            <div key={`${conversation!.key}#${turn.index}`} className="demo-turn">
              <p className="demo-user">
                <span>Driver</span> {turn.utterance.text}
              </p>
              <p className="demo-reply">
                <span>Assistant</span> {turn.reply?.text ?? '(no reply)'}
              </p>
              <div className="demo-labels">
                {turnLabels(turn).length === 0 ? (
                  <span className="demo-ok">no failure</span>
                ) : (
                  turnLabels(turn).map((l, i) => (
                    <span key={i} className="demo-label" data-testid="demo-label" title={l.evidence}>
                      {l.label}
                    </span>
                  ))
                )}
              </div>
            </div>
          ))}
        </section>
        <aside className="demo-side">
          {last?.context.vehicle ? (
            <>
              <div className="demo-speed" data-testid="demo-speed">
                <b>{last.context.vehicle.speedKmh.toFixed(0)}</b> km/h · gear <b>{last.context.vehicle.gear}</b>
                {last.context.vehicle.stateOfChargePct !== undefined && ` · ${last.context.vehicle.stateOfChargePct.toFixed(0)} %`}
              </div>
              <VehicleGauges vehicle={last.context.vehicle} />
            </>
          ) : (
            <p className="demo-idle">No vehicle data.</p>
          )}
          <div className="demo-tally" data-testid="demo-tally">
            <div>
              <b>{snapshot.done}</b> / {snapshot.planned} {snapshot.nouns.items}
            </div>
            <div>
              <b className="pass">{outcomes.pass}</b> passed · <b className="fail">{outcomes.fail}</b> failed · {outcomes.inconclusive} inconclusive · {outcomes.error} errors
            </div>
            <div>{turns} turns judged</div>
            <ul>
              {Object.entries(labels)
                .sort((a, b) => b[1] - a[1])
                .map(([label, count]) => (
                  <li key={label}>
                    <span className="demo-label small">{label}</span> {count}
                  </li>
                ))}
            </ul>
          </div>
        </aside>
      </main>
    </div>
  );
}
