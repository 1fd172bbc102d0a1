import { mkdirSync, mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { describe, expect, it } from 'vitest';
import { CabinAcousticsSchema } from '../../src/voice/acoustics.ts';
import { createAudioLinkPair, streamUtterance } from '../../src/voice/audio-link.ts';
import { BenchVoice } from '../../src/voice/bench-voice.ts';
import { EspeakTts, voiceForPersona } from '../../src/voice/espeak.ts';
import { addUtterance, loadUtteranceLibrary } from '../../src/voice/library.ts';
import { recordFromMicrophone } from '../../src/voice/recorder.ts';
import { SileroVad } from '../../src/voice/vad.ts';
import { pcm16, type Pcm16, type SttEngine } from '../../src/voice/types.ts';
import { writeWav } from '../../src/voice/wav.ts';
import { DEFAULT_WHISPER_MODEL_DIR, WhisperStt, missingWhisperFiles } from '../../src/voice/whisper.ts';
import { MUNICH_CONTEXT } from './helpers.ts';
import { FILE_LIMITS, limitBytes } from '../../src/domain/input-files.ts';

/** The stand-in microphone: a node-record-lpcm16 recorder module that plays a WAV (no microphone in CI). */
const STAND_IN_RECORDER = resolve('test/fixtures/voice/wav-player-recorder.cjs');
const dir = mkdtempSync(join(tmpdir(), 'icabench-library-'));
const tts = new EspeakTts();

describe('recording through node-record-lpcm16', () => {
  it('captures the stand-in recorder\'s audio sample for sample', async () => {
    const speech = await tts.synthesize('Find me a park in Bogenhausen.', voiceForPersona('polite'));
    const source = join(dir, 'mic-input.wav');
    await writeWav(source, speech);
    const recorded = await recordFromMicrophone({ recorder: STAND_IN_RECORDER, device: source, maxDurationMs: 10_000 });
    expect(recorded.sampleRate).toBe(16000);
    expect(Array.from(recorded.samples)).toEqual(Array.from(speech.samples));
  });

  it('stops an endless recorder at maxDurationMs and keeps what it captured', async () => {
    // a recorder that never ends on its own, like a live microphone: without the stop this test hangs
    const endless = join(dir, 'endless-recorder.cjs');
    writeFileSync(
      endless,
      `module.exports = () => ({ cmd: process.execPath, args: ['-e', 'setInterval(() => process.stdout.write(Buffer.alloc(640, 1)), 20)'] });\n`,
    );
    const recorded = await recordFromMicrophone({ recorder: endless, maxDurationMs: 400 });
    expect(recorded.samples.length).toBeGreaterThan(0);
    expect(recorded.samples.every((v) => v === 257)).toBe(true);
  });

  it('names the Debian package when the recorder program is missing', async () => {
    await expect(recordFromMicrophone({ recorder: 'arecord', maxDurationMs: 2000 })).rejects.toThrow(
      /(arecord was not found on PATH: install the Debian package "alsa-utils")|(recorder "arecord")/,
    );
  });

  it('rejects an unknown recorder name', async () => {
    await expect(recordFromMicrophone({ recorder: 'no-such-recorder', maxDurationMs: 100 })).rejects.toThrow(/recorder "no-such-recorder": No such recorder/);
  });
});

describe('utterance library', () => {
  it('stores recordings with transcripts and finds them by normalized text', async () => {
    const libDir = join(dir, 'lib');
    const speech = await tts.synthesize('Set the temperature to 22 degrees.', voiceForPersona('elderly'));
    await addUtterance(libDir, { id: 'temp-22', text: 'Set the temperature to 22 degrees.', speaker: 'anna' }, speech);
    await addUtterance(libDir, { id: 'jazz', text: 'Play some jazz music.' }, pcm16(new Int16Array(1600).fill(500)));
    const library = await loadUtteranceLibrary(libDir);
    expect(library.utterances.map((u) => u.id)).toEqual(['temp-22', 'jazz']);
    const found = library.find('set the temperature to twenty two degrees');
    expect(found?.id).toBe('temp-22');
    expect(found?.pcm.samples.length).toBe(speech.samples.length);
    expect(library.find('Navigate home.')).toBeUndefined();
  });

  it('a bench spoken turn plays the recording instead of synthesizing', async () => {
    const libDir = join(dir, 'lib2');
    const recording = pcm16(Int16Array.from({ length: 8000 }, (_, i) => Math.round(5000 * Math.sin(i / 5))));
    await addUtterance(libDir, { id: 'rec-1', text: 'Play some jazz music.' }, recording);
    const [benchLink, unitLink] = createAudioLinkPair();
    let heard: Pcm16 | null = null;
    const chunks: Int16Array[] = [];
    unitLink.onChunk((c) => chunks.push(new Int16Array(c.data.buffer.slice(c.data.byteOffset, c.data.byteOffset + c.data.byteLength))));
    unitLink.onEndOfUtterance((end) => {
      heard = pcm16(Int16Array.from(chunks.flatMap((c) => Array.from(c))));
      void streamUtterance(unitLink, pcm16(new Int16Array(3200).fill(100)), { sessionId: end.sessionId, turn: end.turn, direction: 'to_bench', realtime: false });
    });
    const stt: SttEngine = { name: 'none', transcribe: async () => ({ text: '' }) };
    const voice = new BenchVoice({ link: benchLink, tts, replyStt: stt, acoustics: CabinAcousticsSchema.parse({}), realtime: false, replyTimeoutMs: 2000, library: await loadUtteranceLibrary(libDir) });
    const result = await voice.runSpokenTurn({
      session: { sessionId: 's', send: async (turn) => ({ sessionId: 's', turn, text: 'Playing jazz.', actions: [] }) },
      turn: 0, text: 'Play some jazz music!', context: MUNICH_CONTEXT, persona: 'neutral', snrDb: null,
    });
    expect(result.driverAudioSource).toBe('library:rec-1');
    expect(Array.from(heard!.samples)).toEqual(Array.from(recording.samples));
    voice.close();
  });

  it('reports a bad manifest or a bad WAV by path', async () => {
    const bad = join(dir, 'bad');
    await addUtterance(bad, { id: 'ok', text: 'hello' }, pcm16(new Int16Array(100).fill(1)));
    writeFileSync(join(bad, 'manifest.json'), JSON.stringify({ utterances: [{ id: 'x y', wav: 'x.wav', text: '' }] }));
    await expect(loadUtteranceLibrary(bad)).rejects.toThrow(/bad\/manifest\.json: utterances\.0\.id: expected letters.*utterances\.0\.text/);
    writeFileSync(join(bad, 'manifest.json'), JSON.stringify({ utterances: [{ id: 'ok', wav: 'missing.wav', text: 'hello' }] }));
    await expect(loadUtteranceLibrary(bad)).rejects.toThrow(/missing\.wav: cannot read the WAV file/);
    writeFileSync(join(bad, 'manifest.json'), '{ not json');
    await expect(loadUtteranceLibrary(bad)).rejects.toThrow(/manifest\.json: not valid JSON/);
    truncateSync(join(bad, 'manifest.json'), limitBytes(FILE_LIMITS.voiceList) + 1);
    await expect(loadUtteranceLibrary(bad)).rejects.toThrow(/bad\/manifest\.json: the voice library manifest is 16\.0 MiB \(16,777,217 bytes\), larger than the limit of 16 MiB .*set ICABENCH_MAX_VOICE_LIST_MIB=17$/);
  });
});

describe('Whisper (local files only)', () => {
  it('fails with a message naming the expected model path when the files are absent', async () => {
    const stt = new WhisperStt(join(dir, 'models', 'whisper-tiny.en'));
    await expect(stt.transcribe(pcm16(new Int16Array(1600)))).rejects.toThrow(
      new RegExp(`Whisper model not found at ${join(dir, 'models', 'whisper-tiny.en').replace(/[.]/g, '\\.')} \\(missing config\\.json, preprocessor_config\\.json, tokenizer\\.json, onnx/encoder_model\\*\\.onnx`),
    );
    // the repository's models folder, whatever the working directory
    expect(DEFAULT_WHISPER_MODEL_DIR).toBe(join(REPO_ROOT, 'models/whisper-tiny.en'));
  });

  it('lists exactly the missing files of a partial model folder', () => {
    const partial = join(dir, 'partial');
    mkdirSync(join(partial, 'onnx'), { recursive: true });
    writeFileSync(join(partial, 'config.json'), '{}');
    writeFileSync(join(partial, 'onnx', 'encoder_model_quantized.onnx'), '');
    expect(missingWhisperFiles(partial)).toEqual(['preprocessor_config.json', 'tokenizer.json', 'onnx/decoder_model_merged*.onnx']);
  });
});

describe('Silero VAD', () => {
  it('finds the speech inside silence and nothing in silence', async () => {
    const speech = await tts.synthesize('Navigate to Kreuzberg.', voiceForPersona('neutral'));
    const padded = new Int16Array(16000 + speech.samples.length + 16000);
    padded.set(speech.samples, 16000);
    const vad = new SileroVad();
    const segments = await vad.segments(pcm16(padded));
    expect(segments.length).toBeGreaterThanOrEqual(1);
    const speechEndMs = 1000 + speech.samples.length / 16;
    expect(segments[0].startMs).toBeGreaterThan(900);
    expect(segments[0].startMs).toBeLessThan(1400);
    expect(segments.at(-1)!.endMs).toBeGreaterThan(speechEndMs - 400);
    expect(segments.at(-1)!.endMs).toBeLessThan(speechEndMs + 400);
    expect(await vad.segments(pcm16(new Int16Array(32000)))).toEqual([]);
    await vad.dispose();
  });
});
