import { randomBytes } from 'node:crypto';
import type { ConnectedHeadUnit } from './connect.ts';
import type { RunFactSink } from './run-facts.ts';
import { BridgeHeadUnitConnection, type AfterCloseAnomaly, type BeforeHelloAnomaly, type BridgeUnitStats } from '../bridge/connection.ts';
import type { ConnectedUnit } from '../bridge/server.ts';
import { BRIDGE_FACTS } from '../bridge/facts.ts';

/** Events (connect, replace, pause, …) and after-close and before-hello anomalies recorded in detail per invocation; beyond, they are counted. */
export const RECORDED_EVENTS_LIMIT = 1_000;
export const RECORDED_AFTER_CLOSE_LIMIT = 10_000;
/** How often the counts snapshot is refreshed while a run goes on (a crash loses at most this much of it). */
const SNAPSHOT_INTERVAL_MS = 10_000;

/** What the bench app's live view and the CLI show about the unit while a run goes on. */
export interface HeadUnitNotice {
  /** text_only: the unit reports no structured actions and no model judge is configured (src/kinds/dialogue/text-only.ts) */
  kind: 'connected' | 'disconnected' | 'replaced' | 'paused' | 'resumed' | 'stopped' | 'incident' | 'text_only';
  message: string;
}

export interface HeadUnitWatch {
  /**
   * The pause hook: resolves at once while the unit is connected; otherwise new conversations wait
   * (one pause shared by every worker) until it dials in again. Resolves with the reason the run
   * must stop when it does not come back within the grace period, else null.
   */
  ready(): Promise<string | null>;
  /** Records the final counts snapshot and stops listening. */
  close(): void;
}

export interface WatchOptions {
  store: RunFactSink;
  runId: string;
  log: (line: string) => void;
  notify?: (notice: HeadUnitNotice) => void;
}

/** Counts of one invocation (a run resumed three times has three snapshots; the summary adds them up). */
export type BridgeCounts = BridgeUnitStats & { invocation: string; refusedConnections: number; eventsNotRecorded: number; afterCloseNotRecorded: number };

/**
 * Watches the head unit of one campaign invocation: logs and records as run facts every connect,
 * disconnect and replacement (with both connections' addresses), the pauses of new conversations
 * while no unit is connected, anomalies that arrive after their conversation was recorded, and the
 * unit's counts. Transports without a bridge record nothing; they are ready as their own `ensureReady` says.
 */
export function watchHeadUnit(headUnit: ConnectedHeadUnit, options: WatchOptions): HeadUnitWatch {
  const { bridge } = headUnit;
  const connection = headUnit.connection;
  if (!bridge || !(connection instanceof BridgeHeadUnitConnection)) return { ready: () => readyWithoutBridge(headUnit), close: () => undefined };
  const { store, runId, log } = options;
  const invocation = randomBytes(4).toString('hex');
  const name = connection.name;
  const baseline = connection.stats();
  const refusedBaseline = bridge.refusedConnections();
  let events = 0;
  let eventsNotRecorded = 0;

  const event = (kind: string, data: Record<string, unknown>, notice?: HeadUnitNotice) => {
    if (events < RECORDED_EVENTS_LIMIT) {
      events += 1;
      store.addRunFact(runId, kind, { unit: name, ...data });
    } else eventsNotRecorded += 1;
    if (notice) {
      log(`bridge: ${notice.message}`);
      options.notify?.(notice);
    }
  };
  const ours = (unit: ConnectedUnit) => unit.name === name;

  const onConnected = (unit: ConnectedUnit) => {
    if (ours(unit)) event(BRIDGE_FACTS.connected, { version: unit.version, address: unit.address, initial: false }, { kind: 'connected', message: `head unit "${name}" dialled in from ${unit.address}` });
  };
  const onDisconnected = (unit: ConnectedUnit, reason: string) => {
    if (ours(unit)) event(BRIDGE_FACTS.disconnected, { address: unit.address, reason }, { kind: 'disconnected', message: `head unit "${name}" at ${unit.address} disconnected (${reason})` });
  };
  const onReplaced = (unit: ConnectedUnit, previous: ConnectedUnit) => {
    if (!ours(unit)) return;
    event(BRIDGE_FACTS.replaced, { previousAddress: previous.address, address: unit.address, version: unit.version }, {
      kind: 'replaced',
      message: `head unit "${name}" at ${previous.address} was replaced by a new connection from ${unit.address}; conversations running on the old connection fail as disconnected`,
    });
  };
  const onIncident = (message: string) => event(BRIDGE_FACTS.incident, { message }, { kind: 'incident', message });
  const anomalies = anomalyRecorder(store, runId);

  bridge.on('unit_connected', onConnected);
  bridge.on('unit_disconnected', onDisconnected);
  bridge.on('unit_replaced', onReplaced);
  bridge.on('incident', onIncident);
  const stopAfterClose = connection.onAfterClose(anomalies.afterClose);
  const stopBeforeHello = connection.onBeforeHello(anomalies.beforeHello);
  const initial = connection.info();
  if (initial) event(BRIDGE_FACTS.connected, { version: initial.version, address: initial.address, initial: true });

  let lastSnapshot = '';
  const snapshot = () => {
    const now = connection.stats();
    const counts: BridgeCounts = {
      invocation,
      ...(Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - baseline[k as keyof BridgeUnitStats]])) as unknown as BridgeUnitStats),
      refusedConnections: bridge.refusedConnections() - refusedBaseline,
      eventsNotRecorded,
      afterCloseNotRecorded: anomalies.notRecorded(),
    };
    const text = JSON.stringify(counts);
    if (text === lastSnapshot) return;
    lastSnapshot = text;
    store.addRunFact(runId, BRIDGE_FACTS.counts, counts);
  };
  const timer = setInterval(snapshot, SNAPSHOT_INTERVAL_MS);
  timer.unref();

  const pauses = pauseWhileAway(headUnit, connection, event);
  return {
    ready: () => pauses.ready(),
    close() {
      pauses.close();
      clearInterval(timer);
      bridge.off('unit_connected', onConnected);
      bridge.off('unit_disconnected', onDisconnected);
      bridge.off('unit_replaced', onReplaced);
      bridge.off('incident', onIncident);
      stopAfterClose();
      stopBeforeHello();
      snapshot();
    },
  };
}

/**
 * Records the anomalies of this run's sessions: messages after their conversation was recorded, and messages before
 * hello (naming a session of this run, or none the bench can tell: then it is the run's all the same, one unit per run).
 * Up to RECORDED_AFTER_CLOSE_LIMIT in detail, beyond that counted.
 */
function anomalyRecorder(store: RunFactSink, runId: string): { afterClose(anomaly: AfterCloseAnomaly): void; beforeHello(anomaly: BeforeHelloAnomaly): void; notRecorded(): number } {
  const prefix = `${runId}/`;
  let recorded = 0;
  let notRecorded = 0;
  const room = () => {
    if (recorded >= RECORDED_AFTER_CLOSE_LIMIT) {
      notRecorded += 1;
      return false;
    }
    recorded += 1;
    return true;
  };
  return {
    afterClose(anomaly) {
      if (!anomaly.sessionId.startsWith(prefix) || !room()) return;
      store.addRunFact(runId, BRIDGE_FACTS.afterClose, { key: anomaly.sessionId.slice(prefix.length), kind: anomaly.kind, turn: anomaly.turn, lateMs: anomaly.lateMs, cause: anomaly.cause });
    },
    beforeHello(anomaly) {
      if (anomaly.sessionId !== null && !anomaly.sessionId.startsWith(prefix)) return;
      if (!room()) return;
      const key = anomaly.sessionId === null ? null : anomaly.sessionId.slice(prefix.length);
      store.addRunFact(runId, BRIDGE_FACTS.beforeHello, { key, event: anomaly.event, turn: anomaly.turn, content: anomaly.content });
    },
    notRecorded: () => notRecorded,
  };
}

/** The pause hook of a unit without a bridge: its own readiness check, the reason the run stops when it fails. */
async function readyWithoutBridge(headUnit: ConnectedHeadUnit): Promise<string | null> {
  try {
    await headUnit.ensureReady();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Records one link event (and tells the log and the live view when it comes with a notice). */
type RecordEvent = (kind: string, data: Record<string, unknown>, notice?: HeadUnitNotice) => void;

/**
 * The pause hook of a bridge unit: resolves at once while it is connected; otherwise one pause, shared by every caller,
 * waits for it to dial in again (recorded as paused, then resumed or stopped).
 */
function pauseWhileAway(headUnit: ConnectedHeadUnit, connection: BridgeHeadUnitConnection, event: RecordEvent): { ready(): Promise<string | null>; close(): void } {
  const name = connection.name;
  let pause: Promise<string | null> | null = null;
  /** the run ended (Ctrl+C during a pause): the wait that the closing bridge cuts short is no stop of the run */
  let closed = false;
  /** once the unit did not come back the run stops: every later caller (another worker, the item that waited) hears the same reason, without a second wait */
  let stopped: string | null = null;
  return {
    ready() {
      if (stopped) return Promise.resolve(stopped);
      if (connection.connected) return Promise.resolve(null);
      pause ??= (async () => {
        const since = Date.now();
        event(BRIDGE_FACTS.paused, {}, { kind: 'paused', message: `no head unit "${name}" connected: new conversations wait for it to dial in again` });
        try {
          await headUnit.ensureReady();
          event(BRIDGE_FACTS.resumed, { pausedMs: Date.now() - since }, { kind: 'resumed', message: `head unit "${name}" is back after ${((Date.now() - since) / 1000).toFixed(1)} s; conversations resume` });
          return null;
        } catch (error) {
          if (closed) return null;
          const reason = `head unit "${name}" left and did not come back: ${error instanceof Error ? error.message : String(error)}`;
          event(BRIDGE_FACTS.stopped, { reason, pausedMs: Date.now() - since }, { kind: 'stopped', message: `${reason}; the run stops (continue it later with --resume)` });
          stopped = reason;
          return reason;
        } finally {
          pause = null;
        }
      })();
      return pause;
    },
    close() {
      closed = true;
    },
  };
}
