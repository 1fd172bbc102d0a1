import { afterEach, describe, expect, it, vi } from 'vitest';
import { io } from 'socket.io-client';
import type { AfterCloseAnomaly, BeforeHelloAnomaly } from '../../src/bridge/connection.ts';
import type { BridgeServer } from '../../src/bridge/server.ts';
import { SutError } from '../../src/headunit/types.ts';
import { EVENTS } from '../../src/protocol/bridge.ts';
import { benchServer, CONTEXT, disconnected, rawUnit, rejection, validHello } from './helpers.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const bench = (): Promise<BridgeServer> => benchServer((close) => cleanups.push(close));
/** generous bound: the suite may run on a loaded 2-core CI machine */
const eventually = (check: () => void) => vi.waitFor(check, { timeout: 15_000, interval: 20 });

describe('late replies across a reconnect', () => {
  it('a reply for a turn cut off by the lost link, sent over the next connection after hello, is late (link_lost) by turn and time, not a duplicate', async () => {
    const server = await bench();
    const first = await rawUnit(server.url, validHello('hu'));
    first.socket.on(EVENTS.sessionStart, ({ sessionId }: { sessionId: string }) => first.socket.emit(EVENTS.sessionReady, { sessionId }));
    await first.acked;
    const connection = await server.waitForHeadUnit(5_000, 'hu');
    const afterClose: AfterCloseAnomaly[] = [];
    connection.onAfterClose((a) => afterClose.push(a));

    const session = await connection.openSession('run/c1', CONTEXT);
    const turnSent = new Promise<void>((resolve) => first.socket.once(EVENTS.userTurn, () => resolve()));
    const pending = session.send(0, 'navigate to Bogenhausen', CONTEXT);
    await turnSent;
    first.socket.disconnect(); // the unit loses its link before it answers
    expect(((await rejection(pending)) as SutError).kind).toBe('disconnected');
    await session.close();
    expect(session.anomalies!()).toEqual({ duplicateReplies: 0, wrongTurnReplies: 0, invalidMessages: 0, linkLost: 'disconnected' });

    const second = await rawUnit(server.url, validHello('hu'));
    cleanups.push(() => void second.socket.disconnect());
    await second.acked;
    second.socket.emit(EVENTS.assistantReply, { sessionId: 'run/c1', turn: 0, text: 'Route to Bogenhausen.' });
    second.socket.emit(EVENTS.assistantReply, { sessionId: 'run/c1', turn: 0, text: 'Route to Bogenhausen.' }); // a second copy
    await eventually(() => expect(afterClose).toHaveLength(2));
    expect(afterClose[0]).toMatchObject({ sessionId: 'run/c1', kind: 'late', turn: 0, cause: 'link_lost' });
    expect(afterClose[0].lateMs).toBeGreaterThanOrEqual(0);
    expect(afterClose[1]).toMatchObject({ sessionId: 'run/c1', kind: 'duplicate', turn: 0, lateMs: null, cause: null });
    expect(connection.stats()).toMatchObject({ lateReplies: 1, duplicateReplies: 1, wrongTurnReplies: 0, unattributed: 0, beforeHello: 0 });
  });
});

describe('messages before hello on a reconnect', () => {
  it("replies the unit's socket.io client buffered while its transport was down are flushed before its hello: counted, kept with their content, and classified", async () => {
    const server = await bench();
    // a unit as a socket.io client is written: hello from its connect handler, automatic reconnection
    const socket = io(server.url, { transports: ['websocket'], reconnection: true, reconnectionDelay: 50, reconnectionDelayMax: 100, forceNew: true });
    cleanups.push(() => void socket.disconnect());
    socket.on('connect', () => socket.emit(EVENTS.hello, validHello('hu')));
    socket.on(EVENTS.sessionStart, ({ sessionId }: { sessionId: string }) => socket.emit(EVENTS.sessionReady, { sessionId }));
    socket.on(EVENTS.userTurn, ({ sessionId, turn }: { sessionId: string; turn: number }) => {
      // the transport drops while the unit works on the turn; it answers anyway, and the client buffers the emits
      socket.io.engine.close();
      socket.emit(EVENTS.assistantReply, { sessionId, turn, text: 'Setting 22 degrees.', actions: [{ type: 'climate', setpointC: 22 }] });
      socket.emit(EVENTS.assistantReply, { sessionId, turn: turn + 5, text: 'and this one for a turn never asked' });
      socket.emit(EVENTS.assistantReply, { turn, text: 'no session at all' });
    });
    const connection = await server.waitForHeadUnit(5_000, 'hu');
    const afterClose: AfterCloseAnomaly[] = [];
    const beforeHello: BeforeHelloAnomaly[] = [];
    connection.onAfterClose((a) => afterClose.push(a));
    connection.onBeforeHello((a) => beforeHello.push(a));
    const reconnected = new Promise<void>((resolve) => server.on('unit_connected', () => resolve()));

    const session = await connection.openSession('run/c2', CONTEXT);
    expect(((await rejection(session.send(0, 'set 22 degrees', CONTEXT))) as SutError).kind).toBe('disconnected');
    await session.close();
    await reconnected;

    await eventually(() => expect(beforeHello).toHaveLength(3));
    expect(beforeHello.map((m) => [m.sessionId, m.event, m.turn])).toEqual([
      ['run/c2', EVENTS.assistantReply, 0],
      ['run/c2', EVENTS.assistantReply, 5],
      [null, EVENTS.assistantReply, 0],
    ]);
    expect(JSON.parse(beforeHello[0].content)).toEqual({ sessionId: 'run/c2', turn: 0, text: 'Setting 22 degrees.', actions: [{ type: 'climate', setpointC: 22 }] });
    expect(beforeHello[2].content).toContain('no session at all');
    // the reply for the cut-off turn is late (link lost), the other names a turn never asked; the third is tied to no session
    await eventually(() => expect(afterClose).toHaveLength(2));
    expect(afterClose[0]).toMatchObject({ sessionId: 'run/c2', kind: 'late', turn: 0, cause: 'link_lost' });
    expect(afterClose[1]).toMatchObject({ sessionId: 'run/c2', kind: 'wrong_turn', turn: 5 });
    expect(connection.stats()).toMatchObject({ beforeHello: 3, lateReplies: 1, wrongTurnReplies: 1, duplicateReplies: 0, unattributed: 1, invalidMessages: 0 });
    expect(connection.connected).toBe(true);
  });

  it('a connection refused at hello leaves nothing on the record of the unit it named', async () => {
    const server = await bench();
    const stranger = await rawUnit(server.url, null);
    stranger.socket.emit(EVENTS.assistantReply, { sessionId: 'run/c1', turn: 0, text: 'from nobody' });
    stranger.socket.emit(EVENTS.hello, validHello('hu', 'wrong-token'));
    await disconnected(stranger.socket);
    expect(server.refusedConnections()).toBe(1);
    const genuine = await rawUnit(server.url, validHello('hu'));
    cleanups.push(() => void genuine.socket.disconnect());
    await genuine.acked;
    const connection = await server.waitForHeadUnit(5_000, 'hu');
    expect(connection.stats()).toMatchObject({ beforeHello: 0, unattributed: 0, wrongTurnReplies: 0 });
  });
});
