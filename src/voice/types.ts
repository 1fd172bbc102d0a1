/**
 * The voice path's engine roles. Every TTS, STT and VAD implementation has one of these shapes,
 * so an ONNX voice or a Whisper model under models/ slots in beside espeak-ng and pocketsphinx.
 */

/** The bench's one audio format: 16 kHz, mono, signed 16-bit PCM. */
export const SAMPLE_RATE = 16000 as const;

export interface Pcm16 {
  sampleRate: typeof SAMPLE_RATE;
  samples: Int16Array;
}

export function pcm16(samples: Int16Array): Pcm16 {
  return { sampleRate: SAMPLE_RATE, samples };
}

export function durationMs(pcm: Pcm16): number {
  return (pcm.samples.length / pcm.sampleRate) * 1000;
}

/** How a synthetic driver sounds. rate in words per minute, pitch 0–99 (espeak-ng scale). */
export interface VoiceParams {
  voice: string;
  rateWpm: number;
  pitch: number;
  /** amplitude 0–200 (espeak-ng scale) */
  amplitude: number;
}

export interface TtsEngine {
  readonly name: string;
  synthesize(text: string, voice: VoiceParams): Promise<Pcm16>;
}

export interface RecognizedWord {
  word: string;
  startMs: number;
  endMs: number;
}

export interface Transcript {
  text: string;
  words?: RecognizedWord[];
}

export interface TranscribeOptions {
  /** a label for error messages (the WAV path, "turn 3 reply", …) */
  source?: string;
}

export interface SttEngine {
  readonly name: string;
  transcribe(pcm: Pcm16, options?: TranscribeOptions): Promise<Transcript>;
  /** releases temporary files or model sessions */
  dispose?(): Promise<void>;
}

/** A stretch of speech found by voice-activity detection, in ms from the start of the audio. */
export interface SpeechSegment {
  startMs: number;
  endMs: number;
}

export interface VoiceActivityDetector {
  readonly name: string;
  segments(pcm: Pcm16): Promise<SpeechSegment[]>;
  dispose?(): Promise<void>;
}

/** Any failure on the voice path (bad audio, a missing program, an unusable model); names what to fix. */
export class VoiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VoiceError';
  }
}
