/**
 * Run facts the bridge records (store.addRunFact kinds; docs/bridge-protocol.md, "On record"),
 * written by src/run/run-monitor.ts and read by src/analysis/protocol.ts.
 */
export const BRIDGE_FACTS = {
  connected: 'bridge.unit_connected',
  disconnected: 'bridge.unit_disconnected',
  replaced: 'bridge.unit_replaced',
  paused: 'bridge.paused',
  resumed: 'bridge.resumed',
  stopped: 'bridge.stopped',
  incident: 'bridge.incident',
  afterClose: 'bridge.after_close',
  beforeHello: 'bridge.before_hello',
  counts: 'bridge.counts',
} as const;
