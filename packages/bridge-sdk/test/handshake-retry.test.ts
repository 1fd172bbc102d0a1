import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { afterEach, describe, expect, it } from 'vitest';
import { BRIDGE_PROTOCOL, connectHeadUnit, EVENTS, HANDSHAKE_BACKOFF_MS, type BridgeClient, type HeadUnitHandler } from '../src/index.ts';

const handler: HeadUnitHandler = {
  unit: { name: 'retry-unit', version: '1.0' },
  capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: true },
  startSession() {},
  async handleTurn() {
    return { text: 'ok' };
  },
  endSession() {},
};

/** A bench that hears every hello and answers hello_ack only from the `ackFrom`-th on (never with Infinity). */
async function forgetfulBench(ackFrom: number): Promise<{ url: string; hellos: () => number; close(): Promise<void> }> {
  const http = createServer();
  const io = new Server(http);
  let hellos = 0;
  io.on('connection', (socket) => {
    socket.on(EVENTS.hello, () => {
      hellos += 1;
      if (hellos >= ackFrom) socket.emit(EVENTS.helloAck, { protocol: BRIDGE_PROTOCOL, limits: { maxMessageBytes: 262_144, maxMessagesPerSecond: 50, turnTimeoutMs: 15_000 } });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    hellos: () => hellos,
    close: () => new Promise<void>((resolve) => (io.close(() => resolve()), http.closeAllConnections())),
  };
}

let client: BridgeClient | null = null;
let bench: Awaited<ReturnType<typeof forgetfulBench>> | null = null;
afterEach(async () => {
  await client?.close();
  await bench?.close();
  client = bench = null;
});

describe('the first hello is retried with back-off', () => {
  it('a bench that misses the first hello gets a second one, and the unit says it dialled again', async () => {
    bench = await forgetfulBench(2);
    const events: string[] = [];
    client = await connectHeadUnit({ url: bench.url, token: 't', handler, connectTimeoutMs: 500, onLinkEvent: (message) => events.push(message) });
    expect(bench.hellos()).toBe(2);
    expect(events).toEqual([`no hello_ack from ${bench.url} within 500 ms (attempt 1 of 3); dialling again in ${HANDSHAKE_BACKOFF_MS.first} ms`]);
  });

  it('gives up after the last attempt, naming how many there were', async () => {
    bench = await forgetfulBench(Infinity);
    const events: string[] = [];
    const dialled = connectHeadUnit({ url: bench.url, token: 't', handler, connectTimeoutMs: 300, handshakeAttempts: 2, onLinkEvent: (message) => events.push(message) });
    await expect(dialled).rejects.toThrow(`head unit "retry-unit" could not dial in to ${bench.url}: no hello_ack within 300 ms in 2 attempts`);
    expect(bench.hellos()).toBe(2);
    expect(events).toHaveLength(1);
  });
});
