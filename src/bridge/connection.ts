import type { Socket } from 'socket.io';
import type { ContextVector } from '../domain/context.ts';
import type { ProtocolAnomalies } from '../domain/conversation.ts';
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
import { bridgeStructureLimits, checkStructure, type StructureLimits } from '../protocol/structure.ts';
import { SutError, type HeadUnitConnection, type HeadUnitSession } from '../headunit/types.ts';
import { errorMessage, guarded } from './guard.ts';
import { payloadBytes, RateLimiter } from './limits.ts';
import { SocketRelay } from './socket-relay.ts';

export interface BridgeLimits {
  maxMessageBytes: number;
  maxMessagesPerSecond: number;
  turnTimeoutMs: number;
}

/** What the bench counted on one unit's links since it first dialled in; nothing it receives goes uncounted. */
export interface BridgeUnitStats {
  sessionsOpened: number;
  /** session_ready and assistant_reply messages that answered a request the bench was waiting on */
  replies: number;
  /** replies (or session_ready) for a turn already answered or failed */
  duplicateReplies: number;
  /** replies (or session_ready) for a request that had timed out or was cut off by a lost link (also when they come over the next connection) */
  lateReplies: number;
  /** replies naming a turn the bench never asked in that session */
  wrongTurnReplies: number;
  /** messages for a session of this unit that failed their schema, a structural limit or the size limit */
  invalidMessages: number;
  /** messages the bench could not tie to any session of this unit (no or unknown sessionId, or an error for a session with nothing pending) */
  unattributed: number;
  /** unsolicited messages dropped over maxMessagesPerSecond (replies to the bench's own requests are never dropped) */
  dropped: number;
  /** bench-side exceptions in a handler of this unit's socket, contained to that socket */
  contained: number;
  /** messages a connection of this unit sent before its hello (a socket.io client flushing its buffer on reconnect), counted whether kept or not */
  beforeHello: number;
}

export type StrayKind = 'duplicate' | 'late' | 'wrong_turn' | 'invalid';

/** Why the bench had stopped waiting for a request a late reply answers. */
export type LateCause = 'timeout' | 'link_lost';

/**
 * An anomaly of a session that arrived after the session was closed (and its conversation recorded),
 * or — `disconnected` / `replaced` — a session whose opening was cut off by the link going away.
 */
export interface AfterCloseAnomaly {
  sessionId: string;
  kind: StrayKind | 'disconnected' | 'replaced';
  /** the turn the message named; null for session_ready or when it named none */
  turn: number | null;
  /** for a late reply: ms after the bench stopped waiting (the request's deadline, or the moment its link was lost) */
  lateMs: number | null;
  /** for a late reply: why the bench had stopped waiting */
  cause: LateCause | null;
}

/** A message a connection sent before its hello, kept (within EARLY_MESSAGES_KEPT) to be recorded and handled once the hello succeeds. */
export interface EarlyMessage {
  event: string;
  /** the payload when it passed the structural and size limits; undefined when it did not (`refused` says why) */
  payload: unknown;
  refused: string | null;
}

/** What a connection sent before its hello: the messages kept, and how many were not kept. */
export interface EarlyMessages {
  kept: readonly EarlyMessage[];
  notKept: number;
}

/**
 * A message of a unit that came before its hello, as recorded: the session and turn it named (if any) and its
 * content, cut to BEFORE_HELLO_CONTENT_CHARS characters.
 */
export interface BeforeHelloAnomaly {
  sessionId: string | null;
  event: string;
  turn: number | null;
  content: string;
}

/** How much of a message sent before hello the record keeps. */
export const BEFORE_HELLO_CONTENT_CHARS = 2_000;

/** A socket that passed the hello handshake, with the identity it announced. */
export interface AuthenticatedSocket {
  socket: Socket;
  name: string;
  version: string;
  capabilities: Capabilities;
  connectedAt: Date;
  /** the peer's address and port, e.g. 127.0.0.1:52114 */
  address: string;
}

/** Why a link ended; `replaced` carries the address of the connection that took over. */
export type LinkLoss = { kind: 'disconnected'; reason: string } | { kind: 'replaced'; by: string };

interface Pending {
  resolve(value: unknown): void;
  reject(error: SutError): void;
  timer: NodeJS.Timeout;
  generation: number;
}

const readyKey = (sessionId: string) => `ready\u0000${sessionId}`;
const turnKey = (sessionId: string, turn: number) => `turn\u0000${sessionId}\u0000${turn}`;

/** Longer than any session id the bench hands out (SessionStartSchema): not echoed, not looked up. */
const MAX_SESSION_ID_CHARS = 200;
/** Closed sessions remembered for attributing late and duplicate replies; older ones count as unattributed. */
const CLOSED_SESSIONS_KEPT = 4096;

/**
 * Reads sessionId/turn from a payload that may be anything, to route it before it is validated.
 * It reads two top-level properties only, so it is safe on a value of any depth.
 */
function looseRoute(payload: unknown): { sessionId?: string; turn?: number } {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return {};
  const { sessionId, turn } = payload as { sessionId?: unknown; turn?: unknown };
  return {
    sessionId: typeof sessionId === 'string' && sessionId.length <= MAX_SESSION_ID_CHARS ? sessionId : undefined,
    turn: typeof turn === 'number' && Number.isInteger(turn) ? turn : undefined,
  };
}

/** `cut_off`: the link the request went out on was lost before the answer came; `gaveUpAt`: when the bench stopped waiting. */
type RequestState = { status: 'pending' | 'answered' | 'failed' | 'timed_out' | 'cut_off' | 'late'; deadline: number; sentAt: number; gaveUpAt: number | null };

/** @internal What the bench asked in one session and how each request ended, so a stray reply can be classified. */
export class SessionLedger {
  ready: RequestState | null = null;
  readonly turns = new Map<number, RequestState>();
  pending = 0;
  closed = false;
  linkLost: ProtocolAnomalies['linkLost'] = null;
  readonly counts = { duplicateReplies: 0, wrongTurnReplies: 0, invalidMessages: 0 };
  /** stray replies while open, newest last (for timeout messages) */
  readonly strays: { kind: StrayKind; turn: number | null; at: number }[] = [];

  constructor(
    readonly sessionId: string,
    readonly generation: number,
  ) {}

  request(turn: number | null, timeoutMs: number): RequestState {
    const now = performance.now();
    const state: RequestState = { status: 'pending', sentAt: now, deadline: now + timeoutMs, gaveUpAt: null };
    if (turn === null) this.ready = state;
    else this.turns.set(turn, state);
    this.pending += 1;
    return state;
  }

  settle(state: RequestState, status: 'answered' | 'failed' | 'timed_out' | 'cut_off'): void {
    if (state.status === 'pending') this.pending -= 1;
    state.status = status;
    if (status === 'timed_out') state.gaveUpAt = state.deadline;
    else if (status === 'cut_off') state.gaveUpAt = performance.now();
  }

  snapshot(): ProtocolAnomalies {
    return { ...this.counts, linkLost: this.linkLost };
  }
}

/** Why a timed-out request may have gone unanswered: replies the unit sent for other turns meanwhile. */
function straysSince(ledger: SessionLedger, since: number): string {
  const strays = ledger.strays.filter((s) => s.at >= since && s.kind !== 'invalid');
  if (strays.length === 0) return '';
  const what = (s: (typeof strays)[number]) =>
    `${s.turn === null ? 'session_ready' : `a reply for turn ${s.turn}`} (${s.kind === 'wrong_turn' ? 'a turn the bench never asked' : s.kind === 'late' ? 'late' : 'already answered'})`;
  const shown = strays.slice(-3).map(what).join(', ');
  return `; meanwhile it sent ${shown}${strays.length > 3 ? ` and ${strays.length - 3} more` : ''}`;
}

/**
 * The bench's handle on one head unit (identified by its announced name) dialled in over the bridge.
 * If the unit reconnects, the connection follows the new socket; sessions opened on the old socket
 * are gone with it (the unit lost their state) and fail as disconnected.
 *
 * Inbound messages pass, in order: routing (two top-level fields), the rate limit for unsolicited
 * messages only, the structural limits (iterative scan), the size limit, then their schema.
 */
export class BridgeHeadUnitConnection implements HeadUnitConnection {
  private link: AuthenticatedSocket | null = null;
  private linkGeneration = 0;
  private limiter: RateLimiter;
  /** inside a burst over the rate limit; the unit is told once per burst */
  private overRate = false;
  private readonly structure: StructureLimits;
  private readonly pending = new Map<string, Pending>();
  private readonly sessions = new Map<string, BridgeSession>();
  private readonly ledgers = new Map<string, SessionLedger>();
  private readonly closedLedgers = new Map<string, SessionLedger>();
  private readonly counters: BridgeUnitStats = {
    sessionsOpened: 0,
    replies: 0,
    duplicateReplies: 0,
    lateReplies: 0,
    wrongTurnReplies: 0,
    invalidMessages: 0,
    unattributed: 0,
    dropped: 0,
    contained: 0,
    beforeHello: 0,
  };
  private readonly beforeHelloListeners = new Set<(anomaly: BeforeHelloAnomaly) => void>();
  private readonly afterCloseListeners = new Set<(anomaly: AfterCloseAnomaly) => void>();
  private readonly linkLostListeners = new Set<(why: string) => void>();
  /** the unit's audio streams (src/protocol/audio.ts), following its socket across reconnects */
  readonly audio: SocketRelay;

  constructor(
    readonly name: string,
    private readonly limits: BridgeLimits,
    /** a bench-side exception contained to one socket, for the log */
    private readonly reportIncident: (message: string) => void = () => undefined,
  ) {
    this.limiter = new RateLimiter(limits.maxMessagesPerSecond);
    this.structure = bridgeStructureLimits(limits.maxMessageBytes);
    this.audio = new SocketRelay(`head unit "${name}"`, {
      admit: (_event, args) => this.admitAudio(args[0]),
      onListenerError: (error, event) => this.contain(this.link?.socket ?? null, event, error),
    });
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

  /** Anomalies of sessions that were already closed when they arrived (their conversation is recorded); returns the unsubscribe. */
  onAfterClose(listener: (anomaly: AfterCloseAnomaly) => void): () => void {
    this.afterCloseListeners.add(listener);
    return () => this.afterCloseListeners.delete(listener);
  }

  /** The link went away (disconnected or replaced): what waits on it outside the core events (a protocol extension's requests) fails at once; returns the unsubscribe. */
  onLinkLost(listener: (why: string) => void): () => void {
    this.linkLostListeners.add(listener);
    return () => this.linkLostListeners.delete(listener);
  }

  /** Messages a connection of this unit sent before its hello, as they are recorded once it is bound; returns the unsubscribe. */
  onBeforeHello(listener: (anomaly: BeforeHelloAnomaly) => void): () => void {
    this.beforeHelloListeners.add(listener);
    return () => this.beforeHelloListeners.delete(listener);
  }

  /**
   * Binds a freshly authenticated socket; a previous socket of this unit is told it was replaced and hung up.
   * What the socket sent before its hello (`early`) is then recorded and handled like any later message of it:
   * a reply the unit's client flushed on reconnect is classified (late, duplicate, …) by its session and turn.
   */
  attach(link: AuthenticatedSocket, early: EarlyMessages = { kept: [], notKept: 0 }): void {
    const previous = this.link;
    if (previous) {
      this.detach(previous.socket, { kind: 'replaced', by: link.address });
      const notice: BridgeError = { code: 'replaced', message: `another connection of head unit "${this.name}" dialled in from ${link.address}; this one is hung up` };
      previous.socket.emit(EVENTS.error, notice);
      previous.socket.disconnect(true);
    }
    this.link = link;
    this.linkGeneration += 1;
    this.limiter = new RateLimiter(this.limits.maxMessagesPerSecond);
    this.overRate = false;
    const generation = this.linkGeneration;
    const socket = link.socket;
    const listen = (event: string, handle: (payload: unknown) => void) =>
      socket.on(
        event,
        guarded(
          (error) => this.contain(socket, event, error),
          (payload: unknown) => {
            if (this.linkGeneration === generation) this.receive(event, payload, handle);
          },
        ),
      );
    listen(EVENTS.sessionReady, (p) => this.onSessionReady(p));
    listen(EVENTS.assistantReply, (p) => this.onReply(p));
    listen(EVENTS.error, (p) => this.onUnitError(p));
    for (const [event, entry] of this.extensions) this.bindExtension(socket, generation, event, entry);
    this.audio.bind(socket);
    this.receiveEarly(early);
  }

  /**
   * Records each message sent before hello (counted, its content kept) and hands it to the handler of its event
   * through the same limits as any message. Nothing can be pending on a link that was just bound, so a reply among
   * them is always a stray: late when its request was cut off by the previous link or timed out.
   */
  private receiveEarly(early: EarlyMessages): void {
    this.counters.beforeHello += early.kept.length + early.notKept;
    const core: Record<string, (payload: unknown) => void> = {
      [EVENTS.sessionReady]: (p) => this.onSessionReady(p),
      [EVENTS.assistantReply]: (p) => this.onReply(p),
      [EVENTS.error]: (p) => this.onUnitError(p),
    };
    for (const message of early.kept) {
      const route = looseRoute(message.payload);
      const content = message.refused ?? previewOf(message.payload);
      for (const listener of this.beforeHelloListeners) listener({ sessionId: route.sessionId ?? null, event: message.event, turn: route.turn ?? null, content });
      if (message.refused !== null) {
        this.noteInvalid(route.sessionId);
        continue;
      }
      const extension = this.extensions.get(message.event);
      const handle = core[message.event] ?? (extension ? (p: unknown) => extension.handlers.forEach((h) => h(p)) : undefined);
      // audio and unknown events before hello are recorded and counted, not acted on
      if (handle) this.receive(message.event, message.payload, handle);
    }
  }

  private readonly extensions = new Map<string, { solicited: (payload: unknown) => boolean; handlers: Set<(payload: unknown) => void> }>();

  /**
   * A protocol extension's event from the unit (e.g. icabench-tools/1, src/protocol/tools.ts), with the same
   * structure, size and rate limits as the core events; a message the extension is waiting for (`solicited`) is never
   * rate-limited. Survives reconnects. Returns the unsubscribe.
   */
  listenExtension(event: string, solicited: (payload: unknown) => boolean, handle: (payload: unknown) => void): () => void {
    let entry = this.extensions.get(event);
    if (!entry) {
      entry = { solicited, handlers: new Set() };
      this.extensions.set(event, entry);
      if (this.link) this.bindExtension(this.link.socket, this.linkGeneration, event, entry);
    }
    entry.handlers.add(handle);
    const handlers = entry.handlers;
    return () => handlers.delete(handle);
  }

  /** Sends a protocol extension's event to the unit; throws SutError when it is not connected. */
  emitExtension(event: string, payload: unknown): void {
    this.requireLink().socket.emit(event, payload);
  }

  private bindExtension(socket: Socket, generation: number, event: string, entry: { solicited: (payload: unknown) => boolean; handlers: Set<(payload: unknown) => void> }): void {
    socket.on(
      event,
      guarded(
        (error) => this.contain(socket, event, error),
        (payload: unknown) => {
          if (this.linkGeneration !== generation) return;
          this.receive(event, payload, (p) => entry.handlers.forEach((h) => h(p)), entry.solicited(payload));
        },
      ),
    );
  }

  /** The socket went away: every turn and session opening still waiting on it fails as disconnected. */
  detach(socket: Socket, loss: LinkLoss): void {
    if (!this.link || this.link.socket !== socket) return;
    const generation = this.linkGeneration;
    this.link = null;
    this.audio.unbind(socket);
    this.linkGeneration += 1;
    const why = loss.kind === 'replaced' ? `replaced by a new connection from ${loss.by}` : `disconnected: ${loss.reason}`;
    for (const [key, waiting] of this.pending) {
      if (waiting.generation !== generation) continue;
      this.settle(key)?.reject(new SutError('disconnected', `head unit "${this.name}" ${why}`));
    }
    for (const listener of this.linkLostListeners) listener(`head unit "${this.name}" ${why}`);
    for (const ledger of this.ledgers.values()) if (ledger.generation === generation) ledger.linkLost = loss.kind;
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
    const ledger = new SessionLedger(sessionId, generation);
    this.ledgers.set(sessionId, ledger);
    try {
      await this.request(ledger, null, EVENTS.sessionStart, start, `session_start of "${sessionId}"`);
    } catch (error) {
      // no session reaches the conversation: what the ledger holds so far is reported with later strays
      this.closeLedger(ledger, true);
      throw error;
    }
    const session = new BridgeSession(this, sessionId, generation, ledger);
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
    return this.request(session.ledger, turn.turn, EVENTS.userTurn, turn, `turn ${turn.turn} of "${turn.sessionId}"`) as Promise<AssistantReply>;
  }

  /** @internal used by BridgeSession */
  endSession(session: BridgeSession): void {
    if (this.sessions.get(session.sessionId) === session) this.sessions.delete(session.sessionId);
    this.closeLedger(session.ledger, false);
    if (!session.lost && session.generation === this.linkGeneration && this.link) {
      this.link.socket.emit(EVENTS.sessionEnd, { sessionId: session.sessionId, reason: 'completed' });
    }
  }

  /** Rejects everything still waiting (the bench is shutting down). */
  abortAll(reason: string): void {
    for (const key of [...this.pending.keys()]) this.settle(key)?.reject(new SutError('disconnected', reason));
  }

  /** Last-resort containment: a bench-side exception while handling this unit's socket ends that socket, never the process. */
  contain(socket: Socket | null, event: string, error: unknown): void {
    this.counters.contained += 1;
    this.reportIncident(`head unit "${this.name}": handling ${event} failed on the bench (${errorMessage(error)}); that connection is hung up`);
    if (!socket) return;
    socket.emit(EVENTS.error, { code: 'internal', message: `the bench failed on your ${event} message and hangs up this connection` } satisfies BridgeError);
    socket.disconnect(true);
  }

  private closeLedger(ledger: SessionLedger, reportHeld: boolean): void {
    if (ledger.closed) return;
    ledger.closed = true;
    // a session lost with its link may have been opened again under the same id meanwhile
    if (this.ledgers.get(ledger.sessionId) === ledger) this.ledgers.delete(ledger.sessionId);
    this.closedLedgers.set(ledger.sessionId, ledger);
    if (this.closedLedgers.size > CLOSED_SESSIONS_KEPT) this.closedLedgers.delete(this.closedLedgers.keys().next().value!);
    if (!reportHeld) return;
    const held: [StrayKind, number][] = [
      ['duplicate', ledger.counts.duplicateReplies],
      ['wrong_turn', ledger.counts.wrongTurnReplies],
      ['invalid', ledger.counts.invalidMessages],
    ];
    for (const [kind, n] of held) for (let i = 0; i < n; i++) this.publishAfterClose({ sessionId: ledger.sessionId, kind, turn: null, lateMs: null, cause: null });
    if (ledger.linkLost) this.publishAfterClose({ sessionId: ledger.sessionId, kind: ledger.linkLost, turn: null, lateMs: null, cause: null });
  }

  private ledgerOf(sessionId: string | undefined): SessionLedger | undefined {
    if (sessionId === undefined) return undefined;
    return this.ledgers.get(sessionId) ?? this.closedLedgers.get(sessionId);
  }

  private requireLink(): AuthenticatedSocket {
    if (!this.link) throw new SutError('disconnected', `head unit "${this.name}" is not connected`);
    return this.link;
  }

  private request(ledger: SessionLedger, turn: number | null, event: string, payload: unknown, what: string): Promise<unknown> {
    let link: AuthenticatedSocket;
    try {
      link = this.requireLink();
    } catch (error) {
      return Promise.reject(error);
    }
    const key = turn === null ? readyKey(ledger.sessionId) : turnKey(ledger.sessionId, turn);
    if (this.pending.has(key)) return Promise.reject(new Error(`${what} is already waiting for a reply`));
    const state = ledger.request(turn, this.limits.turnTimeoutMs);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(key)?.reject(new SutError('timeout', `head unit "${this.name}" did not answer ${what} within ${this.limits.turnTimeoutMs} ms${straysSince(ledger, state.sentAt)}`));
      }, this.limits.turnTimeoutMs);
      this.pending.set(key, {
        resolve: (value) => {
          ledger.settle(state, 'answered');
          resolve(value);
        },
        reject: (error) => {
          ledger.settle(state, error.kind === 'timeout' ? 'timed_out' : error.kind === 'disconnected' ? 'cut_off' : 'failed');
          reject(error);
        },
        timer,
        generation: this.linkGeneration,
      });
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

  /** The request a message answers, if the bench is waiting for it: such a message is never rate-limited. */
  private solicitedKey(event: string, route: { sessionId?: string; turn?: number }): string | undefined {
    if (route.sessionId === undefined) return undefined;
    if (event === EVENTS.sessionReady) return readyKey(route.sessionId);
    if (event === EVENTS.assistantReply && route.turn !== undefined) return turnKey(route.sessionId, route.turn);
    if (event === EVENTS.error) return this.ledgers.get(route.sessionId)?.pending ? readyKey(route.sessionId) : undefined;
    return undefined;
  }

  /** Routing, the rate limit (unsolicited messages only), the structural and size limits, then the handler. */
  private receive(event: string, payload: unknown, handle: (payload: unknown) => void, solicitedByExtension = false): void {
    const route = looseRoute(payload);
    const key = this.solicitedKey(event, route);
    const solicited = solicitedByExtension || (key !== undefined && (event === EVENTS.error || this.pending.has(key)));
    if (!solicited && !this.admitUnsolicited()) return;
    const violation = checkStructure(payload, this.structure);
    if (violation) {
      this.refuse(event, route, violation.code, violation.message);
      return;
    }
    const bytes = payloadBytes(payload);
    if (bytes > this.limits.maxMessageBytes) {
      this.refuse(event, route, 'too_large', `message of ${bytes} bytes exceeds the limit of ${this.limits.maxMessageBytes} bytes`);
      return;
    }
    handle(payload);
  }

  /** Takes a token for an unsolicited message; over the rate the message is dropped and the unit told once per burst. */
  private admitUnsolicited(): boolean {
    if (this.limiter.tryTake()) {
      this.overRate = false;
      return true;
    }
    this.counters.dropped += 1;
    if (!this.overRate) {
      this.overRate = true;
      this.emitError({
        code: 'rate_limited',
        message: `more than ${this.limits.maxMessagesPerSecond} unsolicited messages per second; the excess is dropped (replies to the bench's requests never are)`,
      });
    }
    return false;
  }

  /** Audio for a session the bench has open is the unit's answer to a spoken turn; any other audio is unsolicited. */
  private admitAudio(payload: unknown): boolean {
    const route = looseRoute(payload);
    const open = route.sessionId !== undefined && this.ledgers.get(route.sessionId)?.closed === false;
    if (!open && !this.admitUnsolicited()) return false;
    const violation = checkStructure(payload, this.structure);
    if (!violation) return true;
    this.noteInvalid(route.sessionId);
    this.emitError({ sessionId: route.sessionId, code: violation.code, message: `audio: ${violation.message}` });
    return false;
  }

  /**
   * A message that broke a limit or its schema: fails the request it answers (session_ready or turn),
   * is counted for its session or as unattributed, and the unit is told.
   */
  private refuse(event: string, route: { sessionId?: string; turn?: number }, code: BridgeError['code'], message: string): void {
    const { sessionId, turn } = route;
    const key = sessionId === undefined ? undefined : event === EVENTS.assistantReply && turn !== undefined ? turnKey(sessionId, turn) : readyKey(sessionId);
    const waiting = key === undefined ? undefined : this.settle(key);
    if (waiting) {
      const kind = code === 'too_large' ? 'too_large' : 'malformed';
      waiting.reject(new SutError(kind, `head unit "${this.name}" sent an invalid ${event}: ${message}`));
    }
    this.noteInvalid(sessionId);
    this.emitError({ sessionId, code, message: `${event}: ${message}` });
  }

  private noteInvalid(sessionId: string | undefined): void {
    const ledger = this.ledgerOf(sessionId);
    if (!ledger) {
      this.counters.unattributed += 1;
      return;
    }
    this.counters.invalidMessages += 1;
    if (ledger.closed) this.publishAfterClose({ sessionId: ledger.sessionId, kind: 'invalid', turn: null, lateMs: null, cause: null });
    else {
      ledger.counts.invalidMessages += 1;
      ledger.strays.push({ kind: 'invalid', turn: null, at: performance.now() });
    }
  }

  /**
   * A valid reply or session_ready nothing was waiting for: late (its request timed out, or its link was lost —
   * the reply may come over the unit's next connection), duplicate, for a turn never asked, or for no known session.
   */
  private stray(sessionId: string, turn: number | null): void {
    const ledger = this.ledgerOf(sessionId);
    if (!ledger) {
      this.counters.unattributed += 1;
      return;
    }
    const state = turn === null ? ledger.ready : ledger.turns.get(turn);
    let kind: StrayKind;
    let lateMs: number | null = null;
    let cause: LateCause | null = null;
    if (!state) kind = 'wrong_turn';
    else if ((state.status === 'timed_out' || state.status === 'cut_off') && state.gaveUpAt !== null) {
      kind = 'late';
      cause = state.status === 'timed_out' ? 'timeout' : 'link_lost';
      lateMs = Math.max(0, Math.round(performance.now() - state.gaveUpAt));
      state.status = 'late';
    } else kind = 'duplicate';
    if (kind === 'late') this.counters.lateReplies += 1;
    else if (kind === 'wrong_turn') this.counters.wrongTurnReplies += 1;
    else this.counters.duplicateReplies += 1;
    if (ledger.closed || kind === 'late') {
      this.publishAfterClose({ sessionId, kind, turn, lateMs, cause });
      return;
    }
    if (kind === 'wrong_turn') ledger.counts.wrongTurnReplies += 1;
    else ledger.counts.duplicateReplies += 1;
    ledger.strays.push({ kind, turn, at: performance.now() });
  }

  private publishAfterClose(anomaly: AfterCloseAnomaly): void {
    for (const listener of this.afterCloseListeners) listener(anomaly);
  }

  private onSessionReady(payload: unknown): void {
    const parsed = SessionReadySchema.safeParse(payload);
    if (!parsed.success) {
      this.refuse(EVENTS.sessionReady, looseRoute(payload), 'invalid_message', describeZodError(parsed.error));
      return;
    }
    const waiting = this.settle(readyKey(parsed.data.sessionId));
    if (!waiting) return this.stray(parsed.data.sessionId, null);
    this.counters.replies += 1;
    waiting.resolve(undefined);
  }

  private onReply(payload: unknown): void {
    const parsed = AssistantReplySchema.safeParse(payload);
    if (!parsed.success) {
      this.refuse(EVENTS.assistantReply, looseRoute(payload), 'invalid_message', describeZodError(parsed.error));
      return;
    }
    const waiting = this.settle(turnKey(parsed.data.sessionId, parsed.data.turn));
    if (!waiting) return this.stray(parsed.data.sessionId, parsed.data.turn);
    this.counters.replies += 1;
    waiting.resolve(parsed.data);
  }

  private onUnitError(payload: unknown): void {
    const parsed = BridgeErrorSchema.safeParse(payload);
    const sessionId = parsed.success ? parsed.data.sessionId : looseRoute(payload).sessionId;
    const description = parsed.success ? `${parsed.data.code}: ${parsed.data.message}` : `invalid bridge_error (${describeZodError(parsed.error)})`;
    let failed = 0;
    if (sessionId !== undefined) {
      for (const key of [readyKey(sessionId), ...this.turnKeysOf(sessionId)]) {
        const waiting = this.settle(key);
        if (!waiting) continue;
        waiting.reject(new SutError('rejected', `head unit "${this.name}" reported an error for session "${sessionId}": ${description}`));
        failed += 1;
      }
    }
    if (failed === 0) this.counters.unattributed += 1;
  }

  private turnKeysOf(sessionId: string): string[] {
    const ledger = this.ledgers.get(sessionId);
    if (!ledger) return [];
    return [...ledger.turns].filter(([, state]) => state.status === 'pending').map(([turn]) => turnKey(sessionId, turn));
  }

  private emitError(error: BridgeError): void {
    this.link?.socket.emit(EVENTS.error, error);
  }
}

/** One conversation multiplexed by sessionId over its unit's socket. */
export class BridgeSession implements HeadUnitSession {
  lost = false;
  private closed = false;
  private recorded: ProtocolAnomalies | null = null;

  constructor(
    private readonly unit: BridgeHeadUnitConnection,
    readonly sessionId: string,
    readonly generation: number,
    /** @internal what the bench asked in this session and what came back */
    readonly ledger: SessionLedger,
  ) {}

  send(turn: number, text: string, context: ContextVector): Promise<AssistantReply> {
    if (this.closed) return Promise.reject(new Error(`session "${this.sessionId}" is closed`));
    return this.unit.sendTurn(this, { sessionId: this.sessionId, turn, text, context });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.recorded = this.ledger.snapshot();
    this.unit.endSession(this);
  }

  /** Anomalies up to close (later ones go to BridgeHeadUnitConnection.onAfterClose). */
  anomalies(): ProtocolAnomalies {
    return this.recorded ?? this.ledger.snapshot();
  }
}

/** A kept message's content for the record: its JSON text, cut to BEFORE_HELLO_CONTENT_CHARS (it passed the structural limits). */
function previewOf(payload: unknown): string {
  const text = payload === undefined ? '' : (JSON.stringify(payload) ?? '');
  return text.length <= BEFORE_HELLO_CONTENT_CHARS ? text : `${text.slice(0, BEFORE_HELLO_CONTENT_CHARS)}… (${text.length} characters)`;
}
