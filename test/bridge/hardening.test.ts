import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BridgeServer, BridgeServerOptions, ConnectedUnit } from '../../src/bridge/server.ts';
import { connectHeadUnit } from '../../src/bridge/client.ts';
import { SutError } from '../../src/headunit/types.ts';
import { EVENTS, type BridgeError } from '../../src/protocol/bridge.ts';
import { AUDIO_EVENTS } from '../../src/protocol/audio.ts';
import { benchServer, CONTEXT, ScriptedHandler, TOKEN, deepJsonArray, disconnected, rawUnit, rejection, sendRawEvent, validHello } from './helpers.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const bench = (options: Partial<BridgeServerOptions> = {}): Promise<BridgeServer> => benchServer((close) => cleanups.push(close), options);

/** generous bound: the suite may run on a loaded 2-core CI machine */
const eventually = (check: () => void) => vi.waitFor(check, { timeout: 15_000, interval: 20 });

/** A session works end to end with a well-behaved unit: the bench is alive and unharmed. */
async function stillServes(server: BridgeServer, name: string): Promise<void> {
  const client = await connectHeadUnit({ url: server.url, token: TOKEN, handler: new ScriptedHandler({ name, version: '1' }) });
  cleanups.push(() => client.close());
  const connection = await server.waitForHeadUnit(5_000, name);
  const session = await connection.openSession(`${name}-s`, CONTEXT);
  expect((await session.send(0, 'ping', CONTEXT)).text).toBe(`${name}-s#0: ping`);
}

/** A raw, authenticated unit that acknowledges every session_start. */
async function rawAuthenticated(server: BridgeServer, name: string) {
  const raw = await rawUnit(server.url, validHello(name));
  cleanups.push(() => void raw.socket.disconnect());
  raw.socket.on(EVENTS.sessionStart, ({ sessionId }: { sessionId: string }) => raw.socket.emit(EVENTS.sessionReady, { sessionId }));
  await raw.acked;
  return { ...raw, connection: await server.waitForHeadUnit(5_000, name) };
}

describe('deeply nested messages never reach anything recursive', () => {
  it('refuses a pre-auth hello whose protocol is nested up to 1,000,000 deep, and keeps serving', async () => {
    // large enough a message limit that even the 2 MB of the deepest hello passes the transport cap and reaches the bench
    const server = await bench({ maxMessageBytes: 600_000 });
    for (const depth of [1_000, 5_000, 100_000, 1_000_000]) {
      const { socket, errors } = await rawUnit(server.url, null);
      sendRawEvent(socket, EVENTS.hello, `{"protocol":${deepJsonArray(depth)},"token":"wrong"}`);
      await disconnected(socket);
      expect(errors, `depth ${depth}`).toHaveLength(1);
      expect(errors[0]).toMatchObject({ code: 'invalid_message', message: 'hello: nested deeper than 4 levels' });
    }
    expect(server.refusedConnections()).toBe(4);
    await stillServes(server, 'after-deep-hellos');
  });

  it('with the default limits, a 1,000,000-deep hello is cut off by the transport cap before it is parsed', async () => {
    const server = await bench();
    const { socket, errors } = await rawUnit(server.url, null);
    sendRawEvent(socket, EVENTS.hello, `{"protocol":${deepJsonArray(1_000_000)}}`);
    await disconnected(socket);
    expect(errors).toEqual([]);
    await stillServes(server, 'after-oversized-hello');
  });

  it('refuses reply, session_ready and bridge_error nested deep from an authenticated unit, failing only the turn such a reply names', async () => {
    const server = await bench({ maxMessageBytes: 600_000 });
    const rogue = await rawAuthenticated(server, 'deep-talker');
    const session = await rogue.connection.openSession('s', CONTEXT);
    for (const depth of [5_000, 100_000, 1_000_000]) {
      const deep = deepJsonArray(depth);
      sendRawEvent(rogue.socket, EVENTS.assistantReply, `{"sessionId":"nobody","turn":0,"text":"x","state":{"a":${deep}}}`);
      sendRawEvent(rogue.socket, EVENTS.sessionReady, `{"sessionId":"nobody","extra":${deep}}`);
      sendRawEvent(rogue.socket, EVENTS.error, `{"sessionId":"nobody","code":"internal","message":${deep}}`);
    }
    await eventually(() => expect(rogue.errors).toHaveLength(9));
    expect(new Set(rogue.errors.map((e) => e.code))).toEqual(new Set(['invalid_message']));
    expect(rogue.errors.every((e) => e.message.endsWith('nested deeper than 32 levels'))).toBe(true);
    expect(rogue.connection.stats()).toMatchObject({ unattributed: 9, invalidMessages: 0, contained: 0 });

    // a deep reply that names the turn the bench waits for fails that turn, as malformed, and is counted for its session
    rogue.socket.once(EVENTS.userTurn, () => sendRawEvent(rogue.socket, EVENTS.assistantReply, `{"sessionId":"s","turn":0,"text":"x","state":{"a":${deepJsonArray(100_000)}}}`));
    const failure = (await rejection(session.send(0, 'hi', CONTEXT))) as SutError;
    expect(failure).toBeInstanceOf(SutError);
    expect(failure.kind).toBe('malformed');
    expect(failure.message).toContain('nested deeper than 32 levels');
    await session.close();
    expect(session.anomalies!()).toEqual({ duplicateReplies: 0, wrongTurnReplies: 0, invalidMessages: 1, linkLost: null });
    await stillServes(server, 'after-deep-replies');
  });
});

describe('the last-resort guard', () => {
  it('contains an exception in a socket handler to that socket: it is logged and hung up, the bench carries on', async () => {
    const server = await bench();
    const incidents: string[] = [];
    server.on('incident', (message) => incidents.push(message));
    const raw = await rawAuthenticated(server, 'trigger');
    // a listener with a bug, as any part of the bench could have
    raw.connection.audio.on(AUDIO_EVENTS.end, () => {
      throw new Error('listener bug');
    });
    await raw.connection.openSession('s', CONTEXT);
    raw.socket.emit(AUDIO_EVENTS.end, { sessionId: 's', turn: 0, direction: 'to_bench', chunks: 0, durationMs: 0, sentAt: 0 });
    await disconnected(raw.socket);
    expect(incidents).toHaveLength(1);
    expect(incidents[0]).toMatch(/head unit "trigger": handling audio_end failed on the bench \(Error: listener bug\); that connection is hung up/);
    expect(raw.errors.at(-1)).toMatchObject({ code: 'internal' });
    expect(raw.connection.stats().contained).toBe(1);
    await stillServes(server, 'after-incident');
  });
});

describe('hello', () => {
  it('gives a unit that announces no capabilities the documented default: text only', async () => {
    const server = await bench();
    const { capabilities: _omitted, ...hello } = validHello('minimal');
    const raw = await rawUnit(server.url, hello);
    cleanups.push(() => void raw.socket.disconnect());
    await raw.acked;
    const connection = await server.waitForHeadUnit(5_000, 'minimal');
    expect(connection.capabilities()).toEqual({ text: true, audio: false, vehicleContext: false, structuredActions: false });
    expect(raw.errors).toEqual([]);
  });
});

describe('protocol anomalies', () => {
  it('tells duplicate, wrong-turn and late replies apart, and a timeout names the reply that came for another turn', async () => {
    const server = await bench({ turnTimeoutMs: 400 });
    const raw = await rawAuthenticated(server, 'sloppy');
    const afterClose: unknown[] = [];
    raw.connection.onAfterClose((anomaly) => afterClose.push(anomaly));
    raw.socket.on(EVENTS.userTurn, ({ sessionId, turn }: { sessionId: string; turn: number }) => {
      const reply = (t: number) => raw.socket.emit(EVENTS.assistantReply, { sessionId, turn: t, text: `r${t}` });
      if (turn === 0) {
        reply(0);
        reply(0); // duplicate
      } else if (turn === 1) {
        reply(7); // a turn the bench never asked; turn 1 itself goes unanswered
        setTimeout(() => reply(1), 600); // late, after the 400 ms deadline
      }
    });
    const session = await raw.connection.openSession('s', CONTEXT);
    expect((await session.send(0, 'a', CONTEXT)).text).toBe('r0');
    const timeout = (await rejection(session.send(1, 'b', CONTEXT))) as SutError;
    expect(timeout.kind).toBe('timeout');
    expect(timeout.message).toBe('timeout: head unit "sloppy" did not answer turn 1 of "s" within 400 ms; meanwhile it sent a reply for turn 7 (a turn the bench never asked)');
    await session.close();
    expect(session.anomalies!()).toEqual({ duplicateReplies: 1, wrongTurnReplies: 1, invalidMessages: 0, linkLost: null });
    await eventually(() => expect(afterClose).toHaveLength(1));
    const [late] = afterClose as { sessionId: string; kind: string; turn: number; lateMs: number }[];
    expect(late).toMatchObject({ sessionId: 's', kind: 'late', turn: 1 });
    expect(late.lateMs).toBeGreaterThanOrEqual(100);
    // a second copy of the late reply is a duplicate, recorded after close
    raw.socket.emit(EVENTS.assistantReply, { sessionId: 's', turn: 1, text: 'again' });
    await eventually(() => expect(afterClose).toHaveLength(2));
    expect(afterClose[1]).toMatchObject({ kind: 'duplicate', turn: 1, lateMs: null });
    expect(raw.connection.stats()).toMatchObject({ replies: 2, duplicateReplies: 2, wrongTurnReplies: 1, lateReplies: 1 });
  });
});

describe('unit replacement', () => {
  it('is an event with both addresses; the replaced unit is told why, and redials with backoff', async () => {
    const server = await bench();
    const replaced: [ConnectedUnit, ConnectedUnit][] = [];
    server.on('unit_replaced', (unit, previous) => replaced.push([unit, previous]));
    const errors: BridgeError[] = [];
    const linkEvents: string[] = [];
    const original = await connectHeadUnit({
      url: server.url,
      token: TOKEN,
      handler: new ScriptedHandler({ name: 'hu', version: 'original' }),
      reconnect: true,
      redialBackoffMs: { first: 200, max: 800 },
      onBridgeError: (e) => errors.push(e),
      onLinkEvent: (m) => linkEvents.push(m),
    });
    cleanups.push(() => original.close());
    const connection = await server.waitForHeadUnit(5_000, 'hu');
    const originalAddress = connection.info()!.address;
    const session = await connection.openSession('old', CONTEXT);

    const intruder = await rawUnit(server.url, { ...validHello('hu'), unit: { name: 'hu', version: 'intruder' } });
    await intruder.acked;
    expect(replaced).toHaveLength(1);
    const [unit, previous] = replaced[0];
    expect(previous).toMatchObject({ name: 'hu', version: 'original', address: originalAddress });
    expect(unit).toMatchObject({ name: 'hu', version: 'intruder' });
    expect(unit.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(unit.address).not.toBe(previous.address);
    const lost = (await rejection(session.send(0, 'hi', CONTEXT))) as SutError;
    expect(lost.kind).toBe('disconnected');
    await session.close();
    expect(session.anomalies!().linkLost).toBe('replaced');
    await eventually(() => expect(errors.map((e) => e.code)).toContain('replaced'));
    expect(errors.find((e) => e.code === 'replaced')!.message).toContain(unit.address);

    // the original redials after its backoff and takes its name back
    await eventually(() => expect(connection.info()?.version).toBe('original'));
    expect(linkEvents.some((m) => /hung up; redialling in 200 ms/.test(m))).toBe(true);
    // the unit logs it when the bench's acknowledgement arrives, which may be just after the bench registered it
    await eventually(() => expect(linkEvents).toContain(`dialled in again to ${server.url}`));
    const fresh = await connection.openSession('new', CONTEXT);
    expect((await fresh.send(0, 'back', CONTEXT)).text).toBe('new#0: back');
    intruder.socket.disconnect();
  });
});
