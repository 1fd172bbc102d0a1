import { afterEach, describe, expect, it } from 'vitest';
import { startBridgeServer, type BridgeServer } from '../../../src/bridge/server.ts';
import { SutError } from '../../../src/headunit/types.ts';
import {
  AUDIO_CHUNK_BYTES,
  AUDIO_EVENTS,
  connectHeadUnit,
  EVENTS,
  TOOL_EVENTS,
  toolsExtension,
  type BridgeClient,
  type ContextVector,
  type DriverUtterance,
  type HeadUnitHandler,
} from '../src/index.ts';

/** The SDK against the bench's own bridge server: the counterpart it has to satisfy. */
const TOKEN = 'sdk-token';
const CONTEXT: ContextVector = { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-03-14', time: '18:30' };

let bridge: BridgeServer | null = null;
let client: BridgeClient | null = null;
afterEach(async () => {
  await client?.close();
  await bridge?.close();
  client = null;
  bridge = null;
});

function handler(overrides: Partial<HeadUnitHandler> = {}): HeadUnitHandler {
  return {
    unit: { name: 'sdk-unit', version: '2.0' },
    capabilities: { text: true, audio: false, vehicleContext: true, structuredActions: true },
    startSession() {},
    async handleTurn(_s, _t, text) {
      return { text: `echo ${text}`, actions: [{ type: 'climate', setpointC: 21 }] };
    },
    endSession() {},
    ...overrides,
  };
}

async function dialIn(h: HeadUnitHandler, extra: Partial<Parameters<typeof connectHeadUnit>[0]> = {}) {
  bridge = await startBridgeServer({ token: TOKEN, turnTimeoutMs: 5000 });
  client = await connectHeadUnit({ url: bridge.url, token: TOKEN, handler: h, ...extra });
  return bridge.waitForHeadUnit(5000, h.unit.name);
}

describe('connectHeadUnit (the SDK client) against the bench', () => {
  it('says hello with its unit and capabilities, answers turns with its session and turn ids, and fills defaults of the reply', async () => {
    const unit = await dialIn(handler());
    expect(client!.limits.turnTimeoutMs).toBe(5000);
    expect(unit.capabilities()).toEqual({ text: true, audio: false, vehicleContext: true, structuredActions: true });
    const session = await unit.openSession('s-1', CONTEXT);
    const [a, b] = await Promise.all([session.send(0, 'one', CONTEXT), session.send(1, 'two', CONTEXT)]);
    expect(a).toMatchObject({ sessionId: 's-1', turn: 0, text: 'echo one', actions: [{ type: 'climate', setpointC: 21, zone: 'all' }] });
    expect(b).toMatchObject({ sessionId: 's-1', turn: 1, text: 'echo two' });
    await session.close();
  });

  it('rejects with the bench refusal when the token is wrong', async () => {
    bridge = await startBridgeServer({ token: TOKEN });
    await expect(connectHeadUnit({ url: bridge.url, token: 'wrong', handler: handler() })).rejects.toThrow(/could not dial in .*unauthorized: missing or wrong token/);
  });

  it('turns a handler exception into bridge_error internal for that session, and refuses an invalid bench message without calling the handler', async () => {
    let calls = 0;
    const unit = await dialIn(
      handler({
        async handleTurn() {
          calls += 1;
          throw new Error('the NLU crashed');
        },
      }),
    );
    const session = await unit.openSession('s-2', CONTEXT);
    await expect(session.send(0, 'hi', CONTEXT)).rejects.toThrow(SutError);
    await expect(session.send(1, 'hi', CONTEXT)).rejects.toThrow(/internal: the NLU crashed/);
    expect(calls).toBe(2);
    const socket = unit.info()!.socket;
    const answered = new Promise<unknown>((resolve) => socket.once(EVENTS.error, resolve));
    socket.emit(EVENTS.userTurn, { sessionId: 's-2', turn: 'two', text: 'hi' });
    expect(await answered).toEqual({ code: 'invalid_message', message: expect.stringMatching(/^user_turn: turn: Invalid input: expected number/) });
    expect(calls).toBe(2);
  });

  it('hands vehicle context to the handler with its session', async () => {
    const seen: Array<[string | null, unknown]> = [];
    const unit = await dialIn(handler({ handleVehicleContext: (sessionId, payload) => seen.push([sessionId, payload]) }));
    const payload = { dbc: 'icabench_vehicle', frames: [{ t: 0, id: 784, ext: false, data: '060F03431A000000' }] };
    unit.sendVehicleContext(null, payload);
    const session = await unit.openSession('s-3', CONTEXT);
    await session.send(0, 'sync', CONTEXT); // the context went before the turn on the same socket
    expect(seen).toEqual([[null, payload]]);
  });

  it('collects the driver audio of a spoken turn for the handler and streams the reply speech as numbered 20 ms chunks with a matching audio_end', async () => {
    let heard: DriverUtterance | undefined;
    const speech = new Uint8Array(AUDIO_CHUNK_BYTES * 2 + 100).fill(7);
    const unit = await dialIn(
      handler({
        capabilities: { text: true, audio: true, vehicleContext: false, structuredActions: false },
        async handleTurn(_s, _t, text, _c, spoken) {
          heard = spoken?.audio;
          return { text: text === '' ? 'you spoke' : 'you typed', recognizedText: 'hello', speech };
        },
      }),
    );
    const chunks: Array<{ seq: number; direction: string; data: Uint8Array }> = [];
    const ended = new Promise<{ chunks: number; direction: string }>((resolve) => unit.audio.on(AUDIO_EVENTS.end, resolve));
    unit.audio.on(AUDIO_EVENTS.chunk, (chunk: { seq: number; direction: string; data: Uint8Array }) => chunks.push(chunk));
    const session = await unit.openSession('s-4', CONTEXT);
    for (let seq = 0; seq < 3; seq++) {
      unit.audio.emit(AUDIO_EVENTS.chunk, { sessionId: 's-4', turn: 0, direction: 'to_unit', seq, offsetMs: seq * 20, sentAt: Date.now(), sampleRate: 16000, encoding: 'pcm_s16le', data: Buffer.alloc(640, seq) });
    }
    unit.audio.emit(AUDIO_EVENTS.end, { sessionId: 's-4', turn: 0, direction: 'to_unit', chunks: 4, durationMs: 80, sentAt: Date.now(), reason: 'completed' });
    const reply = await session.send(0, '', CONTEXT);
    expect(reply).toMatchObject({ text: 'you spoke', recognizedText: 'hello' });
    expect(heard).toMatchObject({ chunks: 3, lostChunks: 1, durationMs: 60, reason: 'completed' });
    expect(heard!.pcm.length).toBe(1920);
    expect(await ended).toMatchObject({ chunks: 3, direction: 'to_bench' });
    expect(chunks.map((c) => [c.seq, c.direction, c.data.length])).toEqual([
      [0, 'to_bench', 640],
      [1, 'to_bench', 640],
      [2, 'to_bench', 100],
    ]);
  });

  it('toolsExtension declares tools, keeps the conversation, and names an unknown tool session', async () => {
    const inputs: unknown[] = [];
    const unit = await dialIn(handler(), {
      extensions: toolsExtension(() => ({
        async next(input) {
          inputs.push(structuredClone(input.messages));
          return input.messages.at(-1)?.role === 'tool' ? { content: 'done', toolCalls: [] } : { content: '', toolCalls: [{ name: 'open_close_sunroof', arguments: { percentage: 50 } }] };
        },
      })),
    });
    expect(unit.capabilities().tools).toBe(true);
    const socket = unit.info()!.socket;
    const next = (event: string) => new Promise<any>((resolve) => socket.once(event, resolve));
    const ready = next(TOOL_EVENTS.sessionReady);
    socket.emit(TOOL_EVENTS.sessionStart, { protocol: 'icabench-tools/1', sessionId: 't-1', systemPrompt: 'car', tools: [] });
    expect(await ready).toEqual({ sessionId: 't-1' });
    const call = next(TOOL_EVENTS.toolCall);
    socket.emit(TOOL_EVENTS.userTurn, { sessionId: 't-1', turn: 0, text: 'open the sunroof' });
    expect(await call).toEqual({ sessionId: 't-1', turn: 0, step: 0, calls: [{ callId: 'unit_0_0', name: 'open_close_sunroof', arguments: { percentage: 50 } }] });
    const text = next(TOOL_EVENTS.assistantText);
    socket.emit(TOOL_EVENTS.toolResult, { sessionId: 't-1', turn: 0, step: 0, results: [{ callId: 'unit_0_0', name: 'open_close_sunroof', output: '{"status":"SUCCESS"}', status: 'success' }] });
    expect(await text).toEqual({ sessionId: 't-1', turn: 0, text: 'done' });
    expect(inputs.at(-1)).toEqual([
      { role: 'user', content: 'open the sunroof' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'unit_0_0', name: 'open_close_sunroof', arguments: { percentage: 50 } }], step: 0 },
      { role: 'tool', toolCallId: 'unit_0_0', name: 'open_close_sunroof', content: '{"status":"SUCCESS"}', status: 'success' },
    ]);
    const error = next(EVENTS.error);
    socket.emit(TOOL_EVENTS.userTurn, { sessionId: 'nope', turn: 0, text: 'hi' });
    expect(await error).toEqual({ sessionId: 'nope', code: 'unknown_session', message: 'tool_user_turn: no tool session nope' });
  });
});
