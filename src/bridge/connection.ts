import type { Socket } from 'socket.io';
import type { ContextVector } from '../domain/context.ts';
import { describeZodError } from '../domain/validation.ts';
import {
  AssistantReplySchema,
  BridgeErrorSchema,
  EVENTS,
  SessionReadySchema,
  type AssistantReply,
  type BridgeError,
  type Capabilities,
  type SessionStart,
  type UserTurn,
  type VehicleContextEnvelope,
} from '../protocol/bridge.ts';
import { SutError, type HeadUnitConnection, type HeadUnitSession } from '../headunit/types.ts';
import { payloadBytes, RateLimiter } from './limits.ts';
import { SocketRelay } from './socket-relay.ts';

export interface BridgeLimits {
  maxMessageBytes: number;
  maxMessagesPerSecond: number;
  turnTimeoutMs: number;
}

/** What the bench counted on one unit's link; messages it could not attribute are counted, not thrown away silently. */
export interface BridgeUnitStats {
  sessionsOpened: number;
  replies: number;
  /** replies / session_ready for sessions or turns nothing is waiting for (late, duplicate, unknown) */
  ignored: number;
  /** messages that failed validation or exceeded a limit and could not be tied to a waiting turn */
  unattributed: number;
  rateLimited: number;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: SutError): void;
  timer: NodeJS.Timeout;
}

/** A socket that passed the hello handshake, with the identity it announced. */
export interface AuthenticatedSocket {
  socket: Socket;
  name: string;
  version: string;
  capabilities: Capabilities;
  connectedAt: Date;
}

const readyKey = (sessionId: string) => `ready\u0000${sessionId}`;
const turnKey = (sessionId: string, turn: number) => `turn\u0000${sessionId}\u0000${turn}`;

/** Reads sessionId/turn from a payload that may be invalid, to route its error to the turn waiting for it. */
function looseRoute(payload: unknown): { sessionId?: string; turn?: number } {
  if (typeof payload !== 'object' || payload === null) return {};
  const { sessionId, turn } = payload as { sessionId?: unknown; turn?: unknown };
  return {
    sessionId: typeof sessionId === 'string' ? sessionId : undefined,
    turn: typeof turn === 'number' ? turn : undefined,
  };
}

/**
 * The bench's handle on one head unit (identified by its announced name) dialled in over the bridge.
 * If the unit reconnects, the connection follows the new socket; sessions opened on the old socket
 * are gone with it (the unit lost their state) and fail as disconnected.
 */
export class BridgeHeadUnitConnection implements HeadUnitConnection {
  private link: AuthenticatedSocket | null = null;
  private linkGeneration = 0;
  private limiter: RateLimiter;
  /** inside a burst over the rate limit; the unit is told once per burst */
  private overRate = false;
  private readonly pending = new Map<string, Pending & { generation: number }>();
  private readonly sessions = new Map<string, BridgeSession>();
  private readonly counters: BridgeUnitStats = { sessionsOpened: 0, replies: 0, ignored: 0, unattributed: 0, rateLimited: 0 };
  /** the unit's audio streams (src/protocol/audio.ts), following its socket across reconnects */
  readonly audio: SocketRelay;

  constructor(
    readonly name: string,
    private readonly limits: BridgeLimits,
  ) {
    this.limiter = new RateLimiter(limits.maxMessagesPerSecond);
    this.audio = new SocketRelay(`head unit "${name}"`);
  }

  get describe(): string {
    const info = this.link;
    return info ? `bridge head unit "${info.name}" ${info.version}` : `bridge head unit "${this.name}" (not connected)`;
  }

  capabilities(): Capabilities {
    if (!this.link) throw new SutError('disconnected', `head unit "${this.name}" is not connected`);
    return this.link.capabilities;
  }

  info(): AuthenticatedSocket | null {
    return this.link;
  }

  stats(): BridgeUnitStats {
    return { ...this.counters };
  }

  get connected(): boolean {
    return this.link !== null;
  }

  /** Binds a freshly authenticated socket; any previous socket of this unit is hung up. */
  attach(link: AuthenticatedSocket): void {
    const previous = this.link;
    if (previous) {
      this.detach(previous.socket, 'replaced by a new connection of the same unit');
      previous.socket.disconnect(true);
    }
    this.link = link;
    this.linkGeneration += 1;
    this.limiter = new RateLimiter(this.limits.maxMessagesPerSecond);
    this.overRate = false;
    const generation = this.linkGeneration;
    const socket = link.socket;
    const guard = (handler: (payload: unknown) => void) => (payload: unknown) => {
      if (this.linkGeneration !== generation) return;
      this.receive(payload, handler);
    };
    socket.on(EVENTS.sessionReady, guard((p) => this.onSessionReady(p)));
    socket.on(EVENTS.assistantReply, guard((p) => this.onReply(p)));
    socket.on(EVENTS.error, guard((p) => this.onUnitError(p)));
    this.audio.bind(socket);
  }

  /** The socket went away: every turn and session opening still waiting on it fails as disconnected. */
  detach(socket: Socket, reason: string): void {
    if (!this.link || this.link.socket !== socket) return;
    const generation = this.linkGeneration;
    this.link = null;
    this.audio.unbind(socket);
    this.linkGeneration += 1;
    for (const [key, waiting] of this.pending) {
      if (waiting.generation !== generation) continue;
      this.settle(key)?.reject(new SutError('disconnected', `head unit "${this.name}" disconnected (${reason})`));
    }
    for (const [id, session] of this.sessions) {
      if (session.generation !== generation) continue;
      session.lost = true;
      this.sessions.delete(id);
    }
  }

  async openSession(sessionId: string, context: ContextVector): Promise<HeadUnitSession> {
    if (this.sessions.has(sessionId)) throw new Error(`session "${sessionId}" is already open on head unit "${this.name}"`);
    const generation = this.linkGeneration;
    const start: SessionStart = { sessionId, context };
    await this.request(readyKey(sessionId), EVENTS.sessionStart, start, `session_start of "${sessionId}"`);
    const session = new BridgeSession(this, sessionId, generation);
    this.sessions.set(sessionId, session);
    this.counters.sessionsOpened += 1;
    return session;
  }

  /** Sends vehicle context (CAN frames batch, validated by the caller) to one session or, with null, to all of them. */
  sendVehicleContext(sessionId: string | null, payload: unknown): void {
    const envelope: VehicleContextEnvelope = { sessionId, payload };
    this.requireLink().socket.emit(EVENTS.vehicleContext, envelope);
  }

  /** Ends every open session; the unit stays dialled in (BridgeServer.close() hangs up). */
  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.close()));
  }

  /** @internal used by BridgeSession */
  sendTurn(session: BridgeSession, turn: UserTurn): Promise<AssistantReply> {
    if (session.lost || session.generation !== this.linkGeneration) {
      return Promise.reject(new SutError('disconnected', `head unit "${this.name}" disconnected; session "${session.sessionId}" is lost`));
    }
    return this.request(turnKey(turn.sessionId, turn.turn), EVENTS.userTurn, turn, `turn ${turn.turn} of "${turn.sessionId}"`) as Promise<AssistantReply>;
  }

  /** @internal used by BridgeSession */
  endSession(session: BridgeSession): void {
    if (this.sessions.get(session.sessionId) === session) this.sessions.delete(session.sessionId);
    if (!session.lost && session.generation === this.linkGeneration && this.link) {
      this.link.socket.emit(EVENTS.sessionEnd, { sessionId: session.sessionId, reason: 'completed' });
    }
  }

  /** Rejects everything still waiting (the bench is shutting down). */
  abortAll(reason: string): void {
    for (const key of [...this.pending.keys()]) this.settle(key)?.reject(new SutError('disconnected', reason));
  }

  private requireLink(): AuthenticatedSocket {
    if (!this.link) throw new SutError('disconnected', `head unit "${this.name}" is not connected`);
    return this.link;
  }

  private request(key: string, event: string, payload: unknown, what: string): Promise<unknown> {
    let link: AuthenticatedSocket;
    try {
      link = this.requireLink();
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.pending.has(key)) return Promise.reject(new Error(`${what} is already waiting for a reply`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(key)?.reject(
          new SutError('timeout', `head unit "${this.name}" did not answer ${what} within ${this.limits.turnTimeoutMs} ms`),
        );
      }, this.limits.turnTimeoutMs);
      this.pending.set(key, { resolve, reject, timer, generation: this.linkGeneration });
      link.socket.emit(event, payload);
    });
  }

  /** Removes and returns a waiting request, clearing its timer. */
  private settle(key: string): Pending | undefined {
    const waiting = this.pending.get(key);
    if (!waiting) return undefined;
    clearTimeout(waiting.timer);
    this.pending.delete(key);
    return waiting;
  }

  /** Applies rate and size limits to every message from the unit before it is handled. */
  private receive(payload: unknown, handle: (payload: unknown) => void): void {
    if (!this.limiter.tryTake()) {
      this.counters.rateLimited += 1;
      this.rateLimitExceeded();
      return;
    }
    this.overRate = false;
    const bytes = payloadBytes(payload);
    if (bytes > this.limits.maxMessageBytes) {
      const message = `message of ${bytes} bytes exceeds the limit of ${this.limits.maxMessageBytes} bytes`;
      this.failRoutedOrCount(payload, new SutError('too_large', `head unit "${this.name}" sent a ${message}`), 'too_large', message);
      return;
    }
    handle(payload);
  }

  /**
   * A unit over its rate cannot be trusted to answer anything in order: every turn waiting on it fails
   * as rate_limited, and excess messages are dropped. The unit gets one bridge_error per burst.
   */
  private rateLimitExceeded(): void {
    for (const key of [...this.pending.keys()]) {
      this.settle(key)?.reject(
        new SutError('rate_limited', `head unit "${this.name}" exceeded ${this.limits.maxMessagesPerSecond} messages per second`),
      );
    }
    if (this.overRate) return;
    this.overRate = true;
    this.emitError({ code: 'rate_limited', message: `more than ${this.limits.maxMessagesPerSecond} messages per second; excess messages dropped` });
  }

  private onSessionReady(payload: unknown): void {
    const parsed = SessionReadySchema.safeParse(payload);
    if (!parsed.success) {
      this.failRoutedOrCount(
        payload,
        new SutError('malformed', `head unit "${this.name}" sent an invalid session_ready: ${describeZodError(parsed.error)}`),
        'invalid_message',
        `session_ready: ${describeZodError(parsed.error)}`,
      );
      return;
    }
    const waiting = this.settle(readyKey(parsed.data.sessionId));
    if (waiting) waiting.resolve(undefined);
    else this.counters.ignored += 1;
  }

  private onReply(payload: unknown): void {
    const parsed = AssistantReplySchema.safeParse(payload);
    if (!parsed.success) {
      const details = describeZodError(parsed.error);
      this.failRoutedOrCount(
        payload,
        new SutError('malformed', `head unit "${this.name}" sent an invalid assistant_reply: ${details}`),
        'invalid_message',
        `assistant_reply: ${details}`,
      );
      return;
    }
    const waiting = this.settle(turnKey(parsed.data.sessionId, parsed.data.turn));
    if (!waiting) {
      this.counters.ignored += 1;
      return;
    }
    this.counters.replies += 1;
    waiting.resolve(parsed.data);
  }

  private onUnitError(payload: unknown): void {
    const parsed = BridgeErrorSchema.safeParse(payload);
    const { sessionId } = parsed.success ? parsed.data : looseRoute(payload);
    const description = parsed.success ? `${parsed.data.code}: ${parsed.data.message}` : `invalid bridge_error (${describeZodError(parsed.error)})`;
    if (sessionId === undefined) {
      this.counters.unattributed += 1;
      return;
    }
    let failed = 0;
    for (const key of [readyKey(sessionId), ...this.turnKeysOf(sessionId)]) {
      const waiting = this.settle(key);
      if (!waiting) continue;
      waiting.reject(new SutError('rejected', `head unit "${this.name}" reported an error for session "${sessionId}": ${description}`));
      failed += 1;
    }
    if (failed === 0) this.counters.ignored += 1;
  }

  private turnKeysOf(sessionId: string): string[] {
    const prefix = `turn\u0000${sessionId}\u0000`;
    return [...this.pending.keys()].filter((key) => key.startsWith(prefix));
  }

  /** Fails the request the payload names (session_ready or turn) or, if it names none, counts it and tells the unit. */
  private failRoutedOrCount(payload: unknown, error: SutError, code: BridgeError['code'], message: string): void {
    const { sessionId, turn } = looseRoute(payload);
    const key = sessionId === undefined ? undefined : turn === undefined ? readyKey(sessionId) : turnKey(sessionId, turn);
    const waiting = key === undefined ? undefined : this.settle(key);
    if (waiting) waiting.reject(error);
    else this.counters.unattributed += 1;
    this.emitError({ sessionId, code, message });
  }

  private emitError(error: BridgeError): void {
    this.link?.socket.emit(EVENTS.error, error);
  }
}

/** One conversation multiplexed by sessionId over its unit's socket. */
export class BridgeSession implements HeadUnitSession {
  lost = false;
  private closed = false;

  constructor(
    private readonly unit: BridgeHeadUnitConnection,
    readonly sessionId: string,
    readonly generation: number,
  ) {}

  send(turn: number, text: string, context: ContextVector): Promise<AssistantReply> {
    if (this.closed) return Promise.reject(new Error(`session "${this.sessionId}" is closed`));
    return this.unit.sendTurn(this, { sessionId: this.sessionId, turn, text, context });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unit.endSession(this);
  }
}
