import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AUDIO_CHUNK_MS, AUDIO_CHUNK_SAMPLES, AUDIO_SAMPLE_RATE, type AudioChunk, type AudioChunkInput, type AudioDirection, type AudioEnd } from '../protocol/audio.ts';
import { PACAT, missingProgramMessage } from '../system/programs.ts';
import { AUDIO_DEVICE_FIX, CLIP_LEVEL, DEAD_INPUT_PEAK } from '../system/audio-devices.ts';
import { nowMs, type AudioLink } from './audio-link.ts';
import { VoiceError } from './types.ts';

/**
 * The audio devices one end of an acoustic link uses (PulseAudio/PipeWire names: a sink to play on,
 * a source to record from; `icabench voice devices` lists them). On a hardware-in-the-loop rig the
 * bench plays through an artificial mouth into the unit's microphones and records the unit's
 * loudspeaker or line-out.
 */
export const AcousticDevicesSchema = z.strictObject({
  /** sink the utterances are played on */
  output: z.string().min(1),
  /** source the replies are recorded from */
  input: z.string().min(1),
});
export type AcousticDevices = z.infer<typeof AcousticDevicesSchema>;

/** How speech is found in the recorded signal (an energy detector: it runs per 20 ms frame while recording). */
export const CaptureVadSchema = z.strictObject({
  /** a frame louder than this (dBFS) is speech */
  thresholdDb: z.number().max(0).default(-45),
  /** an utterance ends after this much non-speech */
  hangoverMs: z.number().int().positive().default(600),
  /** shorter bursts are dropped as clicks or bumps */
  minSpeechMs: z.number().int().positive().default(150),
  /** audio kept before the first speech frame, so soft onsets are not cut */
  prerollMs: z.number().int().min(0).default(100),
});
export type CaptureVad = z.infer<typeof CaptureVadSchema>;

/** A problem of the rig, not of the unit: the level on a device is unusable. */
export interface RigFault {
  kind: 'clipping' | 'dead_input';
  device: string;
  detail: string;
}

export interface AcousticLinkOptions {
  devices: AcousticDevices;
  /** the direction of what this end plays: to_unit on the bench, to_bench on a unit */
  speaks: AudioDirection;
  vad?: Partial<CaptureVad>;
  /**
   * output + input device latency (ms), from a loopback measurement (measureLoopbackLatency): subtracted
   * from capture times, so a reply's start is timed where it left the unit's loudspeaker
   */
  latencyMs?: number;
  onRigFault?: (fault: RigFault) => void;
  /** the config fields that name the devices (`voice.link.output`, `headUnit.acoustic.input`…): a failure names its field */
  fields?: { output: string; input: string };
  /** environment of the player and recorder processes (PULSE_SERVER, XDG_RUNTIME_DIR in tests) */
  env?: NodeJS.ProcessEnv;
}

const FRAME_SAMPLES = AUDIO_CHUNK_SAMPLES; // 20 ms frames, the bridge's chunk size

/** Plays raw PCM written to its stdin on one sink (pacat, Debian: pulseaudio-utils). */
function startPlayer(device: string, env: NodeJS.ProcessEnv | undefined, onFailure: (error: VoiceError) => void, field?: string): ChildProcessWithoutNullStreams {
  // a 100 ms buffer rides out a late write on a busy machine (an underrun would cut gaps into the speech);
  // the loopback calibration plays through the same buffer, so it is part of the measured latency
  const args = ['--playback', `--device=${device}`, '--raw', '--format=s16le', `--rate=${AUDIO_SAMPLE_RATE}`, '--channels=1', '--latency-msec=100'];
  const child = spawn(PACAT.binary, args, { env: env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdin.on('error', () => undefined);
  child.on('error', (error: NodeJS.ErrnoException) =>
    onFailure(new VoiceError(error.code === 'ENOENT' ? missingProgramMessage(PACAT) : `${PACAT.binary} could not be started: ${error.message}`)),
  );
  child.on('close', (code, signal) => {
    if (code !== 0 && signal === null) onFailure(deviceFailure(device, 'playback', Buffer.concat(stderr).toString('utf8') || `pacat exit ${code}`, field));
  });
  return child;
}

/** A device that failed, as one line: the device (and the config field naming it), what it was doing, the sound server's first line, and the fix. */
function deviceFailure(device: string, doing: 'playback' | 'record', cause: string, field?: string): VoiceError {
  const first = cause.trim().split('\n')[0]?.trim() || 'it failed';
  return new VoiceError(`audio device "${device}" (${field ? `${field}, ` : ''}${doing}): ${first.replace(/\.$/, '')}: ${AUDIO_DEVICE_FIX}`);
}

interface Capture {
  /** resolves when the first audio arrives; rejects when the recorder fails first */
  started: Promise<void>;
  /** why the recorder stopped by itself after it started, or null while it records */
  failure(): VoiceError | null;
  stop(): Promise<void>;
}

/**
 * Records raw PCM from one source through node-record-lpcm16 (with the pacat recorder module beside
 * this file); `onData` gets each read with its arrival time on the bench clock.
 */
function startCapture(device: string, env: NodeJS.ProcessEnv | undefined, onData: (data: Buffer, arrivedAt: number) => void, options: { timeoutMs?: number; field?: string } = {}): Capture {
  const { timeoutMs = 5_000, field } = options;
  const require = createRequire(import.meta.url);
  const { record } = require('node-record-lpcm16') as { record: (o: object) => { process: ChildProcess; stream(): Readable; stop(): void } };
  const recording = record({ recorder: fileURLToPath(new URL('./pulse-recorder.cjs', import.meta.url)), device, env, sampleRate: AUDIO_SAMPLE_RATE, channels: 1, audioType: 'raw' });
  const stream = recording.stream();
  // the recorder's own words (e.g. "Connection failure: Connection refused"), bounded: node-record-lpcm16 reports only the exit code
  let stderr = '';
  recording.process.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(0, 2_000)));
  let failed: VoiceError | null = null;
  const closed = new Promise<void>((resolve) => recording.process.once('close', () => resolve()));
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new VoiceError(`audio device "${device}" (record): no audio recorded within ${timeoutMs} ms: ${AUDIO_DEVICE_FIX}`)), timeoutMs);
    stream.once('data', () => (clearTimeout(timer), resolve()));
    recording.process.once('error', (error: NodeJS.ErrnoException) =>
      (clearTimeout(timer), reject(new VoiceError(error.code === 'ENOENT' ? missingProgramMessage(PACAT) : `${PACAT.binary} could not be started: ${error.message}`))),
    );
    stream.on('error', (message: unknown) => {
      clearTimeout(timer);
      // the exit is reported once the process closed, so its stderr is complete
      failed ??= deviceFailure(device, 'record', stderr || String(message), field);
      reject(failed);
    });
  });
  started.catch(() => undefined);
  stream.on('data', (data: Buffer) => onData(data, nowMs()));
  return {
    started,
    failure: () => failed,
    stop: async () => {
      if (recording.process.exitCode === null && recording.process.signalCode === null) recording.stop();
      await closed;
    },
  };
}

/** Cuts raw reads into whole 20 ms frames, each with the time its first sample was recorded. */
class FrameSplitter {
  private remainder = Buffer.alloc(0);

  constructor(private readonly onFrame: (samples: Int16Array, at: number) => void) {}

  push(data: Buffer, arrivedAt: number): void {
    const bytes = this.remainder.length > 0 ? Buffer.concat([this.remainder, data]) : data;
    const whole = bytes.length - (bytes.length % (FRAME_SAMPLES * 2));
    this.remainder = Buffer.from(bytes.subarray(whole));
    const samples = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + whole));
    const frames = samples.length / FRAME_SAMPLES;
    for (let i = 0; i < frames; i++) {
      // the newest sample arrived now; earlier frames of the same read were recorded that much before
      this.onFrame(samples.subarray(i * FRAME_SAMPLES, (i + 1) * FRAME_SAMPLES), arrivedAt - ((frames - i) * FRAME_SAMPLES * 1000) / AUDIO_SAMPLE_RATE);
    }
  }
}

function frameLevelDb(frame: Int16Array): number {
  let sum = 0;
  for (const s of frame) sum += s * s;
  const rms = Math.sqrt(sum / Math.max(1, frame.length));
  return rms === 0 ? -120 : 20 * Math.log10(rms / 32768);
}

interface Frame {
  samples: Int16Array;
  /** when its first sample reached the recorder, on the bench clock */
  at: number;
}

/** One utterance heard on the input: its frames, and the turn it belongs to once claimed. */
interface Heard {
  frames: Frame[];
  speechStartAt: number;
  lastSpeechAt: number;
  ended: boolean;
  label: { sessionId: string; turn: number } | null;
  emitted: number;
  peak: number;
}

/**
 * An AudioLink over real audio devices. What this end sends is played on `devices.output`; what it
 * hears on `devices.input` is cut into utterances by an energy detector. Air carries no session or
 * turn ids, so the link is half-duplex and labels by order: it does not listen while it plays, and
 * `expect(session, turn)` gives the next (or the one still unclaimed) heard utterance that label.
 * Chunk times are capture times minus the calibrated device latency.
 */
export class AcousticLink implements AudioLink {
  private readonly vad: CaptureVad;
  private readonly chunkListeners = new Set<(chunk: AudioChunk, receivedAt: number) => void>();
  private readonly endListeners = new Set<(end: AudioEnd, receivedAt: number) => void>();
  private capture: Capture | null = null;
  private readonly frames = new FrameSplitter((samples, at) => this.onFrame({ samples, at }));
  private player: { key: string; process: ChildProcessWithoutNullStreams; done: Promise<void> } | null = null;
  private playing = 0;
  private readonly preroll: Frame[] = [];
  private current: Heard | null = null;
  private readonly unclaimed: Heard[] = [];
  private readonly waitingLabels: Array<{ sessionId: string; turn: number }> = [];
  private failure: VoiceError | null = null;
  private inputPeak = 0;
  private capturedMs = 0;
  private closed = false;

  constructor(private readonly options: AcousticLinkOptions) {
    this.vad = CaptureVadSchema.parse(options.vad ?? {});
  }

  /** Starts recording from the input device; resolves once the recorder delivers audio. */
  async open(): Promise<void> {
    this.capture = startCapture(this.options.devices.input, this.options.env, (data, arrivedAt) => this.frames.push(data, arrivedAt), { field: this.options.fields?.input });
    try {
      await this.capture.started;
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  sendChunk(chunk: AudioChunkInput): void {
    this.assertUsable();
    const key = `${chunk.sessionId}\u0000${chunk.turn}`;
    if (this.player?.key !== key) {
      this.player?.process.stdin.end();
      const process = startPlayer(this.options.devices.output, this.options.env, (error) => (this.failure ??= error), this.options.fields?.output);
      // half-duplex: nothing is heard from the first chunk until the player has drained
      this.playing += 1;
      this.discardHeard();
      const done = new Promise<void>((resolve) => process.once('close', () => resolve())).then(() => {
        this.playing -= 1;
        this.discardHeard();
      });
      this.player = { key, process, done };
    }
    const data = typeof chunk.data === 'string' ? Buffer.from(chunk.data, 'base64') : chunk.data instanceof ArrayBuffer ? Buffer.from(chunk.data) : Buffer.from(chunk.data.buffer, chunk.data.byteOffset, chunk.data.byteLength);
    this.player.process.stdin.write(data);
  }

  endOfUtterance(end: AudioEnd): void {
    const key = `${end.sessionId}\u0000${end.turn}`;
    if (this.player?.key === key) {
      this.player.process.stdin.end();
      this.player = null;
    }
  }

  /** Resolves when everything sent so far has been played. */
  async drained(): Promise<void> {
    await this.player?.done;
  }

  onChunk(listener: (chunk: AudioChunk, receivedAt: number) => void): () => void {
    this.chunkListeners.add(listener);
    return () => this.chunkListeners.delete(listener);
  }

  onEndOfUtterance(listener: (end: AudioEnd, receivedAt: number) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  /** The next utterance heard (or the oldest one heard and not yet claimed) belongs to this turn. */
  expect(sessionId: string, turn: number): void {
    const label = { sessionId, turn };
    const heard = this.unclaimed.shift() ?? (this.current && !this.current.label ? this.current : null);
    if (heard) this.claim(heard, label);
    else this.waitingLabels.push(label);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.player?.process.stdin.end();
    await this.player?.done;
    await this.capture?.stop();
    this.chunkListeners.clear();
    this.endListeners.clear();
  }

  /** Why the link cannot be used any more (a device failed), or null. */
  failed(): VoiceError | null {
    return this.failure ?? this.capture?.failure() ?? null;
  }

  private assertUsable(): void {
    const failure = this.failed();
    if (failure) throw failure;
    if (this.closed) throw new VoiceError('the acoustic link is closed');
  }

  private discardHeard(): void {
    this.current = null;
    this.unclaimed.length = 0;
    this.preroll.length = 0;
  }

  private onFrame(frame: Frame): void {
    let peak = 0;
    for (const s of frame.samples) peak = Math.max(peak, Math.abs(s));
    this.inputPeak = Math.max(this.inputPeak, peak);
    this.capturedMs += AUDIO_CHUNK_MS;
    if (this.playing > 0) return;
    const speech = frameLevelDb(frame.samples) > this.vad.thresholdDb;
    const heard = this.current;
    if (!heard) {
      if (!speech) {
        this.preroll.push(frame);
        while (this.preroll.length * AUDIO_CHUNK_MS > this.vad.prerollMs) this.preroll.shift();
        return;
      }
      const started: Heard = { frames: [...this.preroll.splice(0), frame], speechStartAt: frame.at, lastSpeechAt: frame.at, ended: false, label: null, emitted: 0, peak };
      this.current = started;
      const label = this.waitingLabels.shift();
      if (label) this.claim(started, label);
      return;
    }
    heard.frames.push(frame);
    heard.peak = Math.max(heard.peak, peak);
    if (speech) heard.lastSpeechAt = frame.at;
    if (heard.label) this.emitFrames(heard);
    if (frame.at - heard.lastSpeechAt < this.vad.hangoverMs) return;
    this.current = null;
    if (heard.lastSpeechAt - heard.speechStartAt + AUDIO_CHUNK_MS < this.vad.minSpeechMs) {
      // a click or a bump: give its label back to the next utterance
      if (heard.label) this.waitingLabels.unshift(heard.label);
      return;
    }
    heard.ended = true;
    if (heard.peak >= CLIP_LEVEL) this.options.onRigFault?.({ kind: 'clipping', device: this.options.devices.input, detail: `an utterance reached ${heard.peak} of 32767: lower the input gain` });
    if (heard.label) this.finish(heard);
    else this.unclaimed.push(heard);
  }

  private claim(heard: Heard, label: { sessionId: string; turn: number }): void {
    heard.label = label;
    this.emitFrames(heard);
    if (heard.ended) this.finish(heard);
  }

  private receiveDirection(): AudioDirection {
    return this.options.speaks === 'to_unit' ? 'to_bench' : 'to_unit';
  }

  private emitFrames(heard: Heard): void {
    const label = heard.label!;
    const latency = this.options.latencyMs ?? 0;
    for (; heard.emitted < heard.frames.length; heard.emitted++) {
      const frame = heard.frames[heard.emitted]!;
      // the first chunk is timed at the first speech frame, not at the preroll before it
      const at = (heard.emitted === 0 ? heard.speechStartAt : frame.at) - latency;
      const chunk: AudioChunk = {
        sessionId: label.sessionId,
        turn: label.turn,
        direction: this.receiveDirection(),
        seq: heard.emitted,
        offsetMs: heard.emitted * AUDIO_CHUNK_MS,
        sentAt: at,
        sampleRate: AUDIO_SAMPLE_RATE,
        encoding: 'pcm_s16le',
        data: new Uint8Array(Int16Array.from(frame.samples).buffer),
      };
      this.chunkListeners.forEach((listener) => listener(chunk, at));
    }
  }

  private finish(heard: Heard): void {
    const label = heard.label!;
    const at = heard.lastSpeechAt + AUDIO_CHUNK_MS - (this.options.latencyMs ?? 0);
    const end: AudioEnd = { sessionId: label.sessionId, turn: label.turn, direction: this.receiveDirection(), chunks: heard.frames.length, durationMs: heard.frames.length * AUDIO_CHUNK_MS, sentAt: at, reason: 'completed' };
    this.endListeners.forEach((listener) => listener(end, at));
  }

  /** A rig fault when the whole capture so far was digital silence (no microphone or a muted input). */
  checkInputAlive(): RigFault | null {
    if (this.capturedMs < 500 || this.inputPeak > DEAD_INPUT_PEAK) return null;
    const fault: RigFault = { kind: 'dead_input', device: this.options.devices.input, detail: `${Math.round(this.capturedMs)} ms recorded, all silent: check the microphone or line input and its mute switch` };
    this.options.onRigFault?.(fault);
    return fault;
  }
}

/**
 * The output + input latency of a device pair: plays a tone burst on `output` and times its onset
 * on `loopbackInput` (the output's monitor, a microphone at the loudspeaker, or a loopback cable).
 * The median of `repeats` measurements, in ms. Subtracting it from a measured reply latency leaves
 * the time between the two sounds in the air (docs/voice.md, "Acoustic link").
 */
export async function measureLoopbackLatency(options: { output: string; loopbackInput: string; env?: NodeJS.ProcessEnv; repeats?: number; onsetDb?: number }): Promise<number> {
  const measurements: number[] = [];
  const silenceMs = 200;
  const burst = new Int16Array(((silenceMs + 100) * AUDIO_SAMPLE_RATE) / 1000);
  for (let s = (silenceMs * AUDIO_SAMPLE_RATE) / 1000; s < burst.length; s++) burst[s] = Math.round(12_000 * Math.sin((2 * Math.PI * 1000 * s) / AUDIO_SAMPLE_RATE));
  for (let i = 0; i < (options.repeats ?? 3); i++) {
    let armed = false;
    let onset: (at: number) => void = () => undefined;
    const heard = new Promise<number>((resolve) => (onset = resolve));
    const splitter = new FrameSplitter((samples, at) => {
      if (armed && frameLevelDb(samples) > (options.onsetDb ?? -30)) {
        armed = false;
        onset(at);
      }
    });
    const capture = startCapture(options.loopbackInput, options.env, (data, arrivedAt) => splitter.push(data, arrivedAt));
    let failure: VoiceError | null = null;
    try {
      await capture.started;
      await sleep(300); // the recorder settles before the burst
      armed = true;
      // paced like an utterance (20 ms chunks at real time), so the player buffers it as it buffers speech
      const player = startPlayer(options.output, options.env, (error) => (failure ??= error));
      const startedAt = nowMs();
      let toneWrittenAt = startedAt;
      for (let offset = 0, k = 0; offset < burst.length; offset += FRAME_SAMPLES, k++) {
        const due = startedAt + k * AUDIO_CHUNK_MS - nowMs();
        if (due > 0) await sleep(due);
        if (offset === (silenceMs * AUDIO_SAMPLE_RATE) / 1000) toneWrittenAt = nowMs();
        player.stdin.write(Buffer.from(Int16Array.from(burst.subarray(offset, offset + FRAME_SAMPLES)).buffer));
      }
      player.stdin.end();
      const at = await Promise.race([heard, sleep(3_000).then(() => null)]);
      if (failure) throw failure;
      if (at === null) throw new VoiceError(`loopback: the tone played on "${options.output}" was not heard on "${options.loopbackInput}" within 3 s (is the input the output's monitor, a microphone at the loudspeaker or a loopback cable?)`);
      measurements.push(at - toneWrittenAt);
    } finally {
      await capture.stop();
    }
  }
  measurements.sort((a, b) => a - b);
  const median = measurements[Math.floor(measurements.length / 2)]!;
  if (median < PLAUSIBLE_LATENCY_MS.min || median > PLAUSIBLE_LATENCY_MS.max) {
    throw new VoiceError(
      `loopback: the device latency measured through "${options.loopbackInput}" is ${median.toFixed(1)} ms (runs: ${measurements.map((m) => m.toFixed(1)).join(', ')} ms), ` +
        `outside the plausible ${PLAUSIBLE_LATENCY_MS.min}–${PLAUSIBLE_LATENCY_MS.max} ms, so it is not used: the input heard something before the tone left "${options.output}" (or far too late); ` +
        `make the loopback input hear only that output, or set voice.link.latencyMs to the rig's measured latency`,
    );
  }
  return median;
}

/**
 * A device latency the loopback calibration may report: the player alone buffers 100 ms, so a device pair answers in
 * a few ms at the very least; 0 ms (an onset heard before the tone was written) or seconds mean the input heard something else.
 */
export const PLAUSIBLE_LATENCY_MS = { min: 2, max: 2_000 } as const;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
