import type { Command } from 'commander';
import { FILE_LIMITS, readBoundedLines } from '../../domain/input-files.ts';
import { PersonaSchema } from '../../domain/taxonomy.ts';
import { parseOrThrow } from '../../domain/validation.ts';
import { CabinAcousticsSchema, applyCabinAcoustics } from '../../voice/acoustics.ts';
import { checkVoicePrerequisites } from '../../voice/config.ts';
import { EspeakTts, voiceForPersona } from '../../voice/espeak.ts';
import { addUtterance, loadUtteranceLibrary } from '../../voice/library.ts';
import { PocketsphinxStt } from '../../voice/pocketsphinx.ts';
import { recordFromMicrophone } from '../../voice/recorder.ts';
import { durationMs, type SttEngine } from '../../voice/types.ts';
import { driverVocabulary, replyVocabulary } from '../../voice/vocabulary.ts';
import { readWav, writeWav } from '../../voice/wav.ts';
import { WhisperStt } from '../../voice/whisper.ts';

function number(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n)) throw new Error(`${name}: expected a number, got "${value}"`);
    return n;
  };
}

export function registerVoiceCommands(program: Command): void {
  const voice = program.command('voice').description('The voice path: synthesize, add cabin noise, recognise, record utterances (offline).');

  voice
    .command('check')
    .description('Check the Debian programs and models the voice path needs.')
    .action(async () => {
      const problems = await checkVoicePrerequisites();
      if (problems.length === 0) console.log('voice: espeak-ng, pocketsphinx and its en-us model are installed');
      for (const p of problems) console.error(`voice: ${p}`);
      if (problems.length) process.exitCode = 1;
    });

  voice
    .command('devices')
    .description('List the audio devices of the sound server (PulseAudio/PipeWire) for the acoustic link, with the level on each input; clipping and silent inputs are flagged as rig faults.')
    .option('--listen-ms <ms>', 'how long each input is measured', number('--listen-ms'), 500)
    .option('--json', 'one JSON object per device')
    .action(async (options: { listenMs: number; json?: boolean }) => {
      const { describeAudioDevice, listAudioDevices } = await import('../../system/audio-devices.ts');
      const devices = await listAudioDevices({ listenMs: options.listenMs });
      if (options.json) return devices.forEach((device) => console.log(JSON.stringify(device)));
      const width = Math.max(4, ...devices.map((d) => d.name.length));
      console.log(`${'kind'.padEnd(7)}${'name'.padEnd(width + 2)}level`);
      for (const device of devices) console.log(`${device.kind.padEnd(7)}${device.name.padEnd(width + 2)}${describeAudioDevice(device)}`);
    });

  voice
    .command('say')
    .description('Speak a text in a persona voice, optionally through cabin acoustics, into a 16 kHz WAV.')
    .argument('<text>', 'what the driver says')
    .requiredOption('--out <file>', 'WAV to write')
    .option('--persona <name>', 'persona voice', 'neutral')
    .option('--snr <dB>', 'add cabin noise at this SNR', number('--snr'))
    .option('--noise <kind>', 'road, wind, fan or rain', 'road')
    .option('--noise-wav <file>', 'your own noise recording (16 kHz mono WAV) instead of a generated bed')
    .option('--telephone', 'band-limit to 300–3400 Hz')
    .option('--clip <level>', 'clip at this fraction of full scale', number('--clip'))
    .action(async (text: string, options: { out: string; persona: string; snr?: number; noise: string; noiseWav?: string; telephone?: boolean; clip?: number }) => {
      const persona = parseOrThrow(PersonaSchema, options.persona, '--persona');
      const acoustics = parseOrThrow(
        CabinAcousticsSchema,
        { snrDb: options.snr ?? null, noise: options.noiseWav ? { wav: options.noiseWav } : { kind: options.noise }, bandLimit: options.telephone ? 'telephone' : null, clip: options.clip ?? null },
        'voice say options',
      );
      const speech = await new EspeakTts().synthesize(text, voiceForPersona(persona));
      const pcm = await applyCabinAcoustics(speech, acoustics, acoustics.snrDb as number | null);
      await writeWav(options.out, pcm);
      console.log(`${options.out}: ${(durationMs(pcm) / 1000).toFixed(2)} s, 16 kHz mono`);
    });

  voice
    .command('transcribe')
    .description('Transcribe 16 kHz mono WAVs with pocketsphinx (domain model) or a local Whisper model.')
    .argument('<wav...>', 'WAV files')
    .option('--vocabulary <file>', 'sentences the recogniser should expect, one per line (default: the in-car driver and reply vocabulary)')
    .option('--whisper <dir>', 'use the Whisper model in this folder instead of pocketsphinx')
    .action(async (wavs: string[], options: { vocabulary?: string; whisper?: string }) => {
      const vocabulary = options.vocabulary
        ? [...readBoundedLines(options.vocabulary, 'vocabulary', FILE_LIMITS.voiceList)].map((l) => l.text).filter((l) => l.trim())
        : [...driverVocabulary(), ...replyVocabulary()];
      const stt: SttEngine = options.whisper ? new WhisperStt(options.whisper) : new PocketsphinxStt({ vocabulary });
      for (const wav of wavs) console.log(`${wav}\t${(await stt.transcribe(await readWav(wav), { source: wav })).text}`);
      if (stt instanceof PocketsphinxStt) await stt.dispose();
    });

  voice
    .command('record')
    .description('Record an utterance from the microphone (node-record-lpcm16 via sox or arecord) into an utterance library.')
    .requiredOption('--library <dir>', 'utterance library folder (manifest.json + WAVs)')
    .requiredOption('--id <id>', 'utterance id (names the WAV)')
    .requiredOption('--text <text>', 'exactly what will be said')
    .option('--seconds <n>', 'maximum recording length', number('--seconds'), 8)
    .option('--recorder <name>', 'sox, rec or arecord', 'sox')
    .option('--device <name>', 'capture device')
    .option('--speaker <name>', 'who is speaking')
    .action(async (options: { library: string; id: string; text: string; seconds: number; recorder: string; device?: string; speaker?: string }) => {
      console.log(`recording up to ${options.seconds} s (stops after a second of silence with sox/rec): say "${options.text}"`);
      const pcm = await recordFromMicrophone({ recorder: options.recorder, device: options.device, maxDurationMs: options.seconds * 1000, endOnSilence: options.recorder !== 'arecord' });
      const entry = await addUtterance(options.library, { id: options.id, text: options.text, speaker: options.speaker, recordedAt: new Date().toISOString() }, pcm);
      console.log(`${options.library}/${entry.wav}: ${(durationMs(pcm) / 1000).toFixed(2)} s`);
    });

  voice
    .command('library')
    .description('Check an utterance library: every WAV readable, 16 kHz mono, with its transcript.')
    .argument('<dir>', 'library folder')
    .action(async (dir: string) => {
      const library = await loadUtteranceLibrary(dir);
      for (const u of library.utterances) console.log(`${u.id}\t${(durationMs(u.pcm) / 1000).toFixed(2)} s\t${u.text}`);
      console.log(`${library.utterances.length} utterances OK`);
    });
}
