import { describe, expect, it } from 'vitest';
import {
  CabinAcousticsSchema,
  NOISE_KINDS,
  applyCabinAcoustics,
  bandLimit,
  clip,
  generateNoise,
  measureSnrDb,
  mixAtSnr,
  snrLevels,
} from '../../src/voice/acoustics.ts';
import { meanPower, toFloat } from '../../src/voice/dsp.ts';
import { pcm16 } from '../../src/voice/types.ts';

/** A speech-like test signal: two harmonic tones with a syllable-rate envelope. */
function speechLike(seconds: number): Float32Array {
  return Float32Array.from({ length: seconds * 16000 }, (_, i) => {
    const t = i / 16000;
    return 0.3 * Math.abs(Math.sin(2 * Math.PI * 4 * t)) * (Math.sin(2 * Math.PI * 220 * t) + 0.5 * Math.sin(2 * Math.PI * 1100 * t));
  });
}

function tone(hz: number, seconds = 1): Float32Array {
  return Float32Array.from({ length: seconds * 16000 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * hz * i) / 16000));
}

const rmsDb = (signal: Float32Array) => 10 * Math.log10(meanPower(signal));

describe('noise beds', () => {
  it('are deterministic per seed and differ between seeds and kinds', () => {
    for (const kind of NOISE_KINDS) {
      expect(Array.from(generateNoise(kind, 800, 5))).toEqual(Array.from(generateNoise(kind, 800, 5)));
      expect(Array.from(generateNoise(kind, 800, 5))).not.toEqual(Array.from(generateNoise(kind, 800, 6)));
    }
    expect(Array.from(generateNoise('road', 800, 1))).not.toEqual(Array.from(generateNoise('wind', 800, 1)));
  });

  it('road noise is low-frequency heavy, rain and wind are not', () => {
    const lowShare = (signal: Float32Array) => meanPower(bandLimit(signal, { lowHz: 20, highHz: 400 })) / meanPower(signal);
    expect(lowShare(generateNoise('road', 32000, 2))).toBeGreaterThan(0.35);
    expect(lowShare(generateNoise('rain', 32000, 2))).toBeLessThan(0.1);
    expect(lowShare(generateNoise('wind', 32000, 2))).toBeLessThan(0.2);
  });
});

describe('mixing at an SNR', () => {
  it.each([20, 10, 5, 0, -5])('hits %i dB within 0.1 dB for every noise kind (measured on the 16-bit output)', async (snr) => {
    const clean = pcm16(Int16Array.from(speechLike(2), (v) => Math.round(v * 32768)));
    const speech = toFloat(clean.samples);
    for (const kind of NOISE_KINDS) {
      const acoustics = CabinAcousticsSchema.parse({ snrDb: snr, noise: { kind, seed: 11 } });
      const noisy = await applyCabinAcoustics(clean, acoustics, snr);
      // the mix may have been scaled down for headroom: recover that gain from the pipeline itself
      const { gain } = mixAtSnr(speech, generateNoise(kind, speech.length, 11), snr);
      // the noise actually present is what the 16-bit output holds beyond the (scaled) clean speech
      const added = Float32Array.from(noisy.samples, (v, i) => v / 32768 - gain * speech[i]);
      const speechPart = Float32Array.from(speech, (v) => gain * v);
      expect(Math.abs(measureSnrDb(speechPart, added) - snr)).toBeLessThanOrEqual(0.1);
      expect(Math.max(...noisy.samples.map(Math.abs))).toBeLessThan(32767);
    }
  });

  it('returns the scaled noise it added', () => {
    const { mix, scaledNoise } = mixAtSnr(speechLike(1), generateNoise('fan', 16000, 3), 7.5);
    expect(measureSnrDb(speechLike(1), scaledNoise)).toBeCloseTo(7.5, 6);
    expect(mix[100]).toBeCloseTo(speechLike(1)[100] + scaledNoise[100], 6);
  });

  it('refuses silent speech and short noise with clear messages', () => {
    expect(() => mixAtSnr(new Float32Array(100), generateNoise('road', 100), 10)).toThrow(/speech is silent/);
    expect(() => mixAtSnr(speechLike(1), generateNoise('road', 100), 10)).toThrow(/noise bed is shorter/);
  });
});

describe('band limit and clipping', () => {
  it('the telephone band passes 1 kHz and cuts 100 Hz and 6 kHz', () => {
    const pass = rmsDb(bandLimit(tone(1000), 'telephone')) - rmsDb(tone(1000));
    expect(Math.abs(pass)).toBeLessThan(1);
    expect(rmsDb(bandLimit(tone(100), 'telephone')) - rmsDb(tone(100))).toBeLessThan(-15);
    expect(rmsDb(bandLimit(tone(6000), 'telephone')) - rmsDb(tone(6000))).toBeLessThan(-15);
  });

  it('clips at the given level', () => {
    const clipped = clip(tone(440), 0.2);
    expect(Math.max(...clipped)).toBeCloseTo(0.2, 6);
    expect(Math.min(...clipped)).toBeCloseTo(-0.2, 6);
  });
});

describe('CabinAcousticsSchema', () => {
  it('accepts a sweep and lists its levels', () => {
    const acoustics = CabinAcousticsSchema.parse({ snrDb: [20, 10, 5, 0], noise: { kind: 'wind' }, bandLimit: 'telephone', clip: 0.5 });
    expect(snrLevels(acoustics)).toEqual([20, 10, 5, 0]);
    expect(snrLevels(CabinAcousticsSchema.parse({}))).toEqual([null]);
    expect(snrLevels(CabinAcousticsSchema.parse({ snrDb: 15 }))).toEqual([15]);
  });

  it('rejects bad values and names the field', () => {
    const result = CabinAcousticsSchema.safeParse({ noise: { kind: 'thunder' }, bandLimit: { lowHz: 3000, highHz: 300 } });
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((i) => i.path.join('.')) ?? [];
    expect(paths.some((p) => p.startsWith('noise'))).toBe(true);
    expect(paths.some((p) => p.startsWith('bandLimit'))).toBe(true);
  });
});
