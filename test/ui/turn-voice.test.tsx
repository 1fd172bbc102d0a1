import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { TurnRecord } from '../../src/domain/conversation.ts';
import { TurnDetail } from '../../src/ui/views/ConversationView.tsx';

const turn: TurnRecord = {
  index: 2,
  utterance: { text: 'Find me a pharmacy in Schwabing.', strategy: null, annotation: { introduces: [], drops: [] } } as unknown as TurnRecord['utterance'],
  context: { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-05-12', time: '13:00' },
  reply: { sessionId: 's', turn: 2, text: 'I found a pharmacy.', actions: [], recognizedText: 'Find me a pharmacy in Schwabing.' } as unknown as TurnRecord['reply'],
  latencyMs: 900,
  verdicts: [],
  targetsAfter: [],
};

describe('TurnDetail voice line', () => {
  it('shows what the head unit heard, the SNR and the first-reply latency of a spoken turn', () => {
    const spoken: TurnRecord = {
      ...turn,
      voice: {
        utteranceText: 'Find me a pharmacy in Schwabing.',
        recognizedText: 'Find me a park in Schwabing.',
        replyText: 'I found a pharmacy.',
        replyTranscript: 'i found a pharmacy',
        firstReplyLatencyMs: 512.4,
        replyDurationMs: 1800,
        bargeIn: false,
        snrDb: 5,
        failed: true,
        driverAudioSource: 'tts:espeak-ng',
        headUnitAsrWer: 1 / 6,
        replyTranscriptionWer: 0,
        voiceError: null,
      },
    };
    const html = renderToStaticMarkup(<TurnDetail turn={spoken} />);
    expect(html).toContain('data-testid="turn-voice"');
    expect(html.replace(/<!-- -->/g, '')).toContain('heard: Find me a park in Schwabing. · 5 dB SNR · first reply audio after 512 ms');
  });

  it('has no voice line for a typed turn', () => {
    expect(renderToStaticMarkup(<TurnDetail turn={turn} />)).not.toContain('turn-voice');
  });
});
