import { z } from 'zod';

/**
 * Audio over the bridge (docs/bridge-protocol.md, section "Audio"): 16 kHz mono signed 16-bit
 * little-endian PCM in 20 ms chunks, in both directions, each chunk numbered and time-stamped,
 * and an explicit end-of-utterance message. Validated on receipt like every bridge message.
 */
export const AUDIO_EVENTS = {
  /** one 20 ms chunk of driver speech (bench → unit) or of the assistant's reply (unit → bench) */
  chunk: 'audio_chunk',
  /** the speaker finished (or stopped) this utterance */
  end: 'audio_end',
} as const;

export const AUDIO_SAMPLE_RATE = 16000;
export const AUDIO_CHUNK_MS = 20;
export const AUDIO_CHUNK_SAMPLES = (AUDIO_SAMPLE_RATE * AUDIO_CHUNK_MS) / 1000;
export const AUDIO_CHUNK_BYTES = AUDIO_CHUNK_SAMPLES * 2;

export const AudioDirectionSchema = z.enum(['to_unit', 'to_bench']);
export type AudioDirection = z.infer<typeof AudioDirectionSchema>;

/** PCM bytes: socket.io binary (Buffer / Uint8Array / ArrayBuffer) or base64 text for JSON-only transports. */
export const PcmPayloadSchema = z.union([
  z.instanceof(Uint8Array),
  z.instanceof(ArrayBuffer).transform((b) => new Uint8Array(b)),
  z.base64().transform((s) => new Uint8Array(Buffer.from(s, 'base64'))),
]);

export const AudioChunkSchema = z.object({
  sessionId: z.string().min(1),
  turn: z.number().int().min(0),
  direction: AudioDirectionSchema,
  /** 0, 1, 2, … within one utterance; gaps mean lost chunks */
  seq: z.number().int().min(0),
  /** position of the chunk's first sample in the utterance, ms */
  offsetMs: z.number().min(0),
  /** sender's wall clock (ms since the epoch) when the chunk was sent */
  sentAt: z.number(),
  sampleRate: z.literal(AUDIO_SAMPLE_RATE),
  encoding: z.literal('pcm_s16le'),
  data: PcmPayloadSchema.refine((bytes) => bytes.length > 0 && bytes.length <= AUDIO_CHUNK_BYTES && bytes.length % 2 === 0, {
    message: `expected 2–${AUDIO_CHUNK_BYTES} bytes of 16-bit PCM (at most ${AUDIO_CHUNK_MS} ms), an even count`,
  }),
});
export type AudioChunk = z.output<typeof AudioChunkSchema>;
export type AudioChunkInput = z.input<typeof AudioChunkSchema>;

export const AudioEndSchema = z.object({
  sessionId: z.string().min(1),
  turn: z.number().int().min(0),
  direction: AudioDirectionSchema,
  /** how many chunks the utterance had (lets the receiver detect losses) */
  chunks: z.number().int().min(0),
  durationMs: z.number().min(0),
  sentAt: z.number(),
  /** completed: end of speech; interrupted: the speaker stopped early (barge-in) */
  reason: z.enum(['completed', 'interrupted']).default('completed'),
});
export type AudioEnd = z.output<typeof AudioEndSchema>;
