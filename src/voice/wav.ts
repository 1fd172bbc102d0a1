import { writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FILE_LIMITS, readBoundedBytes } from '../domain/input-files.ts';
import { SAMPLE_RATE, VoiceError, pcm16, type Pcm16 } from './types.ts';

/** A decoded RIFF PCM file before the bench's format rules are applied. */
export interface DecodedWav {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** interleaved when channels > 1 */
  samples: Int16Array;
}

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
/** Streaming writers (espeak-ng --stdout) put a placeholder here because they do not know the length yet. */
const STREAMING_SIZE_MIN = 0x7ffff000;

export interface DecodeOptions {
  /** accept a data chunk whose declared size is a streaming placeholder and runs to the end of the buffer */
  streamed?: boolean;
}

/** Decodes a 16-bit RIFF PCM WAV. `source` names the file in every error. */
export function decodeWav(buffer: Buffer, source: string, options: DecodeOptions = {}): DecodedWav {
  if (buffer.length < 12) throw new VoiceError(`${source}: not a WAV file (only ${buffer.length} bytes; a RIFF header needs 12)`);
  if (buffer.toString('ascii', 0, 4) !== 'RIFF' || buffer.toString('ascii', 8, 12) !== 'WAVE')
    throw new VoiceError(`${source}: not a WAV file (expected "RIFF....WAVE" at the start, found "${buffer.toString('latin1', 0, 4)}")`);
  let offset = 12;
  let format: { tag: number; channels: number; sampleRate: number; bitsPerSample: number } | null = null;
  while (offset + 8 <= buffer.length) {
    const id = buffer.toString('ascii', offset, offset + 4);
    const size = buffer.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > buffer.length) throw new VoiceError(`${source}: corrupt WAV (fmt chunk is ${size} bytes, needs at least 16)`);
      let tag = buffer.readUInt16LE(body);
      if (tag === WAVE_FORMAT_EXTENSIBLE && size >= 40) tag = buffer.readUInt16LE(body + 24);
      format = {
        tag,
        channels: buffer.readUInt16LE(body + 2),
        sampleRate: buffer.readUInt32LE(body + 4),
        bitsPerSample: buffer.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!format) throw new VoiceError(`${source}: corrupt WAV (data chunk before the fmt chunk)`);
      if (format.tag !== WAVE_FORMAT_PCM) throw new VoiceError(`${source}: unsupported WAV encoding (format tag ${format.tag}); expected integer PCM (1)`);
      if (format.bitsPerSample !== 16) throw new VoiceError(`${source}: ${format.bitsPerSample}-bit samples; expected 16-bit PCM`);
      if (format.channels < 1) throw new VoiceError(`${source}: corrupt WAV (0 channels)`);
      let end = body + size;
      if (end > buffer.length) {
        if (!(options.streamed && size >= STREAMING_SIZE_MIN))
          throw new VoiceError(`${source}: truncated WAV (data chunk declares ${size} bytes, only ${buffer.length - body} present)`);
        end = buffer.length;
      }
      const frameBytes = 2 * format.channels;
      const usable = end - body - ((end - body) % frameBytes);
      const samples = new Int16Array(usable / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = buffer.readInt16LE(body + 2 * i);
      return { sampleRate: format.sampleRate, channels: format.channels, bitsPerSample: 16, samples };
    }
    offset = body + size + (size % 2);
  }
  if (!format) throw new VoiceError(`${source}: corrupt or truncated WAV (no fmt chunk)`);
  throw new VoiceError(`${source}: corrupt or truncated WAV (no data chunk)`);
}

/** Decodes a WAV that must already be in the bench's format: 16 kHz, mono, 16-bit, not empty. */
export function parseWav(buffer: Buffer, source: string): Pcm16 {
  const wav = decodeWav(buffer, source);
  if (wav.channels !== 1)
    throw new VoiceError(`${source}: ${wav.channels} channels; expected mono (convert with: sox in.wav -c 1 out.wav)`);
  if (wav.sampleRate !== SAMPLE_RATE)
    throw new VoiceError(`${source}: sample rate ${wav.sampleRate} Hz; expected ${SAMPLE_RATE} Hz (convert with: sox in.wav -r 16000 out.wav)`);
  if (wav.samples.length === 0) throw new VoiceError(`${source}: empty audio (the data chunk holds no samples)`);
  return pcm16(wav.samples);
}

export async function readWav(path: string): Promise<Pcm16> {
  let buffer: Buffer;
  try {
    buffer = readBoundedBytes(path, 'WAV file', FILE_LIMITS.wav);
  } catch (error) {
    throw new VoiceError((error as Error).message);
  }
  return parseWav(buffer, path);
}

export function encodeWav(pcm: Pcm16): Buffer {
  const dataBytes = pcm.samples.length * 2;
  const out = Buffer.alloc(44 + dataBytes);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write('WAVE', 8, 'ascii');
  out.write('fmt ', 12, 'ascii');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(pcm.sampleRate, 24);
  out.writeUInt32LE(pcm.sampleRate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(dataBytes, 40);
  Buffer.from(pcm.samples.buffer, pcm.samples.byteOffset, dataBytes).copy(out, 44);
  return out;
}

export async function writeWav(path: string, pcm: Pcm16): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, encodeWav(pcm));
}
