import { io, type Socket } from 'socket.io-client';
import { AUDIO_EVENTS } from './protocol/audio.ts';
import {
  BRIDGE_PROTOCOL,
  BridgeErrorSchema,
  EVENTS,
  HelloAckSchema,
  SessionEndSchema,
  SessionStartSchema,
  UserTurnSchema,
  VehicleContextEnvelopeSchema,
  type AssistantReplyInput,
  type BridgeError,
  type Capabilities,
  type Hello,
  type HelloAck,
} from './protocol/bridge.ts';
import type { ContextVector } from './protocol/context.ts';
import { checkStructure, MAX_MESSAGE_DEPTH } from './protocol/structure.ts';
import { DriverAudioInbox, streamSpeech, type DriverUtterance } from './audio.ts';
import { errorMessage, guarded } from './guard.ts';
import { describeZodError } from './validation.ts';

/** Redial delays after the bench hung up (replaced, or the bench restarted): doubling from the first to the cap. */
export const REDIAL_BACKOFF_MS = { first: 1_000, max: 30_000 } as const;
/**
 * The first dial-in: a bench that does not answer hello with hello_ack within connectTimeoutMs is dialled again,
 * after these delays (doubling), up to HANDSHAKE_ATTEMPTS attempts in all; each retry is told through onLinkEvent.
 */
export const HANDSHAKE_BACKOFF_MS = { first: 1_000, max: 8_000 } as const;
export const HANDSHAKE_ATTEMPTS = 3;
/** Delays that double from `first` up to `max`, for the handshake retries and the redials alike: `next()` is the delay to wait now. */
function doublingBackoff(limits: { first: number; max: number }): { next(): number; reset(): void } {
  let delay = limits.first;
  return {
    next() {
      const now = delay;
      delay = Math.min(limits.max, delay * 2);
      return now;
    },
    reset: () => void (delay = limits.first),
  };
}
/** A link that lasted this long resets the backoff; a unit hung up sooner (e.g. two units fighting over one name) keeps backing off. */
const STABLE_LINK_MS = 60_000;
/** A user_turn whose text is empty is a spoken turn: its words are in the driver audio sent just before it. */
export const SPOKEN_TURN_TEXT = '';

/** The reply a head unit gives to one turn (the client adds sessionId and turn). */
export type HeadUnitReply = Omit<AssistantReplyInput, 'sessionId' | 'turn'> & {
  /** the spoken reply, 16 kHz mono s16le PCM: the client streams it to the bench (units that declare audio) */
  speech?: Uint8Array;
};

/** A spoken turn's driver audio (units that declare audio and let the client collect it). */
export interface SpokenTurn {
  audio: DriverUtterance;
}

/** What a head unit implements; connectHeadUnit dials it in to the bench and calls it for every message. */
export interface HeadUnitHandler {
  /** announced in hello; `build` (optional) names the exact build, recorded with every run (icabench compare lists what it fixed and regressed) */
  readonly unit: { name: string; version: string; build?: string };
  /** declared in hello; the bench sends audio, vehicle context and tool sessions only to units that declare them */
  readonly capabilities: Capabilities;
  startSession(sessionId: string, context: ContextVector): Promise<void> | void;
  /**
   * One user turn. `text` is empty for a spoken turn; then `spoken.audio` holds the driver's speech (when the
   * client collects audio, see BridgeClientOptions.audio). `context` is the context at this turn.
   */
  handleTurn(sessionId: string, turn: number, text: string, context: ContextVector | undefined, spoken?: SpokenTurn): Promise<HeadUnitReply>;
  endSession(sessionId: string): Promise<void> | void;
  /** vehicle context from the bench: a CAN frames batch, to validate with VehicleContextMessageSchema; null = every session */
  handleVehicleContext?(sessionId: string | null, payload: unknown): void;
}

/** Something that carries the unit's audio events on the client's socket (following reconnects), instead of the built-in collector. */
export interface AudioBinding {
  bind(socket: { emit(event: string, ...args: unknown[]): unknown; on(event: string, listener: (...args: any[]) => void): unknown; off(event: string, listener: (...args: any[]) => void): unknown }): void;
}

export interface BridgeClientOptions {
  /** the bench's bridge URL, e.g. http://127.0.0.1:7311 */
  url: string;
  token: string;
  handler: HeadUnitHandler;
  /** dial again after the link drops (a standalone head unit); off for in-process use */
  reconnect?: boolean;
  /** how long the first connection + hello may take, per attempt (default 10 s) */
  connectTimeoutMs?: number;
  /** how many times the first hello is tried before connectHeadUnit gives up (default HANDSHAKE_ATTEMPTS), with HANDSHAKE_BACKOFF_MS between */
  handshakeAttempts?: number;
  /** errors the bench reports about this unit (rate limit, oversized or invalid messages, replaced) */
  onBridgeError?: (error: BridgeError) => void;
  /** the link's story for the unit's log: dropped, redialling in N ms, dialled in again */
  onLinkEvent?: (message: string) => void;
  /** redial backoff (default REDIAL_BACKOFF_MS) */
  redialBackoffMs?: { first: number; max: number };
  /**
   * Audio of a unit that declares `capabilities.audio`. Default: the client collects the driver's audio per turn,
   * hands it to handleTurn as `spoken`, and streams the reply's `speech`. An AudioBinding takes the audio events
   * over instead (the bench's reference unit brings its own voice front end).
   */
  audio?: AudioBinding | { driverAudioTimeoutMs?: number; realtimeSpeech?: boolean };
  /**
   * Protocol extensions the unit speaks (e.g. icabench-tools/1, toolsExtension): capabilities added to hello, and
   * handlers for the extension's bench events, guarded and structure-checked like the core events.
   */
  extensions?: BridgeClientExtension;
}

export interface BridgeClientExtension {
  capabilities: Partial<Hello['capabilities']>;
  handlers: Record<string, (payload: unknown, emit: (event: string, payload: unknown) => void) => unknown>;
}

export interface BridgeClient {
  /** the limits the bench announced in hello_ack */
  readonly limits: HelloAck['limits'];
  readonly connected: boolean;
  close(): Promise<void>;
}

/** What the bench sends is small and shallow; anything else is refused before it is read. */
const INBOUND_STRUCTURE = { maxDepth: MAX_MESSAGE_DEPTH, maxEntries: 50_000, maxStringChars: 1024 * 1024 };

const isBinding = (audio: BridgeClientOptions['audio']): audio is AudioBinding => typeof (audio as AudioBinding | undefined)?.bind === 'function';

/**
 * The head-unit side of the bridge: dials in to the bench, says hello, and routes session_start, user_turn,
 * session_end and vehicle_context (validated) to `handler`, and its replies back as assistant_reply. A handler
 * that throws becomes bridge_error `internal` for that session; nothing the bench sends can stop the process.
 * Replies are not validated here; the bench is the authority and reports a malformed reply as that turn's failure.
 *
 * With `reconnect`, the unit dials in again whenever the link ends: socket.io's own reconnection after a lost
 * transport, and a redial with doubling backoff after the bench hung up (another connection took over the unit's
 * name, or the bench restarted).
 */
export function connectHeadUnit(options: BridgeClientOptions): Promise<BridgeClient> {
  const { handler } = options;
  const reconnect = options.reconnect ?? false;
  const socket: Socket = io(options.url, {
    transports: ['websocket'],
    reconnection: reconnect,
    forceNew: true,
  });
  const hello: Hello = { protocol: BRIDGE_PROTOCOL, token: options.token, unit: handler.unit, capabilities: { ...handler.capabilities, ...options.extensions?.capabilities } };
  const reportInvalid = (event: string, details: string, sessionId?: string) =>
    socket.emit(EVENTS.error, { sessionId, code: 'invalid_message', message: `${event}: ${details}` } satisfies BridgeError);
  const reportInternal = (sessionId: string, error: unknown) =>
    socket.emit(EVENTS.error, { sessionId, code: 'internal', message: error instanceof Error ? error.message : String(error) } satisfies BridgeError);
  const linkEvent = (message: string) => options.onLinkEvent?.(message);
  /** every handler is guarded and checks the message's shape first: nothing the bench sends can stop the unit's process */
  const on = (event: string, handle: (payload: unknown) => unknown) =>
    socket.on(
      event,
      guarded(
        (error) => linkEvent(`handling ${event} failed: ${errorMessage(error)}`),
        (payload: unknown) => {
          const violation = checkStructure(payload, INBOUND_STRUCTURE);
          if (violation) return reportInvalid(event, violation.message);
          return handle(payload);
        },
      ),
    );

  // audio: a binding of the caller's, or the built-in collector for a unit that declares audio
  let inbox: DriverAudioInbox | null = null;
  const audioOptions = isBinding(options.audio) ? {} : (options.audio ?? {});
  if (isBinding(options.audio)) options.audio.bind(socket);
  else if (hello.capabilities.audio) {
    inbox = new DriverAudioInbox((event, details) => linkEvent(`dropped a malformed ${event} from the bench: ${details}`));
    const audio = inbox;
    on(AUDIO_EVENTS.chunk, (payload) => audio.chunk(payload));
    on(AUDIO_EVENTS.end, (payload) => audio.end(payload));
  }

  let closing = false;
  let linkedAt = 0;
  const redialBackoff = doublingBackoff(options.redialBackoffMs ?? REDIAL_BACKOFF_MS);
  let redialTimer: ReturnType<typeof setTimeout> | null = null;
  socket.on('connect', () => socket.emit(EVENTS.hello, hello));
  socket.on('disconnect', (reason) => {
    // the client's own hang-up (a handshake retry) is no lost link
    if (closing || !reconnect || reason === 'io client disconnect') return;
    if (linkedAt > 0 && Date.now() - linkedAt >= STABLE_LINK_MS) redialBackoff.reset();
    if (reason !== 'io server disconnect') {
      linkEvent(`link to ${options.url} lost (${reason}); reconnecting`);
      return;
    }
    // the bench hung up on purpose: socket.io does not reconnect by itself, so redial with backoff
    const delay = redialBackoff.next();
    linkEvent(`the bench at ${options.url} hung up; redialling in ${delay} ms`);
    redialTimer = setTimeout(() => {
      redialTimer = null;
      if (!closing) socket.connect();
    }, delay);
  });
  socket.on(EVENTS.helloAck, () => {
    if (linkedAt > 0) linkEvent(`dialled in again to ${options.url}`);
    linkedAt = Date.now();
  });

  for (const [event, handle] of Object.entries(options.extensions?.handlers ?? {})) on(event, (payload) => handle(payload, (name, body) => socket.emit(name, body)));

  on(EVENTS.sessionStart, async (payload: unknown) => {
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

  on(EVENTS.userTurn, async (payload: unknown) => {
    const parsed = UserTurnSchema.safeParse(payload);
    if (!parsed.success) return reportInvalid(EVENTS.userTurn, describeZodError(parsed.error));
    const { sessionId, turn, text, context } = parsed.data;
    const spokenTurn = inbox !== null && text === SPOKEN_TURN_TEXT;
    try {
      const spoken = spokenTurn ? { audio: await inbox!.take(sessionId, turn, audioOptions.driverAudioTimeoutMs ?? 10_000) } : undefined;
      const { speech, ...body } = await handler.handleTurn(sessionId, turn, text, context, spoken);
      socket.emit(EVENTS.assistantReply, { ...body, sessionId, turn } satisfies AssistantReplyInput);
      // a unit that declares audio answers a spoken turn with reply audio too (possibly none: audio_end with 0 chunks)
      if (spokenTurn || speech) await streamSpeech(socket, speech ?? new Uint8Array(0), { sessionId, turn, realtime: audioOptions.realtimeSpeech });
    } catch (error) {
      reportInternal(sessionId, error);
    }
  });

  on(EVENTS.sessionEnd, async (payload: unknown) => {
    const parsed = SessionEndSchema.safeParse(payload);
    if (!parsed.success) return reportInvalid(EVENTS.sessionEnd, describeZodError(parsed.error));
    inbox?.forget(parsed.data.sessionId);
    try {
      await handler.endSession(parsed.data.sessionId);
    } catch (error) {
      reportInternal(parsed.data.sessionId, error);
    }
  });

  on(EVENTS.vehicleContext, (payload: unknown) => {
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
      closing = true;
      socket.disconnect();
      reject(new Error(`head unit "${handler.unit.name}" could not dial in to ${options.url}: ${message}`));
    };
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    const attempts = Math.max(1, options.handshakeAttempts ?? HANDSHAKE_ATTEMPTS);
    let attempt = 1;
    const retryBackoff = doublingBackoff(HANDSHAKE_BACKOFF_MS);
    // no hello_ack in time: hang up and dial again after a back-off, until the attempts are used up
    const noAck = () => {
      if (attempt >= attempts) return fail(`no hello_ack within ${timeoutMs} ms in ${attempts} attempt${attempts === 1 ? '' : 's'}`);
      const delay = retryBackoff.next();
      linkEvent(`no hello_ack from ${options.url} within ${timeoutMs} ms (attempt ${attempt} of ${attempts}); dialling again in ${delay} ms`);
      attempt += 1;
      socket.disconnect();
      timer = setTimeout(() => {
        if (closing) return;
        socket.connect();
        timer = setTimeout(noAck, timeoutMs);
      }, delay);
    };
    let timer = setTimeout(noAck, timeoutMs);

    on(EVENTS.error, (payload: unknown) => {
      const parsed = BridgeErrorSchema.safeParse(payload);
      const error: BridgeError = parsed.success ? parsed.data : { code: 'invalid_message', message: `unreadable bridge_error from the bench: ${describeZodError(parsed.error)}` };
      if (!acknowledged) return fail(`${error.code}: ${error.message}`);
      options.onBridgeError?.(error);
    });
    socket.on('connect_error', (error) => {
      if (!acknowledged && !reconnect) fail(error.message);
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
          closing = true;
          if (redialTimer) clearTimeout(redialTimer);
          socket.disconnect();
        },
      });
    });
  });
}

