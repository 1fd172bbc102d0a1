import { createServer, type Server as HttpServer } from 'node:http';
import { EventEmitter } from 'node:events';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { AddressInfo, Socket as NetSocket } from 'node:net';
import { Server, type Socket } from 'socket.io';
import { z } from 'zod';
import { describeZodError, parseOrThrow } from '../domain/validation.ts';
import { BRIDGE_PROTOCOL, BRIDGE_TOKEN_ENV, EVENTS, HelloSchema, type BridgeError, type Capabilities, type HelloAck } from '../protocol/bridge.ts';
import { bridgeStructureLimits, checkStructure, type StructureLimits } from '../protocol/structure.ts';
import { SutError } from '../headunit/types.ts';
import { BridgeHeadUnitConnection, type BridgeLimits, type EarlyMessage } from './connection.ts';
import { errorMessage, guarded } from './guard.ts';
import { payloadBytes, transportCapBytes } from './limits.ts';
import { timerMsSchema } from '../domain/durations.ts';

export { BridgeHeadUnitConnection, type AfterCloseAnomaly, type BeforeHelloAnomaly, type BridgeUnitStats } from './connection.ts';

/**
 * Messages a connection sends before its hello are kept (to be recorded and handled once the hello succeeds) up to
 * this many, and up to maxMessageBytes in all; beyond, they are counted only. A refused connection's are discarded.
 */
export const EARLY_MESSAGES_KEPT = 32;

/** A hello is a handful of short fields; anything bigger is refused before it is read (it comes before the token is checked). */
const HELLO_STRUCTURE: StructureLimits = { maxDepth: 4, maxEntries: 100, maxStringChars: 4096 };

export const BridgeServerOptionsSchema = z.object({
  /** loopback unless configured: a rig that lets a head unit dial in from the lab network sets 0.0.0.0 */
  host: z.string().min(1).default('127.0.0.1'),
  /** 0 picks a free port */
  port: z.number().int().min(0).max(65535).default(0),
  /** shared secret every head unit must present in its hello */
  token: z.string().min(1, `a bridge token is required (the head unit sends it in hello; conventionally ${BRIDGE_TOKEN_ENV})`),
  maxMessageBytes: z.number().int().positive().default(256 * 1024),
  maxMessagesPerSecond: z.number().positive().default(50),
  turnTimeoutMs: timerMsSchema().default(15_000),
  helloTimeoutMs: timerMsSchema().default(5_000),
});
export type BridgeServerOptions = z.input<typeof BridgeServerOptionsSchema>;

/** A head unit currently dialled in, for rig status. */
export interface ConnectedUnit {
  name: string;
  version: string;
  /** the build it announced in hello, when it did */
  build?: string;
  capabilities: Capabilities;
  connectedAt: Date;
  /** the peer's address and port, e.g. 127.0.0.1:52114 */
  address: string;
}

export interface BridgeServerEvents {
  unit_connected: [unit: ConnectedUnit];
  unit_disconnected: [unit: ConnectedUnit, reason: string];
  /** a second connection presented a connected unit's name: `previous` was hung up, `unit` took over */
  unit_replaced: [unit: ConnectedUnit, previous: ConnectedUnit];
  /** something the bench contained instead of crashing (an exception in a socket handler), for the log */
  incident: [message: string];
  /** a hello as the unit sent it (after the structural check, before the token and schema checks): the conformance kit's evidence */
  hello_received: [hello: unknown, address: string];
  /** a connection refused before or at hello, with the bridge_error it got */
  unit_refused: [error: BridgeError, address: string];
}

export interface BridgeServer {
  /** the URL a head unit dials (socket.io default path /socket.io/) */
  readonly url: string;
  readonly port: number;
  /** Resolves with the first authenticated head unit (of that name, if given); rejects with SutError 'unavailable' on timeout. */
  waitForHeadUnit(timeoutMs: number, name?: string): Promise<BridgeHeadUnitConnection>;
  connectedUnits(): ConnectedUnit[];
  /** connections refused before or at hello (wrong token or protocol, invalid or oversized hello, no hello in time) */
  refusedConnections(): number;
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

/** What the bridge server's steps share: its options, the units by name, the waiters, and how a connection is refused. */
interface BridgeHub {
  config: z.output<typeof BridgeServerOptionsSchema>;
  limits: BridgeLimits;
  structure: StructureLimits;
  units: Map<string, BridgeHeadUnitConnection>;
  waiters: Set<Waiter>;
  emitter: EventEmitter;
  /** connections refused before or at hello */
  refused: number;
  refuse(socket: Socket, error: BridgeError): void;
  incident(message: string): void;
  /** Last resort: an exception while handling a socket that has not said hello yet ends that socket only. */
  containTo(socket: Socket, what: string): (error: unknown) => void;
}

/** Starts the bench side of the bridge; head units dial in to it as socket.io clients. */
export async function startBridgeServer(options: BridgeServerOptions): Promise<BridgeServer> {
  const config = parseOrThrow(BridgeServerOptionsSchema, options, 'bridge server options');
  // a connection has helloTimeoutMs to send its request (a peer that trickles bytes or sends nothing is hung up)
  const httpServer = createServer({ headersTimeout: config.helloTimeoutMs, requestTimeout: config.helloTimeoutMs, connectionsCheckingInterval: Math.min(1_000, config.helloTimeoutMs) });
  const io = new Server(httpServer, { maxHttpBufferSize: transportCapBytes(config.maxMessageBytes), serveClient: false, connectTimeout: config.helloTimeoutMs });
  hangUpSilentConnections(httpServer, config.helloTimeoutMs);
  const hub = openHub(config);
  io.on(
    'connection',
    guarded((error) => hub.incident(`bridge: a new connection failed on the bench (${errorMessage(error)})`), (socket: Socket) => acceptConnection(hub, socket)),
  );
  await listen(httpServer, config.port, config.host);
  const port = (httpServer.address() as AddressInfo).port;
  // a wildcard bind is reachable on loopback too; remote units use the workstation's address instead
  const dialHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${dialHost.includes(':') ? `[${dialHost}]` : dialHost}:${port}`;
  const { units, waiters, emitter } = hub;

  const server: BridgeServer = {
    url,
    port,
    waitForHeadUnit: (timeoutMs, name) => waitForUnit(hub, url, timeoutMs, name),
    refusedConnections: () => hub.refused,
    connectedUnits() {
      return [...units.values()].flatMap((unit) => {
        const info = unit.info();
        return info ? [connectedUnit(info)] : [];
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
        // connections that never completed a request (slow, idle, handshake-less) hold up neither the close nor the process
        httpServer.closeAllConnections();
      });
      for (const unit of units.values()) unit.abortAll('the bench closed the bridge');
    },
  };
  return server;
}

function openHub(config: z.output<typeof BridgeServerOptionsSchema>): BridgeHub {
  const emitter = new EventEmitter();
  const incident = (message: string) => emitter.emit('incident', message);
  const hub: BridgeHub = {
    config,
    limits: { maxMessageBytes: config.maxMessageBytes, maxMessagesPerSecond: config.maxMessagesPerSecond, turnTimeoutMs: config.turnTimeoutMs },
    structure: bridgeStructureLimits(config.maxMessageBytes),
    units: new Map(),
    waiters: new Set(),
    emitter,
    refused: 0,
    refuse(socket, error) {
      hub.refused += 1;
      emitter.emit('unit_refused', error, peerAddress(socket));
      socket.emit(EVENTS.error, error);
      // give the error frame a moment to leave before hanging up
      setTimeout(() => socket.disconnect(true), 50).unref();
    },
    incident,
    containTo: (socket, what) => (error) => {
      incident(`bridge: handling ${what} from ${peerAddress(socket)} failed on the bench (${errorMessage(error)}); that connection is hung up`);
      socket.disconnect(true);
    },
  };
  return hub;
}

/**
 * A connection that sends nothing at all within `ms` is hung up: the HTTP server's own request bounds start at the
 * first byte, so a peer that only opens the port would otherwise stay until the bench closes.
 */
function hangUpSilentConnections(httpServer: HttpServer, ms: number): void {
  httpServer.on('connection', (socket: NetSocket) => {
    const timer = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, ms);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}

function listen(httpServer: HttpServer, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
}

/** A new socket.io connection: it has helloTimeoutMs to say hello; what it sends before is kept (bounded) for its unit. */
function acceptConnection(hub: BridgeHub, socket: Socket): void {
  const { config } = hub;
  const helloTimer = setTimeout(() => hub.refuse(socket, { code: 'protocol', message: `no hello within ${config.helloTimeoutMs} ms` }), config.helloTimeoutMs);
  socket.once('disconnect', () => clearTimeout(helloTimer));
  // a socket.io client flushes what it buffered while disconnected before its own connect handler says hello
  const early = { kept: [] as EarlyMessage[], notKept: 0, bytes: 0 };
  const keepEarly = guarded(hub.containTo(socket, 'a message before hello'), (event: string, payload: unknown) => {
    if (event === EVENTS.hello) return;
    if (early.kept.length >= EARLY_MESSAGES_KEPT) {
      early.notKept += 1;
      return;
    }
    const violation = checkStructure(payload, hub.structure);
    if (violation) {
      early.kept.push({ event, payload: undefined, refused: `(refused: ${violation.message})` });
      return;
    }
    const bytes = payloadBytes(payload);
    if (early.bytes + bytes > config.maxMessageBytes) {
      early.notKept += 1;
      return;
    }
    early.bytes += bytes;
    early.kept.push({ event, payload, refused: null });
  });
  socket.onAny(keepEarly);
  socket.once(
    EVENTS.hello,
    guarded(hub.containTo(socket, 'hello'), (payload: unknown) => {
      clearTimeout(helloTimer);
      socket.offAny(keepEarly);
      const info = checkedHello(hub, socket, payload);
      if (info) admitUnit(hub, socket, info, early);
    }),
  );
}

/** The unit a hello announces, or null when the hello was refused (too big, wrong protocol or token, off-schema). */
function checkedHello(hub: BridgeHub, socket: Socket, payload: unknown): ConnectedUnit | null {
  // before anything reads the hello (the token is not checked yet): a bounded, iterative look at its shape
  const violation = checkStructure(payload, HELLO_STRUCTURE);
  if (violation) {
    hub.refuse(socket, { code: violation.code, message: `hello: ${violation.message}` });
    return null;
  }
  hub.emitter.emit('hello_received', payload, peerAddress(socket));
  const announced = (typeof payload === 'object' && payload !== null ? payload : {}) as { protocol?: unknown; token?: unknown };
  if (announced.protocol !== BRIDGE_PROTOCOL) {
    hub.refuse(socket, { code: 'protocol', message: `protocol ${describeAnnounced(announced.protocol)} is not supported; the bench speaks ${BRIDGE_PROTOCOL}` });
    return null;
  }
  if (typeof announced.token !== 'string' || !sameSecret(announced.token, hub.config.token)) {
    hub.refuse(socket, { code: 'unauthorized', message: `missing or wrong token (the bench's token is in ${BRIDGE_TOKEN_ENV})` });
    return null;
  }
  const hello = HelloSchema.safeParse(payload);
  if (!hello.success) {
    hub.refuse(socket, { code: 'invalid_message', message: `hello: ${describeZodError(hello.error)}` });
    return null;
  }
  return {
    name: hello.data.unit.name,
    version: hello.data.unit.version,
    ...(hello.data.unit.build ? { build: hello.data.unit.build } : {}),
    capabilities: hello.data.capabilities,
    connectedAt: new Date(),
    address: peerAddress(socket),
  };
}

/** An accepted hello: the socket becomes its unit's connection (replacing an older one of that name), acked, and handed to the waiters. */
function admitUnit(hub: BridgeHub, socket: Socket, info: ConnectedUnit, early: { kept: EarlyMessage[]; notKept: number }): void {
  let unit = hub.units.get(info.name);
  if (!unit) {
    unit = new BridgeHeadUnitConnection(info.name, hub.limits, hub.incident);
    hub.units.set(info.name, unit);
  }
  const connection = unit;
  const previous = connection.info();
  connection.attach({ socket, ...info }, { kept: early.kept, notKept: early.notKept });
  if (previous) hub.emitter.emit('unit_replaced', info, connectedUnit(previous));
  socket.once('disconnect', (reason) => {
    const wasCurrent = connection.info()?.socket === socket;
    connection.detach(socket, { kind: 'disconnected', reason });
    if (wasCurrent) hub.emitter.emit('unit_disconnected', info, reason);
  });
  const ack: HelloAck = { protocol: BRIDGE_PROTOCOL, limits: hub.limits };
  socket.emit(EVENTS.helloAck, ack);
  hub.emitter.emit('unit_connected', info);
  for (const waiter of [...hub.waiters]) {
    if (waiter.name !== undefined && waiter.name !== info.name) continue;
    hub.waiters.delete(waiter);
    waiter.resolve(connection);
  }
}

function waitForUnit(hub: BridgeHub, url: string, timeoutMs: number, name: string | undefined): Promise<BridgeHeadUnitConnection> {
  for (const unit of hub.units.values()) {
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
      hub.waiters.delete(waiter);
      const which = name === undefined ? 'no head unit' : `no head unit named "${name}"`;
      reject(new SutError('unavailable', `${which} dialled in within ${timeoutMs} ms; start it with bridge URL ${url} and the shared token in ${BRIDGE_TOKEN_ENV}`));
    }, timeoutMs);
    hub.waiters.add(waiter);
  });
}

function connectedUnit(info: ConnectedUnit): ConnectedUnit {
  return { name: info.name, version: info.version, ...(info.build ? { build: info.build } : {}), capabilities: info.capabilities, connectedAt: info.connectedAt, address: info.address };
}

/** The peer of a socket as address:port (the port tells two connections from one host apart). */
function peerAddress(socket: Socket): string {
  const address = socket.handshake.address || 'unknown';
  const port = socket.request.socket.remotePort;
  const host = address.includes(':') ? `[${address}]` : address;
  return port === undefined ? host : `${host}:${port}`;
}

/** A protocol value a unit announced, for the refusal: short strings verbatim, anything else by its type. */
function describeAnnounced(value: unknown): string {
  if (typeof value === 'string') return value.length <= 100 ? JSON.stringify(value) : `(a string of ${value.length} characters)`;
  if (value === undefined) return '(none)';
  return `(a${Array.isArray(value) ? 'n array' : ` ${value === null ? 'null' : typeof value}`})`;
}
