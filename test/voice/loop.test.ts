import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReferenceHeadUnit } from '../../src/headunit/reference/reference-headunit.ts';
import type { HeadUnitHandler } from '../../src/headunit/types.ts';
import { snrLevels } from '../../src/voice/acoustics.ts';
import { speakingSession, type BenchVoice, type SpokenTurnResult, type SpokenTurnSender } from '../../src/voice/bench-voice.ts';
import { VoiceConfigSchema, createBenchVoice, turnAudioArtifacts } from '../../src/voice/config.ts';
import { HeadUnitVoiceFrontEnd, withVoiceFrontEnd } from '../../src/voice/headunit-voice.ts';
import { buildVoiceSummary } from '../../src/voice/metrics.ts';
import { createSocketAudioLink } from '../../src/voice/socket-audio-link.ts';
import { parseWav } from '../../src/voice/wav.ts';
import { MUNICH_CONTEXT, socketPair, type SocketPair } from './helpers.ts';

/**
 * The whole offline voice loop: bench TTS + cabin acoustics → socket.io audio → the reference head
 * unit's voice front end (pocketsphinx) → its text reply → espeak-ng reply audio → bench VAD + STT.
 */
describe('voice loop against the reference head unit over socket.io', () => {
  let pair: SocketPair;
  let unit: HeadUnitHandler;
  let frontEnd: HeadUnitVoiceFrontEnd;
  let bench: BenchVoice;
  const config = VoiceConfigSchema.parse({ acoustics: { snrDb: [20, 0], noise: { kind: 'road', seed: 2 } } });
  const unitErrors: Error[] = [];

  beforeAll(async () => {
    pair = await socketPair();
    frontEnd = new HeadUnitVoiceFrontEnd({ link: createSocketAudioLink(pair.unit), onError: (e) => unitErrors.push(e) });
    unit = withVoiceFrontEnd(new ReferenceHeadUnit({ worldSeed: 1 }), frontEnd);
    bench = await createBenchVoice(config, { link: createSocketAudioLink(pair.bench) });
  });
  afterAll(async () => {
    await bench.close();
    await frontEnd.close();
    await pair.close();
  });

  const session: SpokenTurnSender = {
    sessionId: 'voice-1',
    send: async (turn, text, context) => ({ sessionId: 'voice-1', turn, ...(await unit.handleTurn('voice-1', turn, text, context)) }),
  };

  it('runs spoken turns end to end and summarises them per SNR', async () => {
    await unit.startSession('voice-1', MUNICH_CONTEXT);
    expect(unit.capabilities.audio).toBe(true);
    const utterances = ['Find me a pharmacy in Schwabing.', 'Set the temperature to 21 degrees.'];
    const results: SpokenTurnResult[] = [];
    let turn = 0;
    for (const snrDb of snrLevels(config.acoustics)) {
      for (const text of utterances) results.push(await bench.runSpokenTurn({ session, turn: turn++, text, context: MUNICH_CONTEXT, persona: 'polite', snrDb }));
    }
    const clean = results.filter((r) => r.snrDb === 20);
    for (const r of clean) {
      expect(r.headUnitAsrWer).toBe(0);
      expect(r.voiceError).toBeNull();
      expect(r.replyText.length).toBeGreaterThan(0);
      expect(r.replyTranscriptionWer).not.toBeNull();
      expect(r.replyTranscriptionWer as number).toBeLessThanOrEqual(0.1);
      expect(r.firstReplyLatencyMs).toBeGreaterThan(0);
      expect(r.replyDurationMs).toBeGreaterThan(500);
    }
    // the unit understood the clean requests: a pharmacy result and a climate action
    expect(clean[0].reply.actions.some((a) => a.type === 'poi_results')).toBe(true);
    expect(clean[1].reply.actions).toContainEqual(expect.objectContaining({ type: 'climate', setpointC: 21 }));

    const summary = buildVoiceSummary(results);
    expect(Object.keys(summary.bySnr).sort()).toEqual(['0', '20']);
    expect(summary.bySnr['20'].headUnitAsrWer).toBe(0);
    expect(summary.bySnr['0'].headUnitAsrWer as number).toBeGreaterThan(summary.bySnr['20'].headUnitAsrWer as number);
    expect(summary.firstReplyLatencyMs.p50).not.toBeNull();
    expect(unitErrors).toEqual([]);

    const artifacts = turnAudioArtifacts(clean[0], 0);
    expect(artifacts.map((a) => a.name)).toEqual(['turn0-driver.wav', 'turn0-reply.wav']);
    expect(parseWav(artifacts[0].bytes, 'driver').samples.length).toBe(clean[0].driverAudio.samples.length);
    expect(parseWav(artifacts[1].bytes, 'reply').samples.length).toBe(clean[0].replyAudio?.samples.length);
  });

  it('speakingSession turns a text session into a spoken one for the conversation loop', async () => {
    const results: SpokenTurnResult[] = [];
    const spoken = speakingSession({ ...session, close: async () => undefined }, bench, { persona: 'tech_savvy', snrDb: null, onResult: (r) => void results.push(r) });
    const reply = await spoken.send(40, 'Navigate to Sendling, avoiding tolls.', MUNICH_CONTEXT);
    expect(reply.recognizedText).toBe('Navigate to Sendling, avoiding tolls.');
    expect(reply.actions.some((a) => a.type === 'route')).toBe(true);
    expect(results).toHaveLength(1);
    expect(results[0].reply).toBe(reply);
    expect(results[0].firstReplyLatencyMs).not.toBeNull();
  });

  it('passes typed turns through unchanged', async () => {
    const reply = await session.send(50, 'Set the temperature to 23 degrees.', MUNICH_CONTEXT);
    expect(reply.recognizedText).toBeUndefined();
    expect(reply.actions).toContainEqual(expect.objectContaining({ type: 'climate', setpointC: 23 }));
  });
});
