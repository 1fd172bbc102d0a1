import { describe, expect, it } from 'vitest';
import { runConversation } from '../../src/kinds/dialogue/conversation.ts';
import type { HeadUnitSession } from '../../src/headunit/types.ts';
import { OracleJudge } from '../../src/judge/oracle.ts';
import { TemplateSimulator } from '../../src/simulator/template.ts';
import { CabinAcousticsSchema } from '../../src/voice/acoustics.ts';
import { createAudioLinkPair } from '../../src/voice/audio-link.ts';
import { BenchVoice, speakingSession } from '../../src/voice/bench-voice.ts';
import { VoiceError } from '../../src/voice/types.ts';
import { specFor } from '../kinds/dialogue/helpers.ts';

describe('a failure on the bench side of a spoken turn', () => {
  it('ends the conversation as simulator_error, not as the head unit’s error, and never reaches the unit', async () => {
    const [benchLink] = createAudioLinkPair();
    const voice = new BenchVoice({
      link: benchLink,
      tts: { name: 'broken', synthesize: async () => { throw new VoiceError('espeak-ng exited with code 1: voice "en-us+klatt3" not found'); } },
      replyStt: { name: 'unused', transcribe: async () => ({ text: '', words: [] }) },
      acoustics: CabinAcousticsSchema.parse({}),
      realtime: false,
      replyTimeoutMs: 1_000,
    });
    const sent: string[] = [];
    const unitSession: HeadUnitSession = {
      sessionId: 's-1',
      send: async (turn, text) => {
        sent.push(text);
        throw new Error('the unit must not be asked');
      },
      close: async () => undefined,
    };
    const result = await runConversation({
      spec: specFor(0),
      openSession: async () => speakingSession(unitSession, voice, { persona: 'polite', snrDb: null }),
      simulator: new TemplateSimulator(),
      judges: [new OracleJudge()],
    });
    expect(result.status).toBe('simulator_error');
    expect(result.error).toMatch(/the simulated driver could not speak turn 0: espeak-ng exited with code 1/);
    expect(sent).toEqual([]);
    await voice.close();
  });

  it('a link whose device failed ends the turn before anything is synthesized or sent, with the device\'s line', async () => {
    const [benchLink] = createAudioLinkPair();
    const deviceLine = 'audio device "unit_out.monitor" (voice.link.input, record): Connection failure: Connection terminated: start the sound server';
    let synthesized = 0;
    const voice = new BenchVoice({
      link: { ...benchLink, failed: () => new VoiceError(deviceLine) },
      tts: { name: 'counting', synthesize: async () => { synthesized++; throw new VoiceError('must not be asked'); } },
      replyStt: { name: 'unused', transcribe: async () => ({ text: '', words: [] }) },
      acoustics: CabinAcousticsSchema.parse({}),
      realtime: false,
      replyTimeoutMs: 1_000,
    });
    const session: HeadUnitSession = { sessionId: 's-2', send: async () => { throw new Error('the unit must not be asked'); }, close: async () => undefined };
    await expect(voice.runSpokenTurn({ session, turn: 0, text: 'Find a charger', context: specFor(0).context, persona: 'polite', snrDb: null })).rejects.toThrow(deviceLine);
    expect(synthesized).toBe(0);
    await voice.close();
  });
});
