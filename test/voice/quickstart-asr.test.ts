import { afterAll, describe, expect, it } from 'vitest';
import { quickstartCampaignUtterances } from '../../scripts/voice-quickstart-utterances.ts';
import { EspeakTts, voiceForPersona } from '../../src/voice/espeak.ts';
import { corpusWordErrorRate } from '../../src/voice/metrics.ts';
import { PocketsphinxStt } from '../../src/voice/pocketsphinx.ts';
import { driverVocabulary } from '../../src/voice/vocabulary.ts';

/**
 * The acceptance figure on the real thing: the utterances the template simulator speaks in the
 * quickstart campaign (first 5 conversations, every persona voice used there), synthesized and recognised
 * by the reference head unit's recogniser with the campaign's domain model.
 */
describe('head-unit recognition of the quickstart campaign utterances', () => {
  const tts = new EspeakTts();
  let stt: PocketsphinxStt | null = null;
  afterAll(() => stt?.dispose());

  it('has WER ≤ 5% on clean synthesized speech', async () => {
    const { seeds, utterances } = await quickstartCampaignUtterances(5);
    stt = new PocketsphinxStt({ vocabulary: driverVocabulary(seeds) });
    const pairs = [];
    for (const u of utterances) pairs.push({ reference: u.text, hypothesis: (await stt.transcribe(await tts.synthesize(u.text, voiceForPersona(u.persona)))).text });
    expect(pairs.length).toBeGreaterThan(30);
    expect(new Set(utterances.map((u) => u.persona)).size).toBeGreaterThan(1);
    expect(corpusWordErrorRate(pairs)).toBeLessThanOrEqual(0.05);
  });
});
