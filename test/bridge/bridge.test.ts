import { afterEach, describe, expect, it, vi } from 'vitest';
import { startBridgeServer, type BridgeServer, type BridgeServerOptions, type ConnectedUnit } from '../../src/bridge/server.ts';
import { connectHeadUnit, type BridgeClient } from '../../src/bridge/client.ts';
import { transportCapBytes } from '../../src/bridge/limits.ts';
import { SutError, type HeadUnitReplyBody } from '../../src/headunit/types.ts';
import { BRIDGE_TOKEN_ENV, EVENTS, type BridgeError } from '../../src/protocol/bridge.ts';
import { benchServer, CONTEXT, ScriptedHandler, TOKEN, disconnected, rawUnit, rejection, validHello } from './helpers.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const bench = (options: Partial<BridgeServerOptions> = {}): Promise<BridgeServer> => benchServer((close) => cleanups.push(close), options);

async function unit(server: BridgeServer, handler: ScriptedHandler, onBridgeError?: (e: BridgeError) => void): Promise<BridgeClient> {
  const client = await connectHeadUnit({ url: server.url, token: TOKEN, handler, onBridgeError });
  cleanups.push(() => client.close());
  return client;
}

function expectSutError(error: Error, kind: SutError['kind']): SutError {
  expect(error).toBeInstanceOf(SutError);
  expect((error as SutError).kind).toBe(kind);
  return error as SutError;
}

/** generous bound: the suite may run on a loaded 2-core CI machine */
const eventually = (check: () => void) => vi.waitFor(check, { timeout: 5_000, interval: 20 });

const never = () => new Promise<HeadUnitReplyBody>(() => {});

describe('bridge happy path', () => {
  it('authenticates a unit, multiplexes concurrent sessions and routes every reply to its turn', async () => {
    const server = await bench({ maxMessagesPerSecond: 1000 });
    const connectedEvents: ConnectedUnit[] = [];
    server.on('unit_connected', (info) => connectedEvents.push(info));
    // later turns answer sooner, so replies arrive out of order across sessions
    const handler = new ScriptedHandler({ name: 'hu-1', version: '2.3' }, async (sessionId, turn, text) => {
      await new Promise((resolve) => setTimeout(resolve, (5 - turn) * 5));
      return { text: `${sessionId}/${turn}/${text}`, actions: [{ type: 'climate', setpointC: 21, zone: 'all' }] };
    });
    const waiting = server.waitForHeadUnit(5_000, 'hu-1');
    const client = await unit(server, handler);
    const connection = await waiting;

    expect(client.limits).toEqual({ maxMessageBytes: 256 * 1024, maxMessagesPerSecond: 1000, turnTimeoutMs: 15_000 });
    expect(connection.capabilities()).toEqual(handler.capabilities);
    expect(connection.describe).toContain('hu-1');
    expect(server.connectedUnits().map((u) => [u.name, u.version])).toEqual([['hu-1', '2.3']]);
    expect(connectedEvents.map((u) => u.name)).toEqual(['hu-1']);

    const sessions = await Promise.all(['s-a', 's-b', 's-c'].map((id) => connection.openSession(id, CONTEXT)));
    expect(handler.started.sort()).toEqual(['s-a', 's-b', 's-c']);
    const replies = await Promise.all(
      sessions.flatMap((session) => [0, 1, 2, 3].map((turn) => session.send(turn, `hello ${turn}`, CONTEXT))),
    );
    const expected = ['s-a', 's-b', 's-c'].flatMap((id) => [0, 1, 2, 3].map((turn) => `${id}/${turn}/hello ${turn}`));
    expect(replies.map((r) => r.text)).toEqual(expected);
    expect(replies.every((r, i) => r.sessionId === sessions[Math.floor(i / 4)].sessionId && r.turn === i % 4)).toBe(true);
    expect(replies[0].actions).toEqual([{ type: 'climate', setpointC: 21, zone: 'all' }]);
    expect(connection.stats()).toMatchObject({ sessionsOpened: 3, replies: 15, duplicateReplies: 0, lateReplies: 0, wrongTurnReplies: 0, unattributed: 0, dropped: 0 });

    connection.sendVehicleContext(null, { frames: [1, 2] });
    connection.sendVehicleContext('s-a', { frames: [3] });
    await sessions[0].close();
    await eventually(() => expect(handler.ended).toEqual(['s-a']));
    expect(handler.vehicleContext).toEqual([
      { sessionId: null, payload: { frames: [1, 2] } },
      { sessionId: 's-a', payload: { frames: [3] } },
    ]);
    await connection.close();
    await eventually(() => expect(handler.ended.sort()).toEqual(['s-a', 's-b', 's-c']));
  });

  it('resolves waitForHeadUnit at once for a unit already dialled in, and only for the requested name', async () => {
    const server = await bench();
    await unit(server, new ScriptedHandler({ name: 'first', version: '1' }));
    expect((await server.waitForHeadUnit(1_000)).name).toBe('first');
    const second = server.waitForHeadUnit(5_000, 'second');
    await unit(server, new ScriptedHandler({ name: 'second', version: '1' }));
    expect((await second).name).toBe('second');
  });

  it('fails waitForHeadUnit with a message telling how to dial in when no unit comes', async () => {
    const server = await bench();
    const error = expectSutError(await rejection(server.waitForHeadUnit(100)), 'unavailable');
    expect(error.message).toContain('no head unit dialled in');
    expect(error.message).toContain(server.url);
    expect(error.message).toContain(BRIDGE_TOKEN_ENV);
  });

  it('listens on loopback by default', async () => {
    const server = await bench();
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });
});

describe('bridge handshake', () => {
  it('refuses a wrong token with bridge_error unauthorized and hangs up', async () => {
    const server = await bench();
    const refused = await rejection(
      connectHeadUnit({ url: server.url, token: 'wrong', handler: new ScriptedHandler({ name: 'intruder', version: '1' }) }),
    );
    expect(refused.message).toContain('unauthorized');

    const { socket, errors } = await rawUnit(server.url, { ...validHello('tokenless'), token: undefined });
    await disconnected(socket);
    expect(errors.map((e) => e.code)).toEqual(['unauthorized']);
    expect(server.connectedUnits()).toEqual([]);
  });

  it('refuses another protocol version with bridge_error protocol', async () => {
    const server = await bench();
    const { socket, errors } = await rawUnit(server.url, { ...validHello('old'), protocol: 'icabench-bridge/0' });
    await disconnected(socket);
    expect(errors).toHaveLength(1);
    expect(errors[0].code).toBe('protocol');
    expect(errors[0].message).toContain('icabench-bridge/1');
    expect(server.connectedUnits()).toEqual([]);
  });

  it('refuses an invalid hello naming the field, and a unit that never says hello', async () => {
    const server = await bench({ helloTimeoutMs: 100 });
    const bad = await rawUnit(server.url, { ...validHello('x'), unit: { name: '' } });
    await disconnected(bad.socket);
    expect(bad.errors[0].code).toBe('invalid_message');
    expect(bad.errors[0].message).toContain('unit.name');

    const silent = await rawUnit(server.url, null);
    await disconnected(silent.socket);
    expect(silent.errors[0].code).toBe('protocol');
  });
});

describe('a misbehaving head unit yields a SutError and never a hang', () => {
  it('fails pending turns of a unit that disconnects, leaving other units untouched', async () => {
    const server = await bench();
    const disconnectedUnits: string[] = [];
    server.on('unit_disconnected', (info) => disconnectedUnits.push(info.name));
    let answerB: (() => void) | undefined;
    const clientA = await unit(server, new ScriptedHandler({ name: 'A', version: '1' }, never));
    await unit(
      server,
      new ScriptedHandler({ name: 'B', version: '1' }, (_s, turn) => new Promise((resolve) => (answerB = () => resolve({ text: `B${turn}`, actions: [] })))),
    );
    const unitA = await server.waitForHeadUnit(1_000, 'A');
    const unitB = await server.waitForHeadUnit(1_000, 'B');
    const [a1, a2] = await Promise.all([unitA.openSession('a1', CONTEXT), unitA.openSession('a2', CONTEXT)]);
    const b1 = await unitB.openSession('b1', CONTEXT);

    const failuresA = [rejection(a1.send(0, 'hi', CONTEXT)), rejection(a2.send(0, 'hi', CONTEXT))];
    const pendingB = b1.send(0, 'hi', CONTEXT);
    await eventually(() => expect(answerB).toBeDefined());
    await clientA.close();

    for (const failure of failuresA) {
      expect(expectSutError(await failure, 'disconnected').message).toContain('"A" disconnected');
    }
    expectSutError(await rejection(a1.send(1, 'again', CONTEXT)), 'disconnected');
    expectSutError(await rejection(unitA.openSession('a3', CONTEXT)), 'disconnected');
    await eventually(() => expect(disconnectedUnits).toEqual(['A']));
    expect(server.connectedUnits().map((u) => u.name)).toEqual(['B']);

    answerB!();
    expect((await pendingB).text).toBe('B0');
  });

  it('times out a turn without a reply, ignores the late reply and keeps the session usable', async () => {
    const server = await bench({ turnTimeoutMs: 500 });
    const handler = new ScriptedHandler({ name: 'slow', version: '1' }, async (_s, turn) => {
      if (turn === 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
      return { text: `t${turn}`, actions: [] };
    });
    await unit(server, handler);
    const connection = await server.waitForHeadUnit(1_000);
    const session = await connection.openSession('s', CONTEXT);
    const error = expectSutError(await rejection(session.send(0, 'slow one', CONTEXT)), 'timeout');
    expect(error.message).toContain('500 ms');
    await eventually(() => expect(connection.stats().lateReplies).toBe(1));
    expect((await session.send(1, 'quick one', CONTEXT)).text).toBe('t1');
  });

  it('times out a session_start the unit never acknowledges', async () => {
    const server = await bench({ turnTimeoutMs: 200 });
    await rawUnit(server.url, validHello('deaf'));
    const connection = await server.waitForHeadUnit(1_000);
    expectSutError(await rejection(connection.openSession('s', CONTEXT)), 'timeout');
  });

  it('rejects a reply that fails the schema as malformed, naming the field and the expectation', async () => {
    const server = await bench();
    const errors: BridgeError[] = [];
    await unit(
      server,
      new ScriptedHandler({ name: 'sloppy', version: '1' }, () => ({ text: 42, actions: [] }) as unknown as HeadUnitReplyBody),
      (e) => errors.push(e),
    );
    const connection = await server.waitForHeadUnit(1_000);
    const session = await connection.openSession('s', CONTEXT);
    const error = expectSutError(await rejection(session.send(0, 'hi', CONTEXT)), 'malformed');
    expect(error.message).toMatch(/text: .*expected string/);
    await eventually(() => expect(errors.map((e) => e.code)).toEqual(['invalid_message']));
  });

  it('rejects an oversized reply as too_large and tells the unit', async () => {
    const server = await bench({ maxMessageBytes: 1024 });
    const errors: BridgeError[] = [];
    await unit(server, new ScriptedHandler({ name: 'verbose', version: '1' }, () => ({ text: 'x'.repeat(5_000), actions: [] })), (e) =>
      errors.push(e),
    );
    const connection = await server.waitForHeadUnit(1_000);
    const session = await connection.openSession('s', CONTEXT);
    const error = expectSutError(await rejection(session.send(0, 'hi', CONTEXT)), 'too_large');
    expect(error.message).toMatch(/exceeds the limit of 1024/);
    await eventually(() => expect(errors.map((e) => e.code)).toEqual(['too_large']));
  });

  it('reports a reply beyond the transport cap as disconnected (socket.io drops the link)', async () => {
    const server = await bench({ maxMessageBytes: 1024 });
    const huge = 'x'.repeat(transportCapBytes(1024) + 1_000);
    await unit(server, new ScriptedHandler({ name: 'flood', version: '1' }, () => ({ text: huge, actions: [] })));
    const connection = await server.waitForHeadUnit(1_000);
    const session = await connection.openSession('s', CONTEXT);
    expectSutError(await rejection(session.send(0, 'hi', CONTEXT)), 'disconnected');
  });

  it('drops unsolicited messages over the rate and tells the unit once, but never drops the reply a turn waits for', async () => {
    const server = await bench({ maxMessagesPerSecond: 5 });
    const { socket, errors } = await rawUnit(server.url, validHello('chatty'));
    socket.on(EVENTS.sessionStart, ({ sessionId }: { sessionId: string }) => socket.emit(EVENTS.sessionReady, { sessionId }));
    socket.on(EVENTS.userTurn, ({ sessionId, turn }: { sessionId: string; turn: number }) => {
      for (let i = 0; i < 20; i += 1) socket.emit(EVENTS.assistantReply, { sessionId: 'ghost', turn: i, text: 'spam' });
      socket.emit(EVENTS.assistantReply, { sessionId, turn, text: 'the answer' });
    });
    const connection = await server.waitForHeadUnit(1_000);
    const session = await connection.openSession('s', CONTEXT);
    expect((await session.send(0, 'hi', CONTEXT)).text).toBe('the answer');
    await eventually(() => expect(errors.map((e) => e.code)).toEqual(['rate_limited']));
    expect(errors[0].message).toContain('5 unsolicited messages per second');
    // a burst of 5 goes through (and is unattributed: no session "ghost"), the other 15 are dropped
    expect(connection.stats()).toMatchObject({ dropped: 15, unattributed: 5, replies: 2 });
  });

  it('rejects the session a unit reports an error for (handler exception → internal)', async () => {
    const server = await bench();
    const handler = new ScriptedHandler({ name: 'buggy', version: '1' }, (sessionId) => {
      if (sessionId === 'bad') throw new Error('boom');
      return { text: 'fine', actions: [] };
    });
    handler.startSession = (sessionId: string) => {
      if (sessionId === 'refused') throw new Error('no slot free');
    };
    await unit(server, handler);
    const connection = await server.waitForHeadUnit(1_000);
    const [bad, good] = await Promise.all([connection.openSession('bad', CONTEXT), connection.openSession('good', CONTEXT)]);
    const [badResult, goodResult] = await Promise.allSettled([bad.send(0, 'x', CONTEXT), good.send(0, 'x', CONTEXT)]);
    expect(goodResult).toMatchObject({ status: 'fulfilled', value: { text: 'fine' } });
    expect(badResult.status).toBe('rejected');
    const error = expectSutError((badResult as PromiseRejectedResult).reason as Error, 'rejected');
    expect(error.message).toContain('internal: boom');
    expect(expectSutError(await rejection(connection.openSession('refused', CONTEXT)), 'rejected').message).toContain('no slot free');
  });

  it('counts replies for unknown sessions and invalid messages it cannot attribute', async () => {
    const server = await bench();
    const { socket, errors } = await rawUnit(server.url, validHello('confused'));
    const connection = await server.waitForHeadUnit(1_000);
    socket.emit(EVENTS.assistantReply, { sessionId: 'nobody', turn: 0, text: 'hello?' });
    socket.emit(EVENTS.sessionReady, { sessionId: 'nobody' });
    socket.emit(EVENTS.assistantReply, { text: 'no routing at all' });
    await eventually(() => expect(connection.stats()).toMatchObject({ unattributed: 3, replies: 0 }));
    await eventually(() => expect(errors.map((e) => e.code)).toEqual(['invalid_message']));
  });

  it('fails everything still waiting when the bench closes', async () => {
    const server = await startBridgeServer({ token: TOKEN });
    const client = await connectHeadUnit({ url: server.url, token: TOKEN, handler: new ScriptedHandler({ name: 'u', version: '1' }, never) });
    cleanups.push(() => client.close());
    const connection = await server.waitForHeadUnit(1_000);
    const session = await connection.openSession('s', CONTEXT);
    const failure = rejection(session.send(0, 'hi', CONTEXT));
    await server.close();
    expectSutError(await failure, 'disconnected');
  });
});

describe('bridge reconnect', () => {
  it('follows a unit that dials in again under the same name; old sessions are lost', async () => {
    const server = await bench();
    const first = await unit(server, new ScriptedHandler({ name: 'hu', version: '1' }));
    const connection = await server.waitForHeadUnit(1_000);
    const oldSession = await connection.openSession('s', CONTEXT);
    await first.close();
    await eventually(() => expect(server.connectedUnits()).toEqual([]));
    await unit(server, new ScriptedHandler({ name: 'hu', version: '2' }));
    const again = await server.waitForHeadUnit(1_000, 'hu');
    expect(again).toBe(connection);
    expectSutError(await rejection(oldSession.send(0, 'hi', CONTEXT)), 'disconnected');
    const fresh = await again.openSession('s', CONTEXT);
    expect((await fresh.send(0, 'hi', CONTEXT)).text).toBe('s#0: hi');
  });

  it('with reconnect on, a unit dials in again by itself after the bench restarts on the same port', async () => {
    const first = await startBridgeServer({ token: TOKEN });
    const port = first.port;
    const client = await connectHeadUnit({ url: first.url, token: TOKEN, handler: new ScriptedHandler({ name: 'hu', version: '1' }), reconnect: true });
    cleanups.push(() => client.close());
    await first.close();
    await eventually(() => expect(client.connected).toBe(false));
    const second = await bench({ port });
    const connection = await second.waitForHeadUnit(10_000, 'hu');
    const session = await connection.openSession('s', CONTEXT);
    expect((await session.send(0, 'back?', CONTEXT)).text).toBe('s#0: back?');
    expect(client.connected).toBe(true);
  });
});
