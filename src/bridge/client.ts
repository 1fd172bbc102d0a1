import { io, type Socket } from 'socket.io-client';
import { describeZodError } from '../domain/validation.ts';
import {
  BRIDGE_PROTOCOL,
  BridgeErrorSchema,
  EVENTS,
  HelloAckSchema,
  SessionEndSchema,
  SessionStartSchema,
  UserTurnSchema,
  VehicleContextEnvelopeSchema,
  type BridgeError,
  type Hello,
  type HelloAck,
} from '../protocol/bridge.ts';
import type { HeadUnitHandler } from '../headunit/types.ts';
import type { SocketRelay } from './socket-relay.ts';

export interface BridgeClientOptions {
  /** the bench's bridge URL, e.g. http://127.0.0.1:7311 */
  url: string;
  token: string;
  handler: HeadUnitHandler;
  /** dial again after the link drops (a standalone head unit); off for in-process use */
  reconnect?: boolean;
  /** how long the first connection + hello may take (default 10 s) */
  connectTimeoutMs?: number;
  /** errors the bench reports about this unit (rate limit, oversized or invalid messages) */
  onBridgeError?: (error: BridgeError) => void;
  /** carries the unit's audio streams over this connection (a voice front end listens on it before dialling in) */
  audio?: SocketRelay;
}

export interface BridgeClient {
  /** the limits the bench announced in hello_ack */
  readonly limits: HelloAck['limits'];
  readonly connected: boolean;
  close(): Promise<void>;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The head-unit side of the bridge: dials in to the bench, says hello, and routes session_start,
 * user_turn, session_end and vehicle_context to `handler`. Replies are not validated here; the
 * bench is the authority and reports a malformed reply as that turn's failure.
 */
export function connectHeadUnit(options: BridgeClientOptions): Promise<BridgeClient> {
  const { handler } = options;
  const socket: Socket = io(options.url, {
    transports: ['websocket'],
    reconnection: options.reconnect ?? false,
    forceNew: true,
  });
  options.audio?.bind(socket);
  const hello: Hello = { protocol: BRIDGE_PROTOCOL, token: options.token, unit: handler.unit, capabilities: handler.capabilities };
  const reportInvalid = (event: string, details: string, sessionId?: string) =>
    socket.emit(EVENTS.error, { sessionId, code: 'invalid_message', message: `${event}: ${details}` } satisfies BridgeError);
  const reportInternal = (sessionId: string, error: unknown) =>
    socket.emit(EVENTS.error, { sessionId, code: 'internal', message: errorMessage(error) } satisfies BridgeError);

  socket.on('connect', () => socket.emit(EVENTS.hello, hello));

  socket.on(EVENTS.sessionStart, async (payload: unknown) => {
    const parsed = SessionStartSchema.safeParse(payload);
    if (!parsed.success) return reportInvalid(EVENTS.sessionStart, describeZodError(parsed.error));
    const { sessionId, context } = parsed.data;
    try {
      await handler.startSession(sessionId, context);
      socket.emit(EVENTS.sessionReady, { sessionId });
    } catch (error) {
      reportInternal(sessionId, error);
    }
  });

  socket.on(EVENTS.userTurn, async (payload: unknown) => {
    const parsed = UserTurnSchema.safeParse(payload);
    if (!parsed.success) return reportInvalid(EVENTS.userTurn, describeZodError(parsed.error));
    const { sessionId, turn, text, context } = parsed.data;
    try {
      const body = await handler.handleTurn(sessionId, turn, text, context);
      socket.emit(EVENTS.assistantReply, { ...body, sessionId, turn });
    } catch (error) {
      reportInternal(sessionId, error);
    }
  });

  socket.on(EVENTS.sessionEnd, async (payload: unknown) => {
    const parsed = SessionEndSchema.safeParse(payload);
    if (!parsed.success) return reportInvalid(EVENTS.sessionEnd, describeZodError(parsed.error));
    try {
      await handler.endSession(parsed.data.sessionId);
    } catch (error) {
      reportInternal(parsed.data.sessionId, error);
    }
  });

  socket.on(EVENTS.vehicleContext, (payload: unknown) => {
    const parsed = VehicleContextEnvelopeSchema.safeParse(payload);
    if (!parsed.success) return reportInvalid(EVENTS.vehicleContext, describeZodError(parsed.error));
    try {
      handler.handleVehicleContext?.(parsed.data.sessionId, parsed.data.payload);
    } catch (error) {
      if (parsed.data.sessionId !== null) reportInternal(parsed.data.sessionId, error);
    }
  });

  return new Promise<BridgeClient>((resolve, reject) => {
    let acknowledged = false;
    const fail = (message: string) => {
      clearTimeout(timer);
      socket.disconnect();
      reject(new Error(`head unit "${handler.unit.name}" could not dial in to ${options.url}: ${message}`));
    };
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    const timer = setTimeout(() => fail(`no hello_ack within ${timeoutMs} ms`), timeoutMs);

    socket.on(EVENTS.error, (payload: unknown) => {
      const parsed = BridgeErrorSchema.safeParse(payload);
      const error: BridgeError = parsed.success ? parsed.data : { code: 'invalid_message', message: `unreadable bridge_error from the bench: ${JSON.stringify(payload)}` };
      if (!acknowledged) return fail(`${error.code}: ${error.message}`);
      options.onBridgeError?.(error);
    });
    socket.on('connect_error', (error) => {
      if (!acknowledged && !(options.reconnect ?? false)) fail(error.message);
    });
    socket.once(EVENTS.helloAck, (payload: unknown) => {
      const parsed = HelloAckSchema.safeParse(payload);
      if (!parsed.success) return fail(`invalid hello_ack: ${describeZodError(parsed.error)}`);
      acknowledged = true;
      clearTimeout(timer);
      resolve({
        limits: parsed.data.limits,
        get connected() {
          return socket.connected;
        },
        async close() {
          socket.disconnect();
        },
      });
    });
  });
}
