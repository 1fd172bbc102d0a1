import { io } from 'socket.io-client';
import {
  AUDIO_EVENTS,
  BRIDGE_PROTOCOL,
  connectHeadUnit,
  toolsExtension,
  type AudioBinding,
  type BridgeClient,
  type BridgeClientOptions,
  type HeadUnitHandler,
  type ToolAssistant,
} from '../../packages/bridge-sdk/src/index.ts';

/**
 * Units for the conformance tests, built on the SDK: a good unit, and the broken units that each break one rule
 * of the protocol (the conformance kit must fail each on the right check, for its reason).
 */
export const CAPS = { text: true, audio: false, vehicleContext: true, structuredActions: true } as const;

export function goodHandler(overrides: Partial<HeadUnitHandler> = {}): HeadUnitHandler {
  return {
    unit: { name: 'test-unit', version: '1.0' },
    capabilities: CAPS,
    startSession() {},
    async handleTurn(_sessionId, _turn, text, context) {
      if (/range/i.test(text)) {
        const km = context?.vehicle?.rangeKm ?? 312;
        return { text: `Your remaining range is ${km} km.`, actions: [{ type: 'vehicle_info', field: 'range', value: km, unit: 'km' }] };
      }
      return { text: `You said: ${text}`, actions: [] };
    },
    endSession() {},
    ...overrides,
  };
}

/** A tool assistant that opens the sunroof and then says so (valid calls of offered tools). */
export const sunroofAssistant: ToolAssistant = {
  async next({ messages }) {
    return messages.at(-1)?.role === 'tool' ? { content: 'The sunroof is open halfway.', toolCalls: [] } : { content: '', toolCalls: [{ name: 'open_close_sunroof', arguments: { percentage: 50 } }] };
  },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type BrokenUnit = { name: string; check: string; reason: RegExp; connect(url: string, token: string, turnTimeoutMs: number): Promise<{ close(): Promise<void> }> };

const dial = (options: Partial<BridgeClientOptions> & { url: string; token: string; handler: HeadUnitHandler }): Promise<BridgeClient> => connectHeadUnit({ reconnect: true, ...options });

/** Reply audio that breaks the audio protocol: numbered from 5, at 8 kHz, and an audio_end that counts wrong. */
function malformedAudio(): AudioBinding {
  return {
    bind(socket) {
      socket.on(AUDIO_EVENTS.end, (end: { sessionId: string; turn: number; direction: string }) => {
        if (end.direction !== 'to_unit') return;
        setTimeout(() => {
          for (let seq = 5; seq < 8; seq++) socket.emit(AUDIO_EVENTS.chunk, { sessionId: end.sessionId, turn: end.turn, direction: 'to_bench', seq, offsetMs: 0, sentAt: Date.now(), sampleRate: 8000, encoding: 'pcm_s16le', data: Buffer.alloc(640) });
          socket.emit(AUDIO_EVENTS.end, { sessionId: end.sessionId, turn: end.turn, direction: 'to_bench', chunks: 10, durationMs: 60, sentAt: Date.now(), reason: 'completed' });
        }, 50);
      });
    },
  };
}

/** A hand-written text-only unit (no SDK: it sends what the SDK would not) that answers each user_turn with `reply`'s payload. */
function rawUnit(url: string, token: string, name: string, reply: (turn: { sessionId: string; turn: number; text: string }) => unknown): { close(): Promise<void> } {
  const socket = io(url, { transports: ['websocket'], forceNew: true, reconnection: true });
  socket.on('connect', () => socket.emit('hello', { protocol: BRIDGE_PROTOCOL, token, unit: { name, version: '1' }, capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: false } }));
  socket.on('session_start', ({ sessionId }) => socket.emit('session_ready', { sessionId }));
  socket.on('user_turn', (turn) => socket.emit('assistant_reply', reply(turn)));
  socket.on('disconnect', (reason) => reason === 'io server disconnect' && setTimeout(() => socket.connect(), 200));
  return { close: async () => void socket.disconnect() };
}

/** An object nested `levels` deep. */
const nested = (levels: number): unknown => (levels === 0 ? 'bottom' : { inner: nested(levels - 1) });

export const BROKEN_UNITS: BrokenUnit[] = [
  {
    name: 'wrong token',
    check: 'hello',
    reason: /unauthorized: missing or wrong token/,
    connect: async (url) => {
      // the SDK rejects when the bench refuses the hello; the kit has its verdict by then
      await dial({ url, token: 'not-the-token', handler: goodHandler(), reconnect: false }).catch(() => undefined);
      return { close: async () => undefined };
    },
  },
  {
    name: 'missing capability field',
    check: 'capabilities',
    reason: /does not declare structuredActions as a boolean/,
    connect: async (url, token) => {
      // a hand-written client that leaves a flag out (the SDK's types would not let it)
      const socket = io(url, { transports: ['websocket'], forceNew: true, reconnection: true });
      socket.on('connect', () => socket.emit('hello', { protocol: BRIDGE_PROTOCOL, token, unit: { name: 'no-flags', version: '1' }, capabilities: { text: true, audio: false, vehicleContext: false } }));
      socket.on('session_start', ({ sessionId }) => socket.emit('session_ready', { sessionId }));
      socket.on('user_turn', ({ sessionId, turn, text }) => socket.emit('assistant_reply', { sessionId, turn, text: `You said: ${text}`, actions: [] }));
      socket.on('disconnect', (reason) => reason === 'io server disconnect' && setTimeout(() => socket.connect(), 200));
      return { close: async () => void socket.disconnect() };
    },
  },
  {
    // the bench refuses the reply, so the turn is unanswered; reply_schema fails too, on the same problem
    name: 'bad reply schema',
    check: 'text_turn',
    reason: /conformance-a turn 0: reply refused by the bench: invalid_message: .*actions\.0\.reason/,
    connect: (url, token) => dial({ url, token, handler: goodHandler({ handleTurn: async () => ({ text: 'No.', actions: [{ type: 'refusal', reason: 'because' as 'safety' }] }) }) }),
  },
  {
    name: 'oversized reply',
    check: 'text_turn',
    // the bench's default maxMessageBytes is 256 KiB; 400 KB stays under the transport cap, so the bench reads and refuses it
    reason: /conformance-a turn 0: reply refused by the bench: too_large: message of \d+ bytes exceeds the limit of 262144 bytes \(maxMessageBytes\)/,
    connect: async (url, token) => rawUnit(url, token, 'oversized', ({ sessionId, turn }) => ({ sessionId, turn, text: 'Here.', actions: [], state: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`blob${i}`, 'x'.repeat(10_000)])) })),
  },
  {
    name: 'reply nested 40 levels deep',
    check: 'text_turn',
    reason: /conformance-a turn 0: reply refused by the bench: invalid_message: nested deeper than 32 levels/,
    connect: async (url, token) => rawUnit(url, token, 'deep', ({ sessionId, turn }) => ({ sessionId, turn, text: 'Here.', actions: [], state: { deep: nested(40) } })),
  },
  {
    name: 'reply without text',
    check: 'text_turn',
    reason: /conformance-a turn 0: reply refused by the bench: invalid_message: .*text/,
    connect: async (url, token) => rawUnit(url, token, 'textless', ({ sessionId, turn }) => ({ sessionId, turn, text: 42, actions: [] })),
  },
  {
    name: 'link dropped on the request',
    check: 'text_turn',
    reason: /conformance-a turn 0: the link to the unit dropped \d+ ms after the request \(reason: client namespace disconnect\)/,
    connect: async (url, token) => {
      const socket = io(url, { transports: ['websocket'], forceNew: true, reconnection: false });
      socket.on('connect', () => socket.emit('hello', { protocol: BRIDGE_PROTOCOL, token, unit: { name: 'hangs-up', version: '1' }, capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: false } }));
      socket.on('session_start', ({ sessionId }) => socket.emit('session_ready', { sessionId }));
      socket.on('user_turn', () => socket.disconnect());
      return { close: async () => void socket.disconnect() };
    },
  },
  {
    name: 'wrong turn id',
    check: 'turn_ids',
    reason: /user_turn 0 was answered with turn 1/,
    connect: async (url, token) => {
      const socket = io(url, { transports: ['websocket'], forceNew: true, reconnection: true });
      socket.on('connect', () => socket.emit('hello', { protocol: BRIDGE_PROTOCOL, token, unit: { name: 'off-by-one', version: '1' }, capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: false } }));
      socket.on('session_start', ({ sessionId }) => socket.emit('session_ready', { sessionId }));
      socket.on('user_turn', ({ sessionId, turn, text }) => socket.emit('assistant_reply', { sessionId, turn: turn + 1, text: `You said: ${text}`, actions: [] }));
      socket.on('disconnect', (reason) => reason === 'io server disconnect' && setTimeout(() => socket.connect(), 200));
      return { close: async () => void socket.disconnect() };
    },
  },
  {
    name: 'too slow',
    check: 'timing',
    reason: /over the turn timeout of \d+ ms: conformance-a turn 0 after \d+ ms/,
    connect: (url, token, turnTimeoutMs) =>
      dial({
        url,
        token,
        handler: goodHandler({
          async handleTurn(_s, _t, text) {
            // past the limit, well inside the kit's observation window (twice the limit), so only timing fails
            await sleep(turnTimeoutMs + 400);
            return { text: `You said: ${text}`, actions: [] };
          },
        }),
      }),
  },
  {
    name: 'no reconnect',
    check: 'reconnect',
    reason: /did not dial in again within \d+ ms/,
    connect: (url, token) => dial({ url, token, handler: goodHandler(), reconnect: false }),
  },
  {
    name: 'malformed audio',
    check: 'audio',
    reason: /chunk 0: sampleRate: .*expected 16000.*audio_end counts 10 chunks, 3 arrived/,
    connect: (url, token) => dial({ url, token, handler: goodHandler({ capabilities: { ...CAPS, audio: true } }), audio: malformedAudio() }),
  },
  {
    name: 'ignores vehicle context',
    check: 'vehicle_context',
    reason: /remaining range is 173 km .* the answer does not say so/,
    connect: (url, token) => dial({ url, token, handler: goodHandler({ handleTurn: async () => ({ text: 'Your remaining range is 312 km.', actions: [] }) }) }),
  },
  {
    name: 'bad tool call',
    check: 'tools',
    reason: /calls "teleport_car", a tool the kit did not offer/,
    connect: (url, token) =>
      dial({ url, token, handler: goodHandler(), extensions: toolsExtension(() => ({ next: async () => ({ content: '', toolCalls: [{ name: 'teleport_car', arguments: { to: 'Rome' } }] }) })) }),
  },
];
