import {
  AUDIO_CHUNK_BYTES,
  AUDIO_CHUNK_MS,
  AUDIO_EVENTS,
  AUDIO_SAMPLE_RATE,
  AudioChunkSchema,
  AudioEndSchema,
  type AudioChunk,
  type AudioChunkInput,
  type AudioEnd,
} from './protocol/audio.ts';
import { describeZodError } from './validation.ts';

/** The driver's speech for one spoken turn, as the unit received it: 16 kHz mono s16le PCM. */
export interface DriverUtterance {
  pcm: Uint8Array;
  durationMs: number;
  /** chunks received, and chunks the sender's audio_end counted that never arrived */
  chunks: number;
  lostChunks: number;
  reason: AudioEnd['reason'];
}

/** What the SDK needs of a socket to carry audio (a socket.io client socket has it). */
export interface AudioSocket {
  emit(event: string, ...args: unknown[]): unknown;
  on(event: string, listener: (...args: any[]) => void): unknown;
}

const key = (sessionId: string, turn: number) => `${sessionId}\u0000${turn}`;

/**
 * Collects the driver audio the bench streams to the unit (direction to_unit), per session and turn, until its
 * audio_end; `take` hands the utterance to the turn that names it (the bench sends the audio just before its
 * user_turn with empty text). Malformed audio messages are reported and dropped, as the protocol says.
 */
export class DriverAudioInbox {
  private readonly open = new Map<string, { parts: Uint8Array[]; chunks: number }>();
  private readonly done = new Map<string, DriverUtterance>();
  private readonly waiting = new Map<string, (utterance: DriverUtterance) => void>();

  constructor(private readonly onInvalid: (event: string, details: string) => void) {}

  /** Feeds a raw audio_chunk message. */
  chunk(raw: unknown): void {
    const parsed = AudioChunkSchema.safeParse(raw);
    if (!parsed.success) return this.onInvalid(AUDIO_EVENTS.chunk, describeZodError(parsed.error));
    const chunk: AudioChunk = parsed.data;
    if (chunk.direction !== 'to_unit') return;
    const k = key(chunk.sessionId, chunk.turn);
    const entry = this.open.get(k) ?? { parts: [], chunks: 0 };
    entry.parts.push(chunk.data);
    entry.chunks += 1;
    this.open.set(k, entry);
  }

  /** Feeds a raw audio_end message: the utterance is complete. */
  end(raw: unknown): void {
    const parsed = AudioEndSchema.safeParse(raw);
    if (!parsed.success) return this.onInvalid(AUDIO_EVENTS.end, describeZodError(parsed.error));
    const end = parsed.data;
    if (end.direction !== 'to_unit') return;
    const k = key(end.sessionId, end.turn);
    const entry = this.open.get(k) ?? { parts: [], chunks: 0 };
    this.open.delete(k);
    const pcm = concat(entry.parts);
    const utterance: DriverUtterance = {
      pcm,
      durationMs: (pcm.length / 2 / AUDIO_SAMPLE_RATE) * 1000,
      chunks: entry.chunks,
      lostChunks: Math.max(0, end.chunks - entry.chunks),
      reason: end.reason,
    };
    const waiter = this.waiting.get(k);
    if (waiter) {
      this.waiting.delete(k);
      waiter(utterance);
    } else this.done.set(k, utterance);
  }

  /** The utterance of this turn, waiting up to `timeoutMs` for its audio_end. */
  take(sessionId: string, turn: number, timeoutMs: number): Promise<DriverUtterance> {
    const k = key(sessionId, turn);
    const ready = this.done.get(k);
    if (ready) {
      this.done.delete(k);
      return Promise.resolve(ready);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(k);
        reject(new Error(`session ${sessionId} turn ${turn}: no driver audio_end within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(k, (utterance) => {
        clearTimeout(timer);
        resolve(utterance);
      });
    });
  }

  /** Forgets a session's audio (session_end). */
  forget(sessionId: string): void {
    for (const k of [...this.open.keys(), ...this.done.keys()]) if (k.startsWith(`${sessionId}\u0000`)) (this.open.delete(k), this.done.delete(k));
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export interface SpeakOptions {
  sessionId: string;
  turn: number;
  /** pace chunks at real time (20 ms apart) like a loudspeaker; default false (as fast as possible) */
  realtime?: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Streams the unit's spoken reply (16 kHz mono s16le PCM) to the bench as audio_chunk messages of at most 20 ms,
 * then audio_end; with no PCM it sends audio_end with zero chunks, so the bench never waits out a timeout.
 */
export async function streamSpeech(socket: AudioSocket, pcm: Uint8Array, options: SpeakOptions): Promise<void> {
  if (pcm.length % 2 !== 0) throw new Error(`reply speech has ${pcm.length} bytes; 16-bit PCM has an even count`);
  const startedAt = Date.now();
  let seq = 0;
  for (let offset = 0; offset < pcm.length; offset += AUDIO_CHUNK_BYTES, seq++) {
    if (options.realtime) {
      const due = startedAt + seq * AUDIO_CHUNK_MS - Date.now();
      if (due > 0) await sleep(due);
    }
    const data = pcm.subarray(offset, offset + AUDIO_CHUNK_BYTES);
    const chunk: AudioChunkInput = {
      sessionId: options.sessionId,
      turn: options.turn,
      direction: 'to_bench',
      seq,
      offsetMs: (offset / 2 / AUDIO_SAMPLE_RATE) * 1000,
      sentAt: Date.now(),
      sampleRate: AUDIO_SAMPLE_RATE,
      encoding: 'pcm_s16le',
      data: Buffer.from(data),
    };
    socket.emit(AUDIO_EVENTS.chunk, chunk);
  }
  const end: AudioEnd = {
    sessionId: options.sessionId,
    turn: options.turn,
    direction: 'to_bench',
    chunks: seq,
    durationMs: (pcm.length / 2 / AUDIO_SAMPLE_RATE) * 1000,
    sentAt: Date.now(),
    reason: 'completed',
  };
  socket.emit(AUDIO_EVENTS.end, end);
}
