import { AUDIO_CHUNK_MS, AUDIO_CHUNK_SAMPLES, AUDIO_SAMPLE_RATE, type AudioChunk, type AudioChunkInput, type AudioDirection, type AudioEnd } from '../protocol/audio.ts';
import { VoiceError, pcm16, type Pcm16 } from './types.ts';

/** Sub-millisecond wall clock (ms since the epoch), so latencies between two events are precise. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * One end of an audio channel between bench and head unit (src/protocol/audio.ts messages).
 * Implementations: socket.io (socket-audio-link.ts) and an in-process pair (createAudioLinkPair).
 * Listeners receive validated messages with the local receive time.
 */
export interface AudioLink {
  sendChunk(chunk: AudioChunkInput): void;
  endOfUtterance(end: AudioEnd): void;
  onChunk(listener: (chunk: AudioChunk, receivedAt: number) => void): () => void;
  onEndOfUtterance(listener: (end: AudioEnd, receivedAt: number) => void): () => void;
  /**
   * Links whose messages carry no session or turn (the acoustic link: sound in the air) label the next
   * utterance they hear with this turn; links that carry ids leave it out.
   */
  expect?(sessionId: string, turn: number): void;
  /** Links that own devices or processes (the acoustic link's player and recorder) release them. */
  close?(): Promise<void>;
  /** Links over audio devices (the acoustic link): why they cannot carry audio any more (a device failed), or null. */
  failed?(): Error | null;
}

/** Two connected in-process links (bench end, unit end): for an in-process head unit and for tests. */
export function createAudioLinkPair(): [AudioLink, AudioLink] {
  type Side = { chunk: Set<(c: AudioChunk, t: number) => void>; end: Set<(e: AudioEnd, t: number) => void> };
  const sides: [Side, Side] = [
    { chunk: new Set(), end: new Set() },
    { chunk: new Set(), end: new Set() },
  ];
  const make = (own: Side, peer: Side): AudioLink => ({
    sendChunk: (chunk) => {
      const data = typeof chunk.data === 'string' ? new Uint8Array(Buffer.from(chunk.data, 'base64')) : chunk.data instanceof ArrayBuffer ? new Uint8Array(chunk.data) : chunk.data;
      const message = { ...chunk, data } as AudioChunk;
      queueMicrotask(() => peer.chunk.forEach((l) => l(message, nowMs())));
    },
    endOfUtterance: (end) => queueMicrotask(() => peer.end.forEach((l) => l(end, nowMs()))),
    onChunk: (listener) => (own.chunk.add(listener), () => own.chunk.delete(listener)),
    onEndOfUtterance: (listener) => (own.end.add(listener), () => own.end.delete(listener)),
  });
  return [make(sides[0], sides[1]), make(sides[1], sides[0])];
}

export interface StreamOptions {
  sessionId: string;
  turn: number;
  direction: AudioDirection;
  /** pace chunks at real time (20 ms apart) like a live microphone; false sends as fast as possible */
  realtime: boolean;
  /** stop early (barge-in); the end message then says "interrupted" */
  signal?: AbortSignal;
}

export interface StreamedUtterance {
  chunks: number;
  /** local time the first chunk was sent */
  startedAt: number;
  /** local time the end-of-utterance was sent: the end of speech as the receiver sees it */
  endedAt: number;
  interrupted: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends PCM as 20 ms chunks followed by an end-of-utterance message. */
export async function streamUtterance(link: AudioLink, pcm: Pcm16, options: StreamOptions): Promise<StreamedUtterance> {
  if (pcm.samples.length === 0) throw new VoiceError(`turn ${options.turn}: empty audio, nothing to stream`);
  const startedAt = nowMs();
  let seq = 0;
  let interrupted = false;
  for (let offset = 0; offset < pcm.samples.length; offset += AUDIO_CHUNK_SAMPLES) {
    if (options.signal?.aborted) {
      interrupted = true;
      break;
    }
    if (options.realtime) {
      const due = startedAt + seq * AUDIO_CHUNK_MS - nowMs();
      if (due > 0) await sleep(due);
    }
    const samples = pcm.samples.subarray(offset, offset + AUDIO_CHUNK_SAMPLES);
    link.sendChunk({
      sessionId: options.sessionId,
      turn: options.turn,
      direction: options.direction,
      seq,
      offsetMs: (offset / AUDIO_SAMPLE_RATE) * 1000,
      sentAt: nowMs(),
      sampleRate: AUDIO_SAMPLE_RATE,
      encoding: 'pcm_s16le',
      data: new Uint8Array(Int16Array.from(samples).buffer),
    });
    seq += 1;
  }
  if (options.realtime && !interrupted) {
    // the last chunk's audio finishes playing one chunk after it was sent
    const due = startedAt + seq * AUDIO_CHUNK_MS - nowMs();
    if (due > 0) await sleep(due);
  }
  const endedAt = nowMs();
  link.endOfUtterance({
    sessionId: options.sessionId,
    turn: options.turn,
    direction: options.direction,
    chunks: seq,
    durationMs: (Math.min(pcm.samples.length, seq * AUDIO_CHUNK_SAMPLES) / AUDIO_SAMPLE_RATE) * 1000,
    sentAt: endedAt,
    reason: interrupted ? 'interrupted' : 'completed',
  });
  return { chunks: seq, startedAt, endedAt, interrupted };
}

export interface ReceivedUtterance {
  pcm: Pcm16;
  /** local receive time of the first chunk, null when the utterance had no audio */
  firstChunkAt: number | null;
  endAt: number;
  chunks: number;
  /** chunks announced by the end message but never received */
  missingChunks: number;
  reason: AudioEnd['reason'];
}

interface Pending {
  chunks: Map<number, AudioChunk>;
  firstChunkAt: number | null;
  end: { message: AudioEnd; at: number } | null;
  waiters: Array<(u: ReceivedUtterance) => void>;
}

/**
 * Collects incoming utterances per (session, turn) from a link, so a receiver can ask for one
 * that has already arrived or is still arriving.
 */
export class UtteranceCollector {
  private readonly pending = new Map<string, Pending>();
  private readonly unsubscribe: Array<() => void>;
  private readonly chunkListeners = new Set<(chunk: AudioChunk, receivedAt: number) => void>();

  constructor(link: AudioLink, private readonly direction: AudioDirection) {
    this.unsubscribe = [
      link.onChunk((chunk, at) => {
        if (chunk.direction !== direction) return;
        const entry = this.entry(chunk.sessionId, chunk.turn);
        entry.firstChunkAt ??= at;
        entry.chunks.set(chunk.seq, chunk);
        this.chunkListeners.forEach((l) => l(chunk, at));
      }),
      link.onEndOfUtterance((end, at) => {
        if (end.direction !== direction) return;
        const entry = this.entry(end.sessionId, end.turn);
        entry.end = { message: end, at };
        const utterance = this.assemble(entry);
        entry.waiters.splice(0).forEach((resolve) => resolve(utterance));
      }),
    ];
  }

  private key(sessionId: string, turn: number): string {
    return `${sessionId}\u0000${turn}`;
  }

  private entry(sessionId: string, turn: number): Pending {
    const key = this.key(sessionId, turn);
    let entry = this.pending.get(key);
    if (!entry) {
      entry = { chunks: new Map(), firstChunkAt: null, end: null, waiters: [] };
      this.pending.set(key, entry);
    }
    return entry;
  }

  private assemble(entry: Pending): ReceivedUtterance {
    const ordered = [...entry.chunks.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c.data);
    const bytes = ordered.reduce((n, d) => n + d.length, 0);
    const samples = new Int16Array(bytes / 2);
    let offset = 0;
    for (const data of ordered) {
      samples.set(new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)), offset);
      offset += data.length / 2;
    }
    const end = entry.end as NonNullable<Pending['end']>;
    return {
      pcm: pcm16(samples),
      firstChunkAt: entry.firstChunkAt,
      endAt: end.at,
      chunks: entry.chunks.size,
      missingChunks: Math.max(0, end.message.chunks - entry.chunks.size),
      reason: end.message.reason,
    };
  }

  /** Called for every chunk of this collector's direction as it arrives (barge-in detection, live meters). */
  onChunk(listener: (chunk: AudioChunk, receivedAt: number) => void): () => void {
    this.chunkListeners.add(listener);
    return () => this.chunkListeners.delete(listener);
  }

  /** First-chunk time of an utterance still arriving (null if none yet). */
  firstChunkAt(sessionId: string, turn: number): number | null {
    return this.pending.get(this.key(sessionId, turn))?.firstChunkAt ?? null;
  }

  /** Resolves with the complete utterance once its end-of-utterance arrives; rejects after `timeoutMs`. */
  take(sessionId: string, turn: number, timeoutMs: number): Promise<ReceivedUtterance> {
    const key = this.key(sessionId, turn);
    const entry = this.entry(sessionId, turn);
    const done = (u: ReceivedUtterance) => {
      this.pending.delete(key);
      return u;
    };
    if (entry.end) return Promise.resolve(done(this.assemble(entry)));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        entry.waiters = entry.waiters.filter((w) => w !== waiter);
        this.pending.delete(key);
        reject(new VoiceError(`session ${sessionId} turn ${turn}: no complete ${this.direction === 'to_bench' ? 'reply' : 'driver'} utterance within ${timeoutMs} ms (${entry.chunks.size} chunks, no end-of-utterance)`));
      }, timeoutMs);
      const waiter = (u: ReceivedUtterance) => {
        clearTimeout(timer);
        resolve(done(u));
      };
      entry.waiters.push(waiter);
    });
  }

  close(): void {
    this.unsubscribe.forEach((u) => u());
    this.pending.clear();
  }
}
