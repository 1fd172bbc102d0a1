import { io, type Socket } from 'socket.io-client';
import type { ContextVector } from '../../src/domain/context.ts';
import type { HeadUnitHandler, HeadUnitReplyBody } from '../../src/headunit/types.ts';
import { startBridgeServer, type BridgeServer, type BridgeServerOptions } from '../../src/bridge/server.ts';
import { BRIDGE_PROTOCOL, EVENTS, type BridgeError, type Capabilities } from '../../src/protocol/bridge.ts';

export const TOKEN = 'test-token-123';

export const CONTEXT: ContextVector = {
  location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } },
  date: '2026-03-14',
  time: '18:30',
};

export const CAPABILITIES: Capabilities = { text: true, audio: false, vehicleContext: true, structuredActions: true };

/** A head unit whose turn behaviour each test chooses; it records what it was told. */
export class ScriptedHandler implements HeadUnitHandler {
  readonly capabilities = CAPABILITIES;
  readonly started: string[] = [];
  readonly ended: string[] = [];
  readonly vehicleContext: { sessionId: string | null; payload: unknown }[] = [];

  constructor(
    readonly unit: { name: string; version: string },
    private readonly reply: (sessionId: string, turn: number, text: string) => Promise<HeadUnitReplyBody> | HeadUnitReplyBody = (
      sessionId,
      turn,
      text,
    ) => ({ text: `${sessionId}#${turn}: ${text}`, actions: [] }),
  ) {}

  startSession(sessionId: string): void {
    this.started.push(sessionId);
  }

  handleTurn(sessionId: string, turn: number, text: string): Promise<HeadUnitReplyBody> {
    return Promise.resolve(this.reply(sessionId, turn, text));
  }

  endSession(sessionId: string): void {
    this.ended.push(sessionId);
  }

  handleVehicleContext(sessionId: string | null, payload: unknown): void {
    this.vehicleContext.push({ sessionId, payload });
  }
}

/** A raw socket.io head unit for misbehaviour the real client never produces; hello null sends none. */
export async function rawUnit(url: string, hello: Record<string, unknown> | null): Promise<{ socket: Socket; errors: BridgeError[]; acked: Promise<unknown> }> {
  const socket = io(url, { transports: ['websocket'], reconnection: false, forceNew: true });
  const errors: BridgeError[] = [];
  socket.on(EVENTS.error, (error: BridgeError) => errors.push(error));
  const acked = new Promise((resolve) => socket.once(EVENTS.helloAck, resolve));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  if (hello) socket.emit(EVENTS.hello, hello);
  return { socket, errors, acked };
}

export function validHello(name: string, token = TOKEN): Record<string, unknown> {
  return { protocol: BRIDGE_PROTOCOL, token, unit: { name, version: '1.0' }, capabilities: CAPABILITIES };
}

/** Resolves when the socket is disconnected (by either side). */
export function disconnected(socket: Socket): Promise<string> {
  if (!socket.connected) return Promise.resolve('already disconnected');
  return new Promise((resolve) => socket.once('disconnect', (reason) => resolve(reason)));
}

/** Captures the rejection of a promise, failing if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}

/** An array nested `depth` levels deep around `leaf`, built without recursion. */
export function nestedArray(depth: number, leaf: unknown = 0): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/**
 * Sends a socket.io event whose JSON argument is given as text, straight onto the engine.io
 * transport: the client's own encoder walks the value recursively and could not send a deeply
 * nested one, but a hostile peer can.
 */
export function sendRawEvent(socket: Socket, event: string, jsonArgument: string): void {
  (socket.io.engine as unknown as { write(message: string): void }).write(`2[${JSON.stringify(event)},${jsonArgument}]`);
}

/** JSON text of an array nested `depth` levels deep. */
export function deepJsonArray(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/** A bench bridge with the test token; `onCleanup` gets its close. */
export async function benchServer(onCleanup: (close: () => Promise<void>) => void, options: Partial<BridgeServerOptions> = {}): Promise<BridgeServer> {
  const server = await startBridgeServer({ token: TOKEN, ...options });
  onCleanup(() => server.close());
  return server;
}
