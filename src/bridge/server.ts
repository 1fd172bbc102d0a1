import { createServer } from 'node:http';
import { EventEmitter } from 'node:events';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Server, type Socket } from 'socket.io';
import { z } from 'zod';
import { describeZodError, parseOrThrow } from '../domain/validation.ts';
import { BRIDGE_PROTOCOL, BRIDGE_TOKEN_ENV, EVENTS, HelloSchema, type BridgeError, type Capabilities, type HelloAck } from '../protocol/bridge.ts';
import { SutError } from '../headunit/types.ts';
import { BridgeHeadUnitConnection, type BridgeLimits } from './connection.ts';
import { transportCapBytes } from './limits.ts';

export { BridgeHeadUnitConnection, type BridgeUnitStats } from './connection.ts';

export const BridgeServerOptionsSchema = z.object({
  /** loopback unless configured: a rig that lets a head unit dial in from the lab network sets 0.0.0.0 */
  host: z.string().min(1).default('127.0.0.1'),
  /** 0 picks a free port */
  port: z.number().int().min(0).max(65535).default(0),
  /** shared secret every head unit must present in its hello */
  token: z.string().min(1, `a bridge token is required (the head unit sends it in hello; conventionally ${BRIDGE_TOKEN_ENV})`),
  maxMessageBytes: z.number().int().positive().default(256 * 1024),
  maxMessagesPerSecond: z.number().positive().default(50),
  turnTimeoutMs: z.number().int().positive().default(15_000),
  helloTimeoutMs: z.number().int().positive().default(5_000),
});
export type BridgeServerOptions = z.input<typeof BridgeServerOptionsSchema>;

/** A head unit currently dialled in, for rig status. */
export interface ConnectedUnit {
  name: string;
  version: string;
  capabilities: Capabilities;
  connectedAt: Date;
}

export interface BridgeServerEvents {
  unit_connected: [unit: ConnectedUnit];
  unit_disconnected: [unit: ConnectedUnit, reason: string];
}

export interface BridgeServer {
  /** the URL a head unit dials (socket.io default path /socket.io/) */
  readonly url: string;
  readonly port: number;
  /** Resolves with the first authenticated head unit (of that name, if given); rejects with SutError 'unavailable' on timeout. */
  waitForHeadUnit(timeoutMs: number, name?: string): Promise<BridgeHeadUnitConnection>;
  connectedUnits(): ConnectedUnit[];
  on<E extends keyof BridgeServerEvents>(event: E, listener: (...args: BridgeServerEvents[E]) => void): this;
  off<E extends keyof BridgeServerEvents>(event: E, listener: (...args: BridgeServerEvents[E]) => void): this;
  /** Hangs up every unit, fails whatever is still waiting as disconnected, stops listening. */
  close(): Promise<void>;
}

interface Waiter {
  name?: string;
  resolve(connection: BridgeHeadUnitConnection): void;
  reject(error: Error): void;
}

function sameSecret(given: string, expected: string): boolean {
  // hash both so the comparison is constant-time regardless of length
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Starts the bench side of the bridge; head units dial in to it as socket.io clients. */
export async function startBridgeServer(options: BridgeServerOptions): Promise<BridgeServer> {
  const config = parseOrThrow(BridgeServerOptionsSchema, options, 'bridge server options');
  const limits: BridgeLimits = {
    maxMessageBytes: config.maxMessageBytes,
    maxMessagesPerSecond: config.maxMessagesPerSecond,
    turnTimeoutMs: config.turnTimeoutMs,
  };
  const httpServer = createServer();
  const io = new Server(httpServer, { maxHttpBufferSize: transportCapBytes(config.maxMessageBytes), serveClient: false });
  const units = new Map<string, BridgeHeadUnitConnection>();
  const waiters = new Set<Waiter>();
  const emitter = new EventEmitter();

  const refuse = (socket: Socket, error: BridgeError) => {
    socket.emit(EVENTS.error, error);
    // give the error frame a moment to leave before hanging up
    setTimeout(() => socket.disconnect(true), 50).unref();
  };

  io.on('connection', (socket) => {
    const helloTimer = setTimeout(
      () => refuse(socket, { code: 'protocol', message: `no hello within ${config.helloTimeoutMs} ms` }),
      config.helloTimeoutMs,
    );
    socket.once('disconnect', () => clearTimeout(helloTimer));
    socket.once(EVENTS.hello, (payload: unknown) => {
      clearTimeout(helloTimer);
      const announced = (typeof payload === 'object' && payload !== null ? payload : {}) as { protocol?: unknown; token?: unknown };
      if (announced.protocol !== BRIDGE_PROTOCOL) {
        refuse(socket, { code: 'protocol', message: `protocol ${JSON.stringify(announced.protocol)} is not supported; the bench speaks ${BRIDGE_PROTOCOL}` });
        return;
      }
      if (typeof announced.token !== 'string' || !sameSecret(announced.token, config.token)) {
        refuse(socket, { code: 'unauthorized', message: `missing or wrong token (the bench's token is in ${BRIDGE_TOKEN_ENV})` });
        return;
      }
      const hello = HelloSchema.safeParse(payload);
      if (!hello.success) {
        refuse(socket, { code: 'invalid_message', message: `hello: ${describeZodError(hello.error)}` });
        return;
      }
      const info: ConnectedUnit = {
        name: hello.data.unit.name,
        version: hello.data.unit.version,
        capabilities: hello.data.capabilities,
        connectedAt: new Date(),
      };
      let unit = units.get(info.name);
      if (!unit) {
        unit = new BridgeHeadUnitConnection(info.name, limits);
        units.set(info.name, unit);
      }
      const connection = unit;
      connection.attach({ socket, ...info });
      socket.once('disconnect', (reason) => {
        const wasCurrent = connection.info()?.socket === socket;
        connection.detach(socket, reason);
        if (wasCurrent) emitter.emit('unit_disconnected', info, reason);
      });
      const ack: HelloAck = { protocol: BRIDGE_PROTOCOL, limits };
      socket.emit(EVENTS.helloAck, ack);
      emitter.emit('unit_connected', info);
      for (const waiter of [...waiters]) {
        if (waiter.name !== undefined && waiter.name !== info.name) continue;
        waiters.delete(waiter);
        waiter.resolve(connection);
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.port, config.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const port = (httpServer.address() as AddressInfo).port;
  // a wildcard bind is reachable on loopback too; remote units use the workstation's address instead
  const dialHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${dialHost.includes(':') ? `[${dialHost}]` : dialHost}:${port}`;

  const server: BridgeServer = {
    url,
    port,
    waitForHeadUnit(timeoutMs, name) {
      for (const unit of units.values()) {
        if (unit.connected && (name === undefined || unit.name === name)) return Promise.resolve(unit);
      }
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          name,
          resolve: (connection) => {
            clearTimeout(timer);
            resolve(connection);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const which = name === undefined ? 'no head unit' : `no head unit named "${name}"`;
          reject(
            new SutError(
              'unavailable',
              `${which} dialled in within ${timeoutMs} ms; start it with bridge URL ${url} and the shared token in ${BRIDGE_TOKEN_ENV}`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    connectedUnits() {
      return [...units.values()].flatMap((unit) => {
        const info = unit.info();
        return info ? [{ name: info.name, version: info.version, capabilities: info.capabilities, connectedAt: info.connectedAt }] : [];
      });
    },
    on(event, listener) {
      emitter.on(event, listener as (...args: unknown[]) => void);
      return server;
    },
    off(event, listener) {
      emitter.off(event, listener as (...args: unknown[]) => void);
      return server;
    },
    async close() {
      for (const unit of units.values()) unit.abortAll('the bench closed the bridge');
      for (const waiter of waiters) waiter.reject(new SutError('unavailable', 'the bench closed the bridge'));
      waiters.clear();
      await new Promise<void>((resolve) => {
        io.close(() => resolve());
      });
      for (const unit of units.values()) unit.abortAll('the bench closed the bridge');
    },
  };
  return server;
}
