import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { TurnRecord } from '../../src/domain/conversation.ts';
import { TurnDetail } from '../../src/ui/views/ConversationView.tsx';
import { LiveTurn } from '../../src/ui/views/LiveView.tsx';
import { CompareGuidance } from '../../src/ui/views/CompareView.tsx';
import { PagedRuns, RUNS_PAGE } from '../../src/ui/views/RunsView.tsx';

const turn: TurnRecord = {
  index: 2,
  utterance: { text: 'Find me a pharmacy in Schwabing.', strategy: null, annotation: { introduces: [], drops: [] } } as unknown as TurnRecord['utterance'],
  context: { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-05-12', time: '13:00' },
  reply: { sessionId: 's', turn: 2, text: 'I found a pharmacy.', actions: [], recognizedText: 'Find me a pharmacy in Schwabing.' } as unknown as TurnRecord['reply'],
  latencyMs: 900,
  verdicts: [],
  targetsAfter: [],
};

const spokenVoice: NonNullable<TurnRecord['voice']> = {
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
};

describe('TurnDetail voice line', () => {
  it('shows what the head unit heard, the SNR and the first-reply latency of a spoken turn', () => {
    const spoken: TurnRecord = {
      ...turn,
      voice: spokenVoice,
    };
    const html = renderToStaticMarkup(<TurnDetail turn={spoken} />);
    expect(html).toContain('data-testid="turn-voice"');
    expect(html.replace(/<!-- -->/g, '')).toContain('heard: Find me a park in Schwabing. · 5 dB SNR · first reply audio after 512 ms');
  });

  it('has no voice line for a typed turn', () => {
    expect(renderToStaticMarkup(<TurnDetail turn={turn} />)).not.toContain('turn-voice');
  });
});

describe('the gear and speed of each turn (#24 item 6)', () => {
  const parked: TurnRecord = { ...turn, context: { ...turn.context, vehicle: { speedKmh: 0, gear: 'P', stateOfChargePct: 64 } as NonNullable<TurnRecord['context']['vehicle']> } };
  it('shows them in the conversation view and in the live feed, with what the unit heard on a spoken turn', () => {
    const plain = (html: string) => html.replace(/<!-- -->/g, '');
    expect(plain(renderToStaticMarkup(<TurnDetail turn={parked} />))).toContain('vehicle: 0 km/h, gear P, SoC 64 %');
    const live = plain(renderToStaticMarkup(<LiveTurn turn={{ ...parked, voice: spokenVoice }} conversationKey="c1" />));
    expect(live).toContain('data-testid="turn-vehicle"');
    expect(live).toContain('vehicle: 0 km/h, gear P, SoC 64 %');
    expect(live).toContain('heard: Find me a park in Schwabing. · 5 dB SNR');
  });

  it('has no vehicle line for a turn without vehicle context', () => {
    expect(renderToStaticMarkup(<LiveTurn turn={turn} />)).not.toContain('turn-vehicle');
  });
});

describe('guidance on an empty compare page (#24 item 6)', () => {
  it('says what to do with no run, one run, or two to choose from', () => {
    expect(renderToStaticMarkup(<CompareGuidance runs={0} />)).toContain('There is no run to compare yet');
    expect(renderToStaticMarkup(<CompareGuidance runs={1} />)).toContain('a comparison needs two');
    expect(renderToStaticMarkup(<CompareGuidance runs={5} />)).toContain('Choose run A and run B above');
  });
});

describe('paging on the runs page (#24 item 6)', () => {
  const run = (n: number) => ({ id: `run-${n}`, name: `r${n}`, kind: 'dialogue', mode: 'guided', status: 'completed', stored: 1, planned: 1, createdAt: '2026-11-27T10:00:00Z' }) as unknown as Parameters<typeof PagedRuns>[0]['runs'][number];
  it('shows 50 runs a page with a pager, and no pager for a short list', () => {
    const long = renderToStaticMarkup(<PagedRuns runs={Array.from({ length: 120 }, (_, n) => run(n))} />).replace(/<!-- -->/g, '');
    expect(long).toContain('page 1 of 3 · 120 runs');
    expect(long.match(/<tr>/g)?.length).toBe(RUNS_PAGE + 1);
    expect(renderToStaticMarkup(<PagedRuns runs={[run(1)]} />)).not.toContain('pager-status');
  });
});

describe('the runs list', () => {
  it('labels each run once by its kind (and a dialogue plan by its mode), with its passed and failed counts', () => {
    const row = (kind: string, mode: string, outcomes: Record<string, number>) =>
      ({ id: `${kind}-run`, name: kind, kind, mode, status: 'completed', stored: 3, planned: 3, createdAt: '2026-11-27T10:00:00Z', outcomes }) as unknown as Parameters<typeof PagedRuns>[0]['runs'][number];
    const html = renderToStaticMarkup(<PagedRuns runs={[row('suite', 'scripted', { pass: 2, fail: 1 }), row('dialogue', 'guided', { fail: 3 })]} />);
    const cells = (id: string) => [...html.matchAll(new RegExp(`data-testid="${id}">([^<]*)<`, 'g'))].map((m) => m[1]);
    expect(cells('run-kind')).toEqual(['suite', 'dialogue · guided']);
    expect(cells('run-passed')).toEqual(['2', '0']);
    expect(cells('run-failed')).toEqual(['1', '3']);
  });
});
