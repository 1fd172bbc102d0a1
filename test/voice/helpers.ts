import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Socket as ServerSocket } from 'socket.io';
import { io as connect, type Socket as ClientSocket } from 'socket.io-client';
import type { ContextVector } from '../../src/domain/context.ts';

export const MUNICH_CONTEXT: ContextVector = {
  location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.165, lon: 11.585 } },
  date: '2026-11-20',
  time: '18:30',
};

export interface SocketPair {
  /** the bench end (server side of the connection) */
  bench: ServerSocket;
  /** the head-unit end (client side) */
  unit: ClientSocket;
  close(): Promise<void>;
}

/** A real socket.io server and client connected over 127.0.0.1. */
export async function socketPair(): Promise<SocketPair> {
  const http = createServer();
  const server = new Server(http);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  const benchSide = new Promise<ServerSocket>((resolve) => server.once('connection', resolve));
  const unit = connect(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnection: false });
  const bench = await benchSide;
  await new Promise<void>((resolve) => (unit.connected ? resolve() : unit.once('connect', () => resolve())));
  return {
    bench,
    unit,
    close: async () => {
      unit.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
