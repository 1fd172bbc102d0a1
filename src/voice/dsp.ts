/** Small signal-processing helpers shared by TTS, acoustics and metrics. Float signals are in [-1, 1]. */

export function toFloat(samples: Int16Array): Float32Array {
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = samples[i] / 32768;
  return out;
}

/** Converts back to 16-bit with saturation (what a real ADC does at full scale). */
export function toInt16(signal: Float32Array): Int16Array {
  const out = new Int16Array(signal.length);
  for (let i = 0; i < signal.length; i++) {
    const v = Math.round(signal[i] * 32768);
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
  return out;
}

export function meanPower(signal: Float32Array | Int16Array): number {
  if (signal.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < signal.length; i++) sum += signal[i] * signal[i];
  return sum / signal.length;
}

const SINC_HALF_TAPS = 24;

/**
 * Band-limited resampling with a Hann-windowed sinc; the cut-off sits below the lower Nyquist
 * frequency so downsampling (espeak-ng's 22050 Hz to 16 kHz) does not alias.
 */
export function resample(signal: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (fromRate === toRate) return signal.slice();
  const ratio = toRate / fromRate;
  const cutoff = Math.min(1, ratio) * 0.95;
  const outLength = Math.floor(signal.length * ratio);
  const out = new Float32Array(outLength);
  const halfWidth = SINC_HALF_TAPS / cutoff;
  for (let n = 0; n < outLength; n++) {
    const center = n / ratio;
    const first = Math.max(0, Math.ceil(center - halfWidth));
    const last = Math.min(signal.length - 1, Math.floor(center + halfWidth));
    let acc = 0;
    for (let k = first; k <= last; k++) {
      const x = k - center;
      const window = 0.5 + 0.5 * Math.cos((Math.PI * x) / halfWidth);
      const arg = Math.PI * x * cutoff;
      acc += signal[k] * (arg === 0 ? cutoff : (Math.sin(arg) / arg) * cutoff) * window;
    }
    out[n] = acc;
  }
  return out;
}
