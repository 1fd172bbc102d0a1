import { useEffect, useState } from 'react';
import type { ContextVector } from '../../domain/context.ts';
import { turnNumber, type TurnRecord } from '../../domain/conversation.ts';
import { GEARS, PHYSICAL_RANGES } from '../../domain/physical-context.ts';
import { api, ApiFailure } from '../api.ts';
import { ErrorBox, TargetTable } from '../components/common.tsx';
import { TurnDetail } from './ConversationView.tsx';
import { VehicleGauges } from './LiveView.tsx';
import { reading, readingValue } from '../format.ts';

/** The reference unit's fault profiles a session can switch on (docs/architecture.md); each fires on every applicable turn. */
const FAULTS = ['unsafe_compliance', 'drop_second_constraint', 'forget_after_topic_switch', 'over_refusal', 'ambiguity_guess', 'plan_window_miss', 'wrong_domain', 'omit_request'] as const;
/** The drive scenarios shipped in bench-configs/scenarios/ (docs/vehicle.md); a session over one takes the car's state from it. */
const SCENARIOS = ['parked', 'urban', 'highway', 'traffic-jam', 'charging'] as const;

/** A number field's text as a number; anything else as typed, so the bench's range check names it (an empty speed is not 0 km/h). */
function typedNumber(text: string): number | string {
  return text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
}
const DISTRICTS = ['Altstadt', 'Schwabing', 'Maxvorstadt', 'Haidhausen', 'Sendling', 'Bogenhausen', 'Pasing', 'Giesing', 'Mitte', 'Kreuzberg', 'Prenzlauer Berg', 'Charlottenburg', 'Friedrichshain', 'Neukölln', 'Schöneberg', 'Spandau'];

interface SessionState {
  /** the drive scenario underneath, when the session runs over one (this page started it) */
  scenario?: string | null;
  active: boolean;
  runId: string | null;
  context: ContextVector | null;
  turns: number;
}

const message = (error: unknown) => (error instanceof ApiFailure || error instanceof Error ? error.message : String(error));

/**
 * A live session (docs/suites.md, "Live sessions"): the technician types turns to the unit, sets the car's
 * state between turns, and sees each reply with the judge's labels, evidence and target status as the turn
 * ends. Ending it stores the conversation as a run (mode "live") with its report, annotation and Pin.
 */
export function SessionView() {
  const [state, setState] = useState<SessionState | null>(null);
  const [turns, setTurns] = useState<TurnRecord[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [ended, setEnded] = useState<string | null>(null);
  useEffect(() => {
    api.get<SessionState>('/api/session').then(setState, (e: unknown) => setError(message(e)));
  }, []);
  if (!state) return error ? <ErrorBox message={error} /> : null;
  return (
    <section>
      <h1>Live session</h1>
      {error && <ErrorBox message={error} />}
      {ended && (
        <p data-testid="session-ended">
          Session stored as run <a href={`#/runs/${encodeURIComponent(ended)}`}>{ended}</a>: its report, annotation and Pin are on the run’s page.
        </p>
      )}
      {!state.active ? (
        <StartForm
          onStarted={(started) => {
            setTurns([]);
            setEnded(null);
            setError(null);
            setState({ active: true, runId: started.runId, context: started.context, turns: 0, scenario: started.scenario });
          }}
          onError={setError}
        />
      ) : (
        <Running
          state={state}
          turns={turns}
          onTurn={(turn, context) => {
            setTurns((t) => [...t, turn]);
            setState((s) => s && { ...s, context, turns: s.turns + 1 });
          }}
          onContext={(context) => setState((s) => s && { ...s, context })}
          onEnded={(runId) => {
            setEnded(runId);
            setState((s) => s && { ...s, active: false });
          }}
          onError={setError}
        />
      )}
    </section>
  );
}

function StartForm({ onStarted, onError }: { onStarted: (s: { runId: string; context: ContextVector; scenario: string | null }) => void; onError: (m: string | null) => void }) {
  const [scenario, setScenario] = useState('');
  const [name, setName] = useState('live session');
  const [unit, setUnit] = useState<'reference' | 'bridge'>('reference');
  const [faults, setFaults] = useState<string[]>([]);
  const [district, setDistrict] = useState('Maxvorstadt');
  const [busy, setBusy] = useState(false);
  async function start() {
    setBusy(true);
    onError(null);
    try {
      const headUnit = unit === 'reference' ? { type: 'reference', faults: { profiles: faults, rate: 1 } } : { type: 'bridge' };
      const vehicle = scenario ? { vehicle: { scenario, secondsPerTurn: 20 } } : {};
      const started = await api.post<{ runId: string; context: ContextVector }>('/api/session/start', { config: { name, headUnit, context: { district }, ...vehicle } });
      onStarted({ ...started, scenario: scenario || null });
    } catch (error) {
      onError(message(error));
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="card" data-testid="session-start">
      <label>
        Name <input value={name} onChange={(e) => setName(e.target.value)} data-testid="session-name" />
      </label>{' '}
      <label>
        Head unit{' '}
        <select value={unit} onChange={(e) => setUnit(e.target.value as 'reference' | 'bridge')} data-testid="session-unit">
          <option value="reference">reference (built in)</option>
          <option value="bridge">a unit on the bridge</option>
        </select>
      </label>{' '}
      <label>
        Starting district{' '}
        <select value={district} onChange={(e) => setDistrict(e.target.value)}>
          {DISTRICTS.map((d) => (
            <option key={d}>{d}</option>
          ))}
        </select>
      </label>
      <label>
        Drive scenario underneath{' '}
        <select value={scenario} onChange={(e) => setScenario(e.target.value)} data-testid="session-scenario">
          <option value="">none: I set the car's state</option>
          {SCENARIOS.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      {unit === 'reference' && (
        <fieldset>
          <legend>Reference unit faults (each fires on every turn it applies to)</legend>
          {FAULTS.map((f) => (
            <label key={f} className="check">
              <input type="checkbox" checked={faults.includes(f)} onChange={(e) => setFaults((all) => (e.target.checked ? [...all, f] : all.filter((x) => x !== f)))} data-testid={`fault-${f}`} /> {f}
            </label>
          ))}
        </fieldset>
      )}
      <button onClick={start} disabled={busy} data-testid="start-session">
        Start session
      </button>
    </div>
  );
}

function Running(props: {
  state: SessionState;
  turns: TurnRecord[];
  onTurn: (turn: TurnRecord, context: ContextVector) => void;
  onContext: (context: ContextVector) => void;
  onEnded: (runId: string) => void;
  onError: (m: string | null) => void;
}) {
  const { state, turns } = props;
  // over a scenario the car is where the scenario put it at the last turn; otherwise where the technician set it
  const context = state.scenario && turns.length > 0 ? turns[turns.length - 1].context : state.context!;
  const vehicle = context.vehicle ?? { speedKmh: 0, gear: 'P' as const };
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);

  async function send() {
    setBusy(true);
    props.onError(null);
    try {
      const answer = await api.post<{ turn: TurnRecord; context: ContextVector }>('/api/session/turn', { text });
      props.onTurn(answer.turn, answer.context);
      setText('');
    } catch (error) {
      props.onError(message(error));
    } finally {
      setBusy(false);
    }
  }
  async function end() {
    setBusy(true);
    try {
      props.onEnded((await api.post<{ runId: string }>('/api/session/end', {})).runId);
    } catch (error) {
      props.onError(message(error));
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="session-grid">
      <div>
        <p className="muted">
          Run {state.runId} · {context.location.city}, {context.location.district} · {context.date} {context.time}
        </p>
        <ol className="turns" data-testid="session-turns">
          {turns.map((turn) => (
            <TurnDetail key={turn.index} turn={turn} />
          ))}
        </ol>
        {turns.length > 0 && (
          <div data-testid="session-targets">
            <h2>Targets after turn {turnNumber(turns[turns.length - 1].index)}</h2>
            <TargetTable targets={turns[turns.length - 1].targetsAfter} className="table" turns />
          </div>
        )}
        <form
          className="say"
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim() && !busy) void send();
          }}
        >
          <input value={text} onChange={(e) => setText(e.target.value)} placeholder="Say something to the unit…" aria-label="turn text" data-testid="session-input" disabled={busy} />
          <button type="submit" disabled={busy || !text.trim()} data-testid="session-send">
            {busy ? 'Waiting for the reply…' : 'Send'}
          </button>
        </form>
        <button onClick={end} disabled={busy} data-testid="end-session">
          End session
        </button>
      </div>
      <CarPanel context={context} vehicle={vehicle} scenario={state.scenario ?? null} onContext={props.onContext} onError={props.onError} />
    </div>
  );
}

/** The car beside the session: its gauges and state, and (without a drive scenario) the form that sets it for the next turn. */
function CarPanel({ context, vehicle, scenario, onContext, onError }: { context: ContextVector; vehicle: NonNullable<ContextVector['vehicle']>; scenario: string | null; onContext: (context: ContextVector) => void; onError: (m: string | null) => void }) {
  const [speed, setSpeed] = useState(String(vehicle.speedKmh));
  const [gear, setGear] = useState<string>(vehicle.gear);
  const [soc, setSoc] = useState(vehicle.stateOfChargePct === undefined ? '' : readingValue('stateOfChargePct', vehicle.stateOfChargePct));
  const [time, setTime] = useState(context.time);
  const [district, setDistrict] = useState(context.location.district);
  // the clock moves one minute a turn: the form follows it
  useEffect(() => setTime(context.time), [context.time]);
  async function applyState() {
    onError(null);
    try {
      const change = {
        vehicle: { speedKmh: typedNumber(speed), gear, ...(soc === '' ? {} : { stateOfChargePct: typedNumber(soc) }) },
        time,
        ...(district !== context.location.district ? { district } : {}),
      };
      onContext((await api.post<{ context: ContextVector }>('/api/session/context', { change })).context);
    } catch (error) {
      onError(message(error));
    }
  }
  return (
    <aside className="card" data-testid="session-vehicle">
      <h2>Car</h2>
      <VehicleGauges vehicle={vehicle} />
      <p data-testid="session-state">
        gear {vehicle.gear} · {reading('speedKmh', vehicle.speedKmh)}{vehicle.stateOfChargePct !== undefined ? ` · SoC ${reading('stateOfChargePct', vehicle.stateOfChargePct)}` : ''} · {context.time}
      </p>
      {scenario && <p data-testid="session-scenario-note">The drive scenario “{scenario}” sets the car’s state at each turn (20 s of the drive a turn).</p>}
      {!scenario && (
        <div className="state-form">
          <label>
            Speed (km/h) <input type="number" min={PHYSICAL_RANGES.speedKmh.min} max={PHYSICAL_RANGES.speedKmh.max} value={speed} onChange={(e) => setSpeed(e.target.value)} data-testid="state-speed" />
          </label>
          <label>
            Gear{' '}
            <select value={gear} onChange={(e) => setGear(e.target.value)} data-testid="state-gear">
              {GEARS.map((g) => (
                <option key={g}>{g}</option>
              ))}
            </select>
          </label>
          <label>
            State of charge (%) <input type="number" min={PHYSICAL_RANGES.stateOfChargePct.min} max={PHYSICAL_RANGES.stateOfChargePct.max} value={soc} onChange={(e) => setSoc(e.target.value)} data-testid="state-soc" />
          </label>
          <label>
            Time <input value={time} onChange={(e) => setTime(e.target.value)} data-testid="state-time" />
          </label>
          <label>
            District{' '}
            <select value={district} onChange={(e) => setDistrict(e.target.value)} data-testid="state-district">
              {DISTRICTS.map((d) => (
                <option key={d}>{d}</option>
              ))}
            </select>
          </label>
          <button onClick={applyState} data-testid="apply-state">
            Apply to the next turn
          </button>
        </div>
      )}
    </aside>
  );
}
