import { describe, expect, it } from 'vitest';
import { VoiceSummarySchema, buildVoiceSummary, corpusWordErrorRate, normalizeWords, percentile, wordErrorRate, type VoiceTurnMetrics } from '../../src/voice/metrics.ts';

describe('normalizeWords', () => {
  it('spells numbers, times and units as espeak-ng says them and drops accents and punctuation', () => {
    expect(normalizeWords('Set it to 21°C, please!')).toEqual(['set', 'it', 'to', 'twenty', 'one', 'degrees', 'c', 'please']);
    expect(normalizeWords('Open at 20:00 or 12:30 or 19:05.')).toEqual(['open', 'at', 'twenty', 'zero', 'zero', 'or', 'twelve', 'thirty', 'or', 'nineteen', 'zero', 'five']);
    expect(normalizeWords('Rated 4.2, 3 km in Neukölln')).toEqual(['rated', 'four', 'point', 'two', 'three', 'k', 'm', 'in', 'neukolln']);
    expect(normalizeWords("What's my range? 105")).toEqual(["what's", 'my', 'range', 'one', 'hundred', 'five']);
  });
});

describe('wordErrorRate', () => {
  it('is 0 for the same words regardless of case and punctuation', () => {
    expect(wordErrorRate('Find me a pharmacy in Schwabing.', 'find me a pharmacy in schwabing')).toBe(0);
  });

  it('counts substitutions, deletions and insertions over the reference length', () => {
    expect(wordErrorRate('navigate to kreuzberg now', 'navigate to giesing now')).toBe(0.25); // 1 substitution
    expect(wordErrorRate('navigate to kreuzberg now', 'navigate kreuzberg now')).toBe(0.25); // 1 deletion
    expect(wordErrorRate('navigate to kreuzberg now', 'please navigate to kreuzberg now')).toBe(0.25); // 1 insertion
    expect(wordErrorRate('a b', 'c d e f')).toBe(2); // can exceed 1
  });

  it('handles empty references', () => {
    expect(wordErrorRate('', '')).toBe(0);
    expect(wordErrorRate('', 'noise')).toBe(1);
    expect(wordErrorRate('play jazz', '')).toBe(1);
  });

  it('corpus WER weighs by reference length', () => {
    expect(
      corpusWordErrorRate([
        { reference: 'one two three four five six seven eight nine ten', hypothesis: 'one two three four five six seven eight nine ten' },
        { reference: 'play jazz', hypothesis: 'play' },
      ]),
    ).toBeCloseTo(1 / 12, 10);
  });
});

describe('percentile', () => {
  it('uses nearest rank', () => {
    const values = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(10);
    expect(percentile(values, 95)).toBe(19);
    expect(percentile([], 50)).toBeNull();
  });
});

describe('buildVoiceSummary', () => {
  const turn = (over: Partial<VoiceTurnMetrics>): VoiceTurnMetrics => ({
    utteranceText: 'find me a pharmacy in schwabing',
    recognizedText: 'find me a pharmacy in schwabing',
    replyText: 'I found Schwabing Apotheke.',
    replyTranscript: 'i found schwabing apotheke',
    firstReplyLatencyMs: 400,
    replyDurationMs: 2000,
    bargeIn: false,
    snrDb: null,
    failed: false,
    ...over,
  });

  it('aggregates WERs, latency percentiles, barge-ins and per-SNR levels', () => {
    const summary = buildVoiceSummary(
      [
        turn({}),
        turn({ firstReplyLatencyMs: 600, snrDb: 10 }),
        turn({ recognizedText: 'find me a park in schwabing', snrDb: 0, failed: true, firstReplyLatencyMs: 800, bargeIn: true }),
        turn({ recognizedText: null, replyTranscript: null, firstReplyLatencyMs: null, replyDurationMs: null, snrDb: 0, failed: true }),
      ],
      [
        { snrDb: 0, outcome: 'fail' },
        { snrDb: 0, outcome: 'pass' },
        { snrDb: 0, outcome: 'inconclusive' },
        { snrDb: null, outcome: 'error' },
      ],
    );
    expect(VoiceSummarySchema.parse(summary)).toEqual(summary);
    expect(summary.turns).toBe(4);
    expect(summary.headUnitAsrWer).toBeCloseTo(1 / 18, 10); // 1 wrong word of 3 × 6
    expect(summary.replyTranscriptionWer).toBe(0);
    expect(summary.firstReplyLatencyMs).toEqual({ p50: 600, p95: 800 });
    expect(summary.bargeInEvents).toBe(1);
    expect(Object.keys(summary.bySnr).sort()).toEqual(['0', '10', 'clean']);
    // conversation fail rate over decided conversations only (inconclusive and errors are not decided)
    expect(summary.bySnr['0']).toEqual({ turns: 2, headUnitAsrWer: 1 / 6, voiceFailRate: 1, conversations: 3, failRate: 0.5 });
    expect(summary.bySnr.clean).toEqual({ turns: 1, headUnitAsrWer: 0, voiceFailRate: 0, conversations: 1, failRate: null });
    expect(summary.bySnr['10']).toMatchObject({ conversations: 0, failRate: null });
  });

  it('reports nulls when nothing was measured', () => {
    const summary = buildVoiceSummary([]);
    expect(summary.headUnitAsrWer).toBeNull();
    expect(summary.firstReplyLatencyMs).toEqual({ p50: null, p95: null });
  });
});
