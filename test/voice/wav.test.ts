import { mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeWav, encodeWav, parseWav, readWav, writeWav } from '../../src/voice/wav.ts';
import { EspeakTts, voiceForPersona } from '../../src/voice/espeak.ts';
import { PocketsphinxStt } from '../../src/voice/pocketsphinx.ts';
import { runProgram } from '../../src/voice/system.ts';
import { pcm16 } from '../../src/voice/types.ts';
import { FILE_LIMITS, limitBytes } from '../../src/domain/input-files.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-wav-'));

/** A RIFF PCM file with arbitrary header fields, to build every kind of bad input. */
function wavBytes(options: { sampleRate?: number; channels?: number; bits?: number; samples?: number; declaredData?: number }): Buffer {
  const { sampleRate = 16000, channels = 1, bits = 16, samples = 160 } = options;
  const data = samples * channels * (bits / 8);
  const out = Buffer.alloc(44 + data);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + data, 4);
  out.write('WAVEfmt ', 8, 'ascii');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * channels * (bits / 8), 28);
  out.writeUInt16LE(channels * (bits / 8), 32);
  out.writeUInt16LE(bits, 34);
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(options.declaredData ?? data, 40);
  for (let i = 0; i < data / 2; i++) out.writeInt16LE((i * 37) % 2000, 44 + 2 * i);
  return out;
}

function file(name: string, bytes: Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

describe('WAV io', () => {
  it('round-trips 16 kHz mono PCM exactly', async () => {
    const samples = Int16Array.from({ length: 1000 }, (_, i) => ((i * 97) % 65536) - 32768);
    const path = join(dir, 'roundtrip.wav');
    await writeWav(path, pcm16(samples));
    const back = await readWav(path);
    expect(back.sampleRate).toBe(16000);
    expect(Array.from(back.samples)).toEqual(Array.from(samples));
  });

  it('rejects a wrong sample rate, naming the file and the expected rate', async () => {
    const path = file('44k.wav', wavBytes({ sampleRate: 44100 }));
    await expect(readWav(path)).rejects.toThrow(new RegExp(`${path}: sample rate 44100 Hz; expected 16000 Hz`));
  });

  it('rejects stereo', async () => {
    const path = file('stereo.wav', wavBytes({ channels: 2 }));
    await expect(readWav(path)).rejects.toThrow(/stereo\.wav: 2 channels; expected mono/);
  });

  it('rejects a corrupt file (not RIFF)', async () => {
    const path = file('corrupt.wav', Buffer.from('this is not audio at all, just text'));
    await expect(readWav(path)).rejects.toThrow(/corrupt\.wav: not a WAV file/);
  });

  it('rejects a truncated file whose data chunk is cut short', async () => {
    const full = wavBytes({ samples: 1600 });
    const path = file('truncated.wav', full.subarray(0, 44 + 1000));
    await expect(readWav(path)).rejects.toThrow(/truncated\.wav: truncated WAV \(data chunk declares 3200 bytes, only 1000 present\)/);
  });

  it('rejects a file cut inside its header', async () => {
    const path = file('header-cut.wav', wavBytes({}).subarray(0, 30));
    await expect(readWav(path)).rejects.toThrow(/header-cut\.wav: corrupt WAV \(fmt chunk/);
  });

  it('rejects empty audio', async () => {
    const path = file('empty.wav', wavBytes({ samples: 0 }));
    await expect(readWav(path)).rejects.toThrow(/empty\.wav: empty audio/);
  });

  it('rejects 8-bit samples and names the expected encoding', () => {
    expect(() => parseWav(wavBytes({ bits: 8 }), 'eight.wav')).toThrow(/eight\.wav: 8-bit samples; expected 16-bit PCM/);
  });

  it('refuses a WAV over its cap by its size, unread, naming the size, the cap and the variable that raises it', async () => {
    const path = join(dir, 'hours.wav');
    writeFileSync(path, '');
    truncateSync(path, limitBytes(FILE_LIMITS.wav) + 1);
    await expect(readWav(path)).rejects.toThrow(`${path}: the WAV file is 64.0 MiB (67,108,865 bytes), larger than the limit of 64 MiB (docs/configuration.md, "Limits"); to read it anyway set ICABENCH_MAX_WAV_MIB=65`);
  });

  it('reads a missing file as an error naming the path', async () => {
    await expect(readWav(join(dir, 'nope.wav'))).rejects.toThrow(/nope\.wav: cannot read the WAV file/);
  });

  it('accepts a streamed WAV (placeholder size) only when asked to', () => {
    const bytes = wavBytes({ samples: 100, declaredData: 0x7ffff000 });
    expect(() => decodeWav(bytes, 'stream.wav')).toThrow(/truncated/);
    expect(decodeWav(bytes, 'stream.wav', { streamed: true }).samples.length).toBe(100);
    expect(encodeWav(pcm16(new Int16Array(10))).length).toBe(64);
  });
});

describe('missing Debian programs', () => {
  it('names the package to install when espeak-ng is absent', async () => {
    const tts = new EspeakTts({ binary: 'espeak-ng-not-installed-here', debianPackage: 'espeak-ng' });
    await expect(tts.synthesize('hello', voiceForPersona('neutral'))).rejects.toThrow(/install the Debian package "espeak-ng"/);
  });

  it('names the package to install when pocketsphinx is absent', async () => {
    const stt = new PocketsphinxStt({ vocabulary: ['find me a pharmacy'], program: { binary: 'pocketsphinx-not-installed', debianPackage: 'pocketsphinx' } });
    await expect(stt.transcribe(pcm16(new Int16Array(1600)), { source: 'probe.wav' })).rejects.toThrow(/probe\.wav: .*install the Debian package "pocketsphinx"/);
    await stt.dispose();
  });

  it('reports a failing program with its exit status', async () => {
    await expect(runProgram({ binary: 'sh', debianPackage: 'dash' }, ['-c', 'echo broken >&2; exit 3'])).rejects.toThrow(/exit 3.*broken/);
  });
});
