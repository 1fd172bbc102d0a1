import { io } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/server.ts';
import { CHECK_IDS, ConformanceReportSchema } from '../../src/conformance/checks.ts';
import { runConformance } from '../../src/conformance/run.ts';
import { BRIDGE_PROTOCOL } from '../../packages/bridge-sdk/src/index.ts';

const TOKEN = 'hostile-token';
const TURN_TIMEOUT_MS = 2500;

let bridge: BridgeServer | null = null;
afterEach(async () => {
  await bridge?.close();
  bridge = null;
});

/**
 * A unit that answers every turn correctly and, from its hello on, floods the bench with thousands of unsolicited
 * replies for a session nobody opened: the kit still ends with a verdict on every check, and the bench refuses the flood
 * (rate_limited). The flood delays the unit's own answers (the bench reads its messages in order), so timing may fail.
 */
describe('the conformance kit against a flooding unit', () => {
  it('gives a verdict on every check and ends, while the bench rate-limits the flood', { timeout: 120_000 }, async () => {
    bridge = await startBridgeServer({ token: TOKEN, turnTimeoutMs: TURN_TIMEOUT_MS, maxMessagesPerSecond: 20 });
    const running = runConformance({ bridge, turnTimeoutMs: TURN_TIMEOUT_MS, waitMs: 30_000, reconnectWaitMs: 3_000 });
    const socket = io(bridge.url, { transports: ['websocket'], forceNew: true, reconnection: false });
    const refusals: string[] = [];
    socket.on('bridge_error', (error: { code: string }) => refusals.push(error.code));
    socket.on('connect', () => {
      socket.emit('hello', { protocol: BRIDGE_PROTOCOL, token: TOKEN, unit: { name: 'flooder', version: '1' }, capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: false } });
      for (let i = 0; i < 5_000; i++) socket.emit('assistant_reply', { sessionId: 'nobody', turn: i, text: 'spam', actions: [] });
    });
    socket.on('session_start', ({ sessionId }: { sessionId: string }) => socket.emit('session_ready', { sessionId }));
    socket.on('user_turn', ({ sessionId, turn }: { sessionId: string; turn: number }) => socket.emit('assistant_reply', { sessionId, turn, text: 'The nearest Italian restaurant is Trattoria Roma.', actions: [] }));
    try {
      const report = ConformanceReportSchema.parse(await running);
      expect(report.checks.map((c) => c.id)).toEqual([...CHECK_IDS]);
      // every check was decided by the unit's behaviour, none cut short by the kit itself
      for (const check of report.checks) expect(check.detail, check.id).not.toMatch(/the kit could not complete the check/);
      expect(report.unit?.name).toBe('flooder');
      // the flood is the unit's own doing: it may cost it the timing check, never the kit its verdict
      expect(report.checks.every((c) => ['pass', 'fail', 'skipped'].includes(c.status))).toBe(true);
      expect(report.passed).toBe(false);
      // the unit does not redial after the kit hangs up: the reconnect check fails for that reason
      expect(report.checks.find((c) => c.id === 'reconnect')!.detail).toMatch(/did not dial in again within 3000 ms/);
      expect(refusals).toContain('rate_limited');
    } finally {
      socket.disconnect();
    }
  });
});
