import { z } from 'zod';
import { createRng } from '../domain/rng.ts';
import { meanPower, toFloat, toInt16 } from './dsp.ts';
import { SAMPLE_RATE, VoiceError, pcm16, type Pcm16 } from './types.ts';
import { readWav } from './wav.ts';

/**
 * Cabin acoustics: what happens to the driver's voice between mouth and head-unit microphone.
 * Noise beds are generated deterministically from a seed (or read from the user's WAV), mixed at
 * a chosen SNR, then optionally band-limited (telephone band) and clipped.
 */

export const NOISE_KINDS = ['road', 'wind', 'fan', 'rain'] as const;
export const NoiseKindSchema = z.enum(NOISE_KINDS);
export type NoiseKind = z.infer<typeof NoiseKindSchema>;

export const NoiseSourceSchema = z.union([
  z.strictObject({ kind: NoiseKindSchema, seed: z.number().int().default(1) }),
  /** the user's own recording, 16 kHz mono 16-bit WAV; looped to the speech length */
  z.strictObject({ wav: z.string().min(1) }),
]);
export type NoiseSource = z.infer<typeof NoiseSourceSchema>;

export const BandLimitSchema = z.union([
  z.literal('telephone'),
  z.strictObject({ lowHz: z.number().min(0), highHz: z.number().positive().max(SAMPLE_RATE / 2) }).refine((b) => b.lowHz < b.highHz, 'lowHz must be below highHz'),
]);
export type BandLimit = z.infer<typeof BandLimitSchema>;
export const TELEPHONE_BAND = { lowHz: 300, highHz: 3400 } as const;

const SnrDbSchema = z.number().min(-20).max(60);
/** the sweep entry for speech without noise */
export const CLEAN_LEVEL = 'clean';

export const CabinAcousticsSchema = z.strictObject({
  /**
   * one SNR, or a list to sweep (the campaign runs each conversation once per level, see snrLevels;
   * "clean" in the list is a level without noise); null = no noise
   */
  snrDb: z
    .union([SnrDbSchema, z.array(z.union([SnrDbSchema, z.literal(CLEAN_LEVEL)])).min(1)])
    .nullable()
    .default(null)
    .refine((levels) => !Array.isArray(levels) || new Set(levels).size === levels.length, 'each SNR level may appear only once'),
  noise: NoiseSourceSchema.default({ kind: 'road', seed: 1 }),
  bandLimit: BandLimitSchema.nullable().default(null),
  /** peak level (fraction of full scale) above which samples are clipped, e.g. 0.3 for an overdriven microphone */
  clip: z.number().gt(0).max(1).nullable().default(null),
});
export type CabinAcoustics = z.infer<typeof CabinAcousticsSchema>;

/** The SNR levels a campaign runs: the sweep list, or [null] for clean speech. */
export function snrLevels(acoustics: CabinAcoustics): Array<number | null> {
  if (acoustics.snrDb === null) return [null];
  return Array.isArray(acoustics.snrDb) ? acoustics.snrDb.map((level) => (level === CLEAN_LEVEL ? null : level)) : [acoustics.snrDb];
}

/** A level's name in conversation keys, file names and the summary's bySnr: "clean" or the dB value. */
export function snrLevelName(snrDb: number | null): string {
  return snrDb === null ? CLEAN_LEVEL : String(snrDb);
}

/** A one-pole low-pass filter; cascading shapes the coloured noise spectra. */
function lowPass(signal: Float32Array, cutoffHz: number): Float32Array {
  const alpha = 1 - Math.exp((-2 * Math.PI * cutoffHz) / SAMPLE_RATE);
  const out = new Float32Array(signal.length);
  let state = 0;
  for (let i = 0; i < signal.length; i++) {
    state += alpha * (signal[i] - state);
    out[i] = state;
  }
  return out;
}

function highPass(signal: Float32Array, cutoffHz: number): Float32Array {
  const low = lowPass(signal, cutoffHz);
  return signal.map((v, i) => v - low[i]);
}

function normalizeRms(signal: Float32Array, rms: number): Float32Array {
  const current = Math.sqrt(meanPower(signal));
  if (current === 0) return signal;
  return signal.map((v) => (v * rms) / current);
}

/**
 * Deterministic synthetic cabin noise. road: tyre and drivetrain roar, strongest below 300 Hz, with a slow level swell;
 * wind: band-passed hiss with gusts; fan: broadband hiss plus a blade-rate hum and harmonics;
 * rain: soft hiss with random droplet clicks.
 */
export function generateNoise(kind: NoiseKind, samples: number, seed = 1): Float32Array {
  const rng = createRng(seed * 7919 + NOISE_KINDS.indexOf(kind));
  const white = new Float32Array(samples);
  for (let i = 0; i < samples; i++) white[i] = rng.next() * 2 - 1;
  const t = (i: number) => i / SAMPLE_RATE;
  let out: Float32Array;
  switch (kind) {
    case 'road': {
      // tyre roar falls off at about 6 dB per octave above 300 Hz, so it reaches into the speech band
      const rumble = lowPass(white, 300);
      out = rumble.map((v, i) => v * (1 + 0.3 * Math.sin(2 * Math.PI * 0.4 * t(i))));
      break;
    }
    case 'wind': {
      const band = lowPass(highPass(white, 400), 2500);
      out = band.map((v, i) => v * (1 + 0.6 * Math.sin(2 * Math.PI * 0.25 * t(i) + 1.3) ** 2));
      break;
    }
    case 'fan': {
      const hiss = lowPass(white, 4000);
      out = hiss.map((v, i) => v + 0.4 * Math.sin(2 * Math.PI * 120 * t(i)) + 0.2 * Math.sin(2 * Math.PI * 240 * t(i)));
      break;
    }
    case 'rain': {
      const hiss = highPass(white, 1000);
      const drops = new Float32Array(samples);
      for (let i = 0; i < samples; i++) if (rng.next() < 0.002) for (let k = 0; k < 40 && i + k < samples; k++) drops[i + k] += (rng.next() * 2 - 1) * Math.exp(-k / 8) * 4;
      out = hiss.map((v, i) => v * 0.5 + drops[i]);
      break;
    }
  }
  return normalizeRms(out, 0.1);
}

/** Noise of the requested length from a source; user WAVs are looped. */
export async function noiseBed(source: NoiseSource, samples: number): Promise<Float32Array> {
  if ('kind' in source) return generateNoise(source.kind, samples, source.seed);
  const recorded = toFloat((await readWav(source.wav)).samples);
  if (meanPower(recorded) === 0) throw new VoiceError(`${source.wav}: the noise recording is silent`);
  const out = new Float32Array(samples);
  for (let i = 0; i < samples; i++) out[i] = recorded[i % recorded.length];
  return out;
}

/** 10·log10(P_signal / P_noise) over the whole signals. */
export function measureSnrDb(signal: Float32Array | Int16Array, noise: Float32Array | Int16Array): number {
  return 10 * Math.log10(meanPower(signal) / meanPower(noise));
}

/** Loud noise would push the mix past full scale; the mix is scaled down to this peak instead (like a microphone's gain control). */
const MIX_PEAK = 0.95;

/**
 * Adds `noise` to `speech` scaled so the SNR (speech power over the whole utterance against noise
 * power) is `snrDb`. If the sum would clip, the whole mix is scaled by `gain` (< 1), which keeps the
 * SNR. Returns the mix, the noise as added (before `gain`) and `gain`.
 */
export function mixAtSnr(speech: Float32Array, noise: Float32Array, snrDb: number): { mix: Float32Array; scaledNoise: Float32Array; gain: number } {
  if (noise.length < speech.length) throw new VoiceError(`noise bed is shorter (${noise.length} samples) than the speech (${speech.length})`);
  const speechPower = meanPower(speech);
  if (speechPower === 0) throw new VoiceError('cannot mix at an SNR: the speech is silent');
  const noisePower = meanPower(noise.subarray(0, speech.length));
  const noiseGain = Math.sqrt(speechPower / (noisePower * 10 ** (snrDb / 10)));
  const scaledNoise = new Float32Array(speech.length);
  const mix = new Float32Array(speech.length);
  let peak = 0;
  for (let i = 0; i < speech.length; i++) {
    scaledNoise[i] = noise[i] * noiseGain;
    mix[i] = speech[i] + scaledNoise[i];
    peak = Math.max(peak, Math.abs(mix[i]));
  }
  const gain = peak > MIX_PEAK ? MIX_PEAK / peak : 1;
  if (gain < 1) for (let i = 0; i < mix.length; i++) mix[i] *= gain;
  return { mix, scaledNoise, gain };
}

/** Second-order Butterworth sections (RBJ biquads) for the band limit. */
function biquad(signal: Float32Array, type: 'low' | 'high', cutoffHz: number): Float32Array {
  const w0 = (2 * Math.PI * cutoffHz) / SAMPLE_RATE;
  const alpha = Math.sin(w0) / Math.SQRT2;
  const cos = Math.cos(w0);
  const b0 = type === 'low' ? (1 - cos) / 2 : (1 + cos) / 2;
  const b1 = type === 'low' ? 1 - cos : -(1 + cos);
  const b2 = b0;
  const a0 = 1 + alpha;
  const a1 = -2 * cos;
  const a2 = 1 - alpha;
  const out = new Float32Array(signal.length);
  let x1 = 0, x2 = 0, y1 = 0, y2 = 0;
  for (let i = 0; i < signal.length; i++) {
    const x = signal[i];
    const y = (b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2) / a0;
    out[i] = y;
    x2 = x1; x1 = x; y2 = y1; y1 = y;
  }
  return out;
}

export function bandLimit(signal: Float32Array, band: BandLimit): Float32Array {
  const { lowHz, highHz } = band === 'telephone' ? TELEPHONE_BAND : band;
  let out = signal;
  if (lowHz > 0) out = biquad(biquad(out, 'high', lowHz), 'high', lowHz);
  if (highHz < SAMPLE_RATE / 2) out = biquad(biquad(out, 'low', highHz), 'low', highHz);
  return out;
}

export function clip(signal: Float32Array, level: number): Float32Array {
  return signal.map((v) => (v > level ? level : v < -level ? -level : v));
}

/** Applies the cabin to clean speech at one SNR level (null = no noise). Deterministic for a given config. */
export async function applyCabinAcoustics(speech: Pcm16, acoustics: CabinAcoustics, snrDb: number | null): Promise<Pcm16> {
  let signal = toFloat(speech.samples);
  if (snrDb !== null) signal = mixAtSnr(signal, await noiseBed(acoustics.noise, signal.length), snrDb).mix;
  if (acoustics.bandLimit) signal = bandLimit(signal, acoustics.bandLimit);
  if (acoustics.clip !== null) signal = clip(signal, acoustics.clip);
  return pcm16(toInt16(signal));
}
