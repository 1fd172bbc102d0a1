import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Socket as ServerSocket } from 'socket.io';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/server.ts';
import { payloadBytes } from '../../src/bridge/limits.ts';
import type { BridgeHeadUnitConnection } from '../../src/bridge/connection.ts';
import { connectHeadUnit } from '../../src/bridge/client.ts';
import { AssistantReplySchema, BRIDGE_PROTOCOL, EVENTS, HelloSchema, SessionReadySchema, type BridgeError } from '../../src/protocol/bridge.ts';
import { AUDIO_EVENTS } from '../../src/protocol/audio.ts';
import { bridgeStructureLimits, checkStructure } from '../../src/protocol/structure.ts';
import { hostileValue } from '../helpers/fuzz.ts';
import { CONTEXT, ScriptedHandler, TOKEN, rawUnit, validHello } from './helpers.ts';

const MAX_BYTES = 256 * 1024;
const STRUCTURE = bridgeStructureLimits(MAX_BYTES);
/** bounded: a few hundred fuzzed messages per message type keep the suite quick */
const RUNS = { numRuns: 12, endOnFailure: true } as const;
const BATCH = 25;

const NEAR_VALID: Record<string, Record<string, unknown>[]> = {
  [EVENTS.sessionReady]: [{ sessionId: 'nobody' }],
  [EVENTS.assistantReply]: [{ sessionId: 'nobody', turn: 0, text: 'hi', actions: [{ type: 'climate', setpointC: 21, zone: 'all' }] }],
  [EVENTS.error]: [{ sessionId: 'nobody', code: 'internal', message: 'm' }],
  [AUDIO_EVENTS.chunk]: [{ sessionId: 'nobody', turn: 0, direction: 'to_bench', seq: 0, offsetMs: 0, sentAt: 0, sampleRate: 16000, encoding: 'pcm_s16le', data: new Uint8Array(640) }],
  [AUDIO_EVENTS.end]: [{ sessionId: 'nobody', turn: 0, direction: 'to_bench', chunks: 1, durationMs: 20, sentAt: 0 }],
};

/** The documented answer to one message the bench received from an authenticated unit with no session open. */
function expectedAnswer(event: string, payload: unknown): BridgeError['code'] | null {
  const violation = checkStructure(payload, STRUCTURE);
  if (violation) return violation.code;
  if (event.startsWith('audio_')) return null;
  if (payloadBytes(payload) > MAX_BYTES) return 'too_large';
  if (event === EVENTS.sessionReady) return SessionReadySchema.safeParse(payload).success ? null : 'invalid_message';
  if (event === EVENTS.assistantReply) return AssistantReplySchema.safeParse(payload).success ? null : 'invalid_message';
  return null;
}

let server: BridgeServer;
beforeAll(async () => {
  // the flood guard is tested on its own; here every message must reach the checks
  server = await startBridgeServer({ token: TOKEN, maxMessageBytes: MAX_BYTES, maxMessagesPerSecond: 1e9 });
});
afterAll(async () => server.close());

describe('fuzzing every message a unit sends', () => {
  it('answers each fuzzed session_ready, assistant_reply, bridge_error, audio_chunk and audio_end with the documented error, or counts it', async () => {
    const raw = await rawUnit(server.url, validHello('fuzzed'));
    await raw.acked;
    const connection: BridgeHeadUnitConnection = await server.waitForHeadUnit(5_000, 'fuzzed');
    const serverSide = connection.info()!.socket as ServerSocket;
    const received: { event: string; payload: unknown }[] = [];
    serverSide.onAny((event: string, payload: unknown) => received.push({ event, payload }));
    let audioDelivered = 0;
    for (const event of Object.values(AUDIO_EVENTS)) connection.audio.on(event, () => void (audioDelivered += 1));

    for (const event of [EVENTS.sessionReady, EVENTS.assistantReply, EVENTS.error, AUDIO_EVENTS.chunk, AUDIO_EVENTS.end]) {
      await fc.assert(
        fc.asyncProperty(fc.array(hostileValue(NEAR_VALID[event]), { minLength: 1, maxLength: BATCH }), async (payloads) => {
          const before = { stats: connection.stats(), errors: raw.errors.length, received: received.length, audio: audioDelivered };
          for (const payload of payloads) raw.socket.emit(event, payload);
          await vi.waitFor(() => expect(received.length - before.received).toBe(payloads.length), { timeout: 30_000, interval: 10 });
          const batch = received.slice(before.received);
          const expected = batch.map((m) => expectedAnswer(m.event, m.payload)).filter((code) => code !== null);
          await vi.waitFor(() => expect(raw.errors.length - before.errors).toBe(expected.length), { timeout: 30_000, interval: 10 });
          const answers = raw.errors.slice(before.errors);
          expect(answers.map((e) => e.code)).toEqual(expected);
          for (const answer of answers) expect(answer.message.startsWith(event.startsWith('audio_') ? 'audio: ' : `${event}: `)).toBe(true);
          const after = connection.stats();
          if (event.startsWith('audio_')) {
            expect(audioDelivered - before.audio).toBe(payloads.length - expected.length);
          } else {
            // no session is open: every message is counted once, as unattributed
            expect(after.unattributed - before.stats.unattributed).toBe(payloads.length);
          }
          expect(after.contained).toBe(0);
        }),
        RUNS,
      );
    }
    expect(raw.socket.connected).toBe(true);
    raw.socket.disconnect();
  }, 300_000);

  it('refuses every fuzzed hello with the documented error (or accepts it when it is valid), and keeps serving', async () => {
    const near = [validHello('fuzz-hello'), { ...validHello('fuzz-hello'), token: 'wrong' }];
    await fc.assert(
      fc.asyncProperty(hostileValue(near), async (hello) => {
        const unit = await rawUnit(server.url, null);
        unit.socket.emit(EVENTS.hello, hello);
        const outcome = await Promise.race([
          unit.acked.then(() => 'acked' as const),
          new Promise<'refused'>((resolve) => unit.socket.once('disconnect', () => resolve('refused'))),
        ]);
        unit.socket.disconnect();
        if (outcome === 'acked') {
          expect(HelloSchema.safeParse(hello).success).toBe(true);
          return;
        }
        // one bridge_error, then the bench hangs up; the shape is checked first, then protocol, token and schema
        expect(unit.errors).toHaveLength(1);
        const announced = typeof hello === 'object' && hello !== null ? (hello as { protocol?: unknown; token?: unknown }) : {};
        const allowed =
          announced.protocol !== BRIDGE_PROTOCOL ? ['protocol'] : announced.token !== TOKEN ? ['unauthorized'] : ['invalid_message'];
        expect([...allowed, 'invalid_message', 'too_large']).toContain(unit.errors[0].code);
      }),
      { numRuns: 60, endOnFailure: true },
    );
    const client = await connectHeadUnit({ url: server.url, token: TOKEN, handler: new ScriptedHandler({ name: 'after-fuzz', version: '1' }) });
    const connection = await server.waitForHeadUnit(5_000, 'after-fuzz');
    const session = await connection.openSession('s', CONTEXT);
    expect((await session.send(0, 'still there?', CONTEXT)).text).toBe('s#0: still there?');
    await client.close();
  }, 300_000);
});
