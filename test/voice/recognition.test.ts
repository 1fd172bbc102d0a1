import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERSONAS } from '../../src/domain/taxonomy.ts';
import { CabinAcousticsSchema, applyCabinAcoustics } from '../../src/voice/acoustics.ts';
import { EspeakTts, voiceForPersona } from '../../src/voice/espeak.ts';
import { corpusWordErrorRate, normalizeWords } from '../../src/voice/metrics.ts';
import { PocketsphinxStt, buildDomainLanguageModel, espeakToArpabet } from '../../src/voice/pocketsphinx.ts';
import { durationMs, type Pcm16 } from '../../src/voice/types.ts';
import { QUICKSTART_VOICE_UTTERANCES, driverVocabulary } from '../../src/voice/vocabulary.ts';

const tts = new EspeakTts();

describe('espeak-ng TTS', () => {
  it('produces 16 kHz mono audio of a plausible speaking duration', async () => {
    const text = 'Find me a cheap italian restaurant in Maxvorstadt.';
    const pcm = await tts.synthesize(text, voiceForPersona('neutral'));
    expect(pcm.sampleRate).toBe(16000);
    expect(pcm.samples).toBeInstanceOf(Int16Array);
    // 8 words at 160 wpm is about 3 s; allow for pauses and edge silence
    const seconds = durationMs(pcm) / 1000;
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(6);
    const peak = pcm.samples.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(peak).toBeGreaterThan(3000);
  });

  it('speaks slower for the elderly persona than for the impatient one, and each persona sounds different', async () => {
    const text = 'Navigate to Prenzlauer Berg, avoiding tolls.';
    const slow = await tts.synthesize(text, voiceForPersona('elderly'));
    const fast = await tts.synthesize(text, voiceForPersona('impatient'));
    expect(durationMs(slow)).toBeGreaterThan(durationMs(fast) * 1.15);
    const voices = new Set(PERSONAS.map((p) => JSON.stringify(voiceForPersona(p))));
    expect(voices.size).toBe(PERSONAS.length);
  });

  it('refuses empty text', async () => {
    await expect(tts.synthesize('  ', voiceForPersona('neutral'))).rejects.toThrow(/empty text/);
  });
});

describe('domain language model', () => {
  it('is a valid back-off ARPA model over the normalized vocabulary', () => {
    const model = buildDomainLanguageModel(['Navigate to Mitte.', 'Navigate to Prenzlauer Berg.', 'Set the temperature to 21 degrees.']);
    expect(model.words).toEqual([...new Set(['navigate', 'to', 'mitte', 'prenzlauer', 'berg', 'set', 'the', 'temperature', 'twenty', 'one', 'degrees'])].sort());
    const counts = [...model.arpa.matchAll(/^ngram (\d)=(\d+)$/gm)].map((m) => Number(m[2]));
    const sections = model.arpa.split(/\\\d-grams:\n/).slice(1).map((s) => s.split('\n\n')[0].trim().split('\n').length);
    expect(sections).toEqual(counts);
    // <s> is only ever a history: it carries a back-off weight but no probability of its own
    const unigram = new Map([...model.arpa.matchAll(/^(-?[\d.]+) (\S+)(?: (-?[\d.]+))?$/gm)].map((m) => [m[2], Number(m[1])]));
    expect(unigram.get('<s>')).toBe(-99);
    expect(() => buildDomainLanguageModel(['...', '!'])).toThrow(/no sentence has any words/);
  });

  it('maps espeak-ng phonemes to ARPAbet', () => {
    expect(espeakToArpabet("Sw'eIbIN")).toBe('SH W EY B IH NG');
    expect(espeakToArpabet("pr'EnzlaU3")).toBe('P R EH N Z L AW ER');
    expect(espeakToArpabet("tS'i:p")).toBe('CH IY P');
  });
});

describe('pocketsphinx with a domain model on synthesized quickstart requests', () => {
  const stt = new PocketsphinxStt({ vocabulary: driverVocabulary() });
  const clean = new Map<string, Pcm16>();

  beforeAll(async () => {
    for (const text of QUICKSTART_VOICE_UTTERANCES) clean.set(text, await tts.synthesize(text, voiceForPersona('neutral')));
  });
  afterAll(() => stt.dispose());

  it('recognises clean speech with WER ≤ 5%', async () => {
    const pairs = [];
    for (const [text, pcm] of clean) pairs.push({ reference: text, hypothesis: (await stt.transcribe(pcm)).text });
    const wer = corpusWordErrorRate(pairs);
    expect(pairs.length).toBe(QUICKSTART_VOICE_UTTERANCES.length);
    expect(pairs.reduce((n, p) => n + normalizeWords(p.reference).length, 0)).toBeGreaterThan(100);
    expect(wer).toBeLessThanOrEqual(0.05);
  });

  it('recognises other persona voices too (WER ≤ 5%)', async () => {
    const pairs = [];
    for (const [i, text] of QUICKSTART_VOICE_UTTERANCES.slice(0, 6).entries()) {
      const persona = PERSONAS[i % PERSONAS.length];
      pairs.push({ reference: text, hypothesis: (await stt.transcribe(await tts.synthesize(text, voiceForPersona(persona)))).text });
    }
    expect(corpusWordErrorRate(pairs)).toBeLessThanOrEqual(0.05);
  });

  it('computes WER at SNR 20, 10, 5 and 0 dB in road noise; 0 dB is clearly worse than 20 dB', async () => {
    const acoustics = CabinAcousticsSchema.parse({ snrDb: [20, 10, 5, 0], noise: { kind: 'road', seed: 3 } });
    const subset = QUICKSTART_VOICE_UTTERANCES.slice(0, 8);
    const werAt: Record<number, number> = {};
    for (const snr of [20, 10, 5, 0]) {
      const pairs = [];
      for (const text of subset) pairs.push({ reference: text, hypothesis: (await stt.transcribe(await applyCabinAcoustics(clean.get(text) as Pcm16, acoustics, snr))).text });
      werAt[snr] = corpusWordErrorRate(pairs);
    }
    for (const snr of [20, 10, 5, 0]) expect(Number.isFinite(werAt[snr])).toBe(true);
    expect(werAt[20]).toBeLessThanOrEqual(0.05);
    expect(werAt[0]).toBeGreaterThan(werAt[20] + 0.2);
  });
});
