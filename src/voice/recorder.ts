import { createRequire } from 'node:module';
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { missingProgramMessage, RECORDERS } from '../system/programs.ts';
import { SAMPLE_RATE, VoiceError, pcm16, type Pcm16 } from './types.ts';

export interface RecordOptions {
  /** "sox" (default), "rec", "arecord", or the absolute path of a recorder module with node-record-lpcm16's recorder shape */
  recorder?: string;
  /** capture device (AUDIODEV for sox, -D for arecord) */
  device?: string;
  /** stop after this long at the latest */
  maxDurationMs: number;
  /** stop after a second of silence (sox/rec only) */
  endOnSilence?: boolean;
}

interface Recording {
  process: ChildProcess;
  stream(): Readable;
  stop(): void;
}

/**
 * Records 16 kHz mono 16-bit PCM from the workstation microphone through node-record-lpcm16,
 * which drives sox or arecord. Stops at the end of the recorder's stream or after maxDurationMs.
 */
export function recordFromMicrophone(options: RecordOptions): Promise<Pcm16> {
  const require = createRequire(import.meta.url);
  const { record } = require('node-record-lpcm16') as { record: (o: object) => Recording };
  const recorderName = options.recorder ?? 'sox';
  const known = RECORDERS[recorderName];
  return new Promise((resolve, reject) => {
    let recording: Recording;
    try {
      recording = record({ sampleRate: SAMPLE_RATE, channels: 1, recorder: recorderName, audioType: 'raw', device: options.device, endOnSilence: options.endOnSilence ?? false });
    } catch (error) {
      reject(new VoiceError(`recorder "${recorderName}": ${(error as Error).message}`));
      return;
    }
    const parts: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) return reject(error);
      const bytes = Buffer.concat(parts);
      const samples = new Int16Array(Math.floor(bytes.length / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(2 * i);
      if (samples.length === 0) return reject(new VoiceError(`recorder "${recorderName}" produced no audio (is a microphone connected? check ${options.device ?? 'the default device'})`));
      resolve(pcm16(samples));
    };
    const timer = setTimeout(() => {
      recording.stop();
      finish();
    }, options.maxDurationMs);
    recording.process.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' && known) finish(new VoiceError(missingProgramMessage(known)));
      else finish(new VoiceError(`recorder "${recorderName}" could not start: ${error.message}`));
    });
    const stream = recording.stream();
    stream.on('data', (chunk: Buffer) => parts.push(chunk));
    stream.on('error', (message: unknown) => finish(new VoiceError(`recorder "${recorderName}": ${String(message).split('\n')[0]}`)));
    stream.on('end', () => finish());
  });
}
