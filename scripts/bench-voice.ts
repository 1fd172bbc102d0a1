/**
 * Voice benchmark: real-time factor of TTS + recognition (target ≤ 0.2 on 2 cores) and WER on the
 * quickstart utterances, clean and in road noise at 20/10/5/0 dB. Run: npm run bench:voice
 */
import { cpus } from 'node:os';
import { CabinAcousticsSchema, applyCabinAcoustics } from '../src/voice/acoustics.ts';
import { EspeakTts, voiceForPersona } from '../src/voice/espeak.ts';
import { ASSISTANT_VOICE } from '../src/voice/headunit-voice.ts';
import { corpusWordErrorRate, percentile } from '../src/voice/metrics.ts';
import { PocketsphinxStt } from '../src/voice/pocketsphinx.ts';
import { durationMs } from '../src/voice/types.ts';
import { SileroVad, speechOnly } from '../src/voice/vad.ts';
import { QUICKSTART_VOICE_UTTERANCES, driverVocabulary, replyVocabulary } from '../src/voice/vocabulary.ts';
import { quickstartCampaignUtterances } from './voice-quickstart-utterances.ts';

const REPLIES = [
  'I found Schwabing Apotheke in Schwabing, rated 4.4, 0 minutes away.',
  'Setting the temperature to 21 degrees.',
  'Starting navigation to Kreuzberg: 3.2 km, 12 minutes, arriving at 18:42.',
  "Sorry, I didn't understand that. Could you rephrase?",
  'I found Trattoria Maxvorstadt in Maxvorstadt, rated 4.6, 5 minutes away. Other options: Osteria Maxvorstadt, Pizzeria Maxvorstadt.',
  'Playing jazz.',
  'Which place in Pasing do you mean?',
  'Playing Bayern 3 on the radio.',
];

const tts = new EspeakTts();
const fmt = (x: number | null, digits = 3) => (x === null ? 'n/a' : x.toFixed(digits));

async function main(): Promise<void> {
  console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`);
  let t = performance.now();
  const driverStt = new PocketsphinxStt({ vocabulary: driverVocabulary() });
  await driverStt.transcribe((await tts.synthesize('hello', voiceForPersona('neutral'))));
  console.log(`driver model (LM + dictionary) built and first decode: ${(performance.now() - t).toFixed(0)} ms (one-off per campaign)`);

  // 1. driver path: TTS + head-unit recognition, sequential, every persona
  const rtfs: number[] = [];
  const pairs: Array<{ reference: string; hypothesis: string }> = [];
  let audioMs = 0;
  let workMs = 0;
  let i = 0;
  for (const text of QUICKSTART_VOICE_UTTERANCES) {
    const persona = (['neutral', 'polite', 'impatient', 'tech_savvy', 'elderly', 'distracted'] as const)[i++ % 6];
    const start = performance.now();
    const pcm = await tts.synthesize(text, voiceForPersona(persona));
    const heard = await driverStt.transcribe(pcm);
    const elapsed = performance.now() - start;
    rtfs.push(elapsed / durationMs(pcm));
    audioMs += durationMs(pcm);
    workMs += elapsed;
    pairs.push({ reference: text, hypothesis: heard.text });
  }
  console.log(`driver path (espeak-ng TTS + pocketsphinx domain LM), ${pairs.length} utterances, ${(audioMs / 1000).toFixed(1)} s of speech:`);
  console.log(`  RTF overall ${fmt(workMs / audioMs)}, per utterance p50 ${fmt(percentile(rtfs, 50))} p95 ${fmt(percentile(rtfs, 95))}; WER ${fmt(corpusWordErrorRate(pairs))}`);

  // 1b. what the quickstart campaign really says: template-simulator utterances of its first 20 conversations
  const campaign = await quickstartCampaignUtterances(20);
  const campaignStt = new PocketsphinxStt({ vocabulary: driverVocabulary(campaign.seeds) });
  const campaignPairs: Array<{ reference: string; hypothesis: string }> = [];
  audioMs = 0;
  workMs = 0;
  for (const u of campaign.utterances) {
    const start = performance.now();
    const pcm = await tts.synthesize(u.text, voiceForPersona(u.persona));
    campaignPairs.push({ reference: u.text, hypothesis: (await campaignStt.transcribe(pcm)).text });
    workMs += performance.now() - start;
    audioMs += durationMs(pcm);
  }
  console.log(`quickstart campaign utterances (20 conversations, ${campaignPairs.length} utterances, ${(audioMs / 1000).toFixed(1)} s): RTF ${fmt(workMs / audioMs)}; WER ${fmt(corpusWordErrorRate(campaignPairs))}`);
  await campaignStt.dispose();

  // 2. reply path: assistant TTS + VAD + reply recognition
  t = performance.now();
  const replyStt = new PocketsphinxStt({ vocabulary: [...replyVocabulary(), ...driverVocabulary()] });
  const vad = new SileroVad();
  await replyStt.transcribe(await tts.synthesize('hello', ASSISTANT_VOICE));
  console.log(`reply model built and first decode: ${(performance.now() - t).toFixed(0)} ms (one-off)`);
  const replyPairs: Array<{ reference: string; hypothesis: string }> = [];
  audioMs = 0;
  workMs = 0;
  for (const text of REPLIES) {
    const start = performance.now();
    const pcm = await tts.synthesize(text, ASSISTANT_VOICE);
    const heard = await replyStt.transcribe(speechOnly(pcm, await vad.segments(pcm)));
    workMs += performance.now() - start;
    audioMs += durationMs(pcm);
    replyPairs.push({ reference: text, hypothesis: heard.text });
  }
  console.log(`reply path (espeak-ng TTS + Silero VAD + pocketsphinx), ${REPLIES.length} replies, ${(audioMs / 1000).toFixed(1)} s: RTF ${fmt(workMs / audioMs)}; WER ${fmt(corpusWordErrorRate(replyPairs))}`);

  // 3. SNR sweep on the driver path (neutral voice)
  const clean = await Promise.all(QUICKSTART_VOICE_UTTERANCES.map((u) => tts.synthesize(u, voiceForPersona('neutral'))));
  for (const kind of ['road', 'wind', 'fan', 'rain'] as const) {
    const acoustics = CabinAcousticsSchema.parse({ snrDb: [20, 10, 5, 0], noise: { kind, seed: 3 } });
    const row: string[] = [];
    for (const snr of [20, 10, 5, 0]) {
      const sweep = [];
      for (const [k, text] of QUICKSTART_VOICE_UTTERANCES.entries()) sweep.push({ reference: text, hypothesis: (await driverStt.transcribe(await applyCabinAcoustics(clean[k], acoustics, snr))).text });
      row.push(`${snr} dB ${fmt(corpusWordErrorRate(sweep))}`);
    }
    console.log(`head-unit WER in ${kind} noise: ${row.join(', ')}`);
  }
  await Promise.all([driverStt.dispose(), replyStt.dispose(), vad.dispose()]);
}

await main();
