import type { Persona } from '../domain/taxonomy.ts';
import { resample, toFloat, toInt16 } from './dsp.ts';
import { ESPEAK_NG, type SystemProgram } from '../system/programs.ts';
import { runProgram } from './system.ts';
import { SAMPLE_RATE, VoiceError, pcm16, type Pcm16, type TtsEngine, type VoiceParams } from './types.ts';
import { decodeWav } from './wav.ts';

/**
 * How each simulator persona sounds. Rates stay inside what a driver actually speaks (130–185 wpm).
 * The Klatt-synthesis variants (+klatt…) and +f5 are used because pocketsphinx's US English
 * acoustic model recognises them reliably; the default formant voices (+m3, +f4, …) lose a third
 * of the words even with a domain language model (measured in docs/voice.md).
 */
const PERSONA_VOICES: Record<Persona, VoiceParams> = {
  neutral: { voice: 'en-us+klatt', rateWpm: 160, pitch: 50, amplitude: 100 },
  polite: { voice: 'en-us+klatt2', rateWpm: 150, pitch: 60, amplitude: 100 },
  impatient: { voice: 'en-us+klatt3', rateWpm: 180, pitch: 45, amplitude: 120 },
  tech_savvy: { voice: 'en-us+klatt4', rateWpm: 170, pitch: 50, amplitude: 100 },
  elderly: { voice: 'en-us+klatt', rateWpm: 135, pitch: 35, amplitude: 90 },
  distracted: { voice: 'en-us+f5', rateWpm: 155, pitch: 55, amplitude: 80 },
};

export function voiceForPersona(persona: Persona): VoiceParams {
  return { ...PERSONA_VOICES[persona] };
}

/** espeak-ng speaking to stdout; its 22050 Hz output is resampled to the bench's 16 kHz. */
export class EspeakTts implements TtsEngine {
  readonly name = 'espeak-ng';

  constructor(private readonly program: SystemProgram = ESPEAK_NG) {}

  async synthesize(text: string, voice: VoiceParams): Promise<Pcm16> {
    if (!text.trim()) throw new VoiceError('espeak-ng: nothing to say (empty text)');
    const args = ['--stdout', '-b', '1', '-v', voice.voice, '-s', String(voice.rateWpm), '-p', String(voice.pitch), '-a', String(voice.amplitude)];
    const { stdout } = await runProgram(this.program, args, text);
    const wav = decodeWav(stdout, `espeak-ng output for "${text.slice(0, 40)}"`, { streamed: true });
    if (wav.channels !== 1) throw new VoiceError(`espeak-ng produced ${wav.channels} channels; expected mono`);
    if (wav.samples.length === 0) throw new VoiceError(`espeak-ng produced no audio for "${text.slice(0, 40)}" (voice ${voice.voice})`);
    return pcm16(toInt16(resample(toFloat(wav.samples), wav.sampleRate, SAMPLE_RATE)));
  }
}

/**
 * espeak-ng's own phoneme transcription (its -x mnemonics) for each word; the pocketsphinx
 * dictionary maps these to ARPAbet for words the CMU dictionary lacks (Schwabing, Neukölln, …).
 */
export async function espeakPhonemes(words: readonly string[], program: SystemProgram = ESPEAK_NG): Promise<string[]> {
  if (words.length === 0) return [];
  const { stdout } = await runProgram(program, ['-q', '-x', '-b', '1', '-v', 'en-us'], words.map((w) => `${w}.`).join('\n'));
  const lines = stdout.toString('utf8').split('\n').map((l) => l.trim()).filter(Boolean);
  if (lines.length === words.length) return lines;
  // espeak-ng merged or split clauses: fall back to one word per call
  const out: string[] = [];
  for (const word of words) {
    const single = await runProgram(program, ['-q', '-x', '-b', '1', '-v', 'en-us'], `${word}.`);
    out.push(single.stdout.toString('utf8').replace(/\s+/g, ' ').trim());
  }
  return out;
}
