import { z } from 'zod';
import type { VoiceTurn } from '../domain/conversation.ts';
import { snrLevelName } from './acoustics.ts';

const ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** English words for 0–999999, as a speech synthesiser reads a number. */
export function numberToWords(n: number): string {
  if (n < 20) return ONES[n];
  if (n < 100) return TENS[Math.floor(n / 10)] + (n % 10 ? ` ${ONES[n % 10]}` : '');
  if (n < 1000) return `${ONES[Math.floor(n / 100)]} hundred` + (n % 100 ? ` ${numberToWords(n % 100)}` : '');
  if (n < 1_000_000) return `${numberToWords(Math.floor(n / 1000))} thousand` + (n % 1000 ? ` ${numberToWords(n % 1000)}` : '');
  return String(n).split('').map((d) => ONES[Number(d)]).join(' ');
}

/** The value of each number word normalizeWords produces ("zero"…"nineteen", "twenty"…"ninety"). */
export const SPOKEN_NUMBER_VALUES: ReadonlyMap<string, number> = new Map([...ONES.map((w, i) => [w, i] as const), ...TENS.flatMap((w, i) => (w ? [[w, i * 10] as const] : []))]);

/**
 * The words a listener hears in a text: lower case, no accents or punctuation, numbers spelt out
 * ("21°C" → "twenty one degrees c", "20:00" → "twenty zero zero",
 * "3 km" → "three k m", "km/h" → "k m slash h", as espeak-ng says them). Language models and WER both use it,
 * so the recogniser's vocabulary and the reference agree on spelling.
 */
export function normalizeWords(text: string): string[] {
  const spelled = text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .toLowerCase()
    .replace(/°\s*c\b/g, ' degrees c ')
    .replace(/°/g, ' degrees ')
    .replace(/%/g, ' percent ')
    .replace(/&/g, ' and ')
    .replace(/\//g, ' slash ')
    .replace(/\bkm\b/g, ' k m ')
    .replace(/\b(\d{1,2}):(\d)(\d)\b/g, (_, h: string, m1: string, m2: string) =>
      ` ${numberToWords(Number(h))} ${m1 === '0' ? `zero ${ONES[Number(m2)]}` : numberToWords(Number(m1 + m2))} `,
    )
    .replace(/(\d+)\.(\d+)/g, (_, a: string, b: string) => ` ${a} point ${b.split('').join(' ')} `)
    .replace(/\d+/g, (digits) => ` ${numberToWords(Number(digits))} `);
  return spelled
    .split(/[^a-z']+/)
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter(Boolean);
}

export function editDistance(reference: readonly string[], hypothesis: readonly string[]): number {
  let previous = Array.from({ length: hypothesis.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const current = [i];
    for (let j = 1; j <= hypothesis.length; j++) {
      const substitution = previous[j - 1] + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1);
      current.push(Math.min(substitution, previous[j] + 1, current[j - 1] + 1));
    }
    previous = current;
  }
  return previous[hypothesis.length];
}

/** Word error rate: word-level Levenshtein distance over normalized words, divided by the reference length. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = normalizeWords(reference);
  const hyp = normalizeWords(hypothesis);
  if (ref.length === 0) return hyp.length === 0 ? 0 : 1;
  return editDistance(ref, hyp) / ref.length;
}

/** Corpus WER: total edits over total reference words (long utterances weigh more than short ones). */
export function corpusWordErrorRate(pairs: ReadonlyArray<{ reference: string; hypothesis: string }>): number {
  let edits = 0;
  let words = 0;
  for (const { reference, hypothesis } of pairs) {
    const ref = normalizeWords(reference);
    edits += editDistance(ref, normalizeWords(hypothesis));
    words += ref.length;
  }
  return words === 0 ? 0 : edits / words;
}

/** Nearest-rank percentile; null when there are no values. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** What the summary needs from one spoken turn (a stored turn's `voice` record fits). */
export type VoiceTurnMetrics = Pick<
  VoiceTurn,
  'utteranceText' | 'recognizedText' | 'replyText' | 'replyTranscript' | 'firstReplyLatencyMs' | 'replyDurationMs' | 'bargeIn' | 'snrDb' | 'failed'
>;

export const VoiceSummarySchema = z.object({
  turns: z.number().int().min(0),
  headUnitAsrWer: z.number().nullable(),
  replyTranscriptionWer: z.number().nullable(),
  firstReplyLatencyMs: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
  replyDurationMs: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
  bargeInEvents: z.number().int().min(0),
  /** keyed by SNR in dB, or "clean" */
  bySnr: z.record(
    z.string(),
    z.object({
      turns: z.number().int(),
      headUnitAsrWer: z.number().nullable(),
      /** share of the level's turns that failed on the voice path (misheard, or no reply audio) */
      voiceFailRate: z.number(),
      conversations: z.number().int(),
      /** the level's conversation fail rate, failed / (passed + failed) as the run's failRate; null when none was decided */
      failRate: z.number().nullable(),
    }),
  ),
});
export type VoiceSummary = z.infer<typeof VoiceSummarySchema>;

function asrWer(turns: readonly VoiceTurnMetrics[]): number | null {
  const pairs = turns.filter((t) => t.recognizedText !== null).map((t) => ({ reference: t.utteranceText, hypothesis: t.recognizedText ?? '' }));
  return pairs.length ? corpusWordErrorRate(pairs) : null;
}

/** A conversation's judged outcome at its SNR level (combinedVerdict's outcome). */
export interface VoiceConversationOutcome {
  snrDb: number | null;
  outcome: 'pass' | 'fail' | 'inconclusive' | 'error';
}

/**
 * The summary.json `voice` section. WERs are corpus-level; latencies are p50/p95 over turns with
 * reply audio; per level, the voice-path fail rate of turns and the fail rate of the conversations.
 */
export function buildVoiceSummary(turns: readonly VoiceTurnMetrics[], conversations: readonly VoiceConversationOutcome[] = []): VoiceSummary {
  const replyPairs = turns
    .filter((t) => t.replyText !== null && t.replyTranscript !== null)
    .map((t) => ({ reference: t.replyText ?? '', hypothesis: t.replyTranscript ?? '' }));
  const latencies = turns.flatMap((t) => (t.firstReplyLatencyMs === null ? [] : [t.firstReplyLatencyMs]));
  const durations = turns.flatMap((t) => (t.replyDurationMs === null ? [] : [t.replyDurationMs]));
  const groups = new Map<string, VoiceTurnMetrics[]>();
  for (const turn of turns) {
    const key = snrLevelName(turn.snrDb);
    groups.set(key, [...(groups.get(key) ?? []), turn]);
  }
  const bySnr: VoiceSummary['bySnr'] = {};
  for (const [key, group] of groups) {
    const level = conversations.filter((c) => snrLevelName(c.snrDb) === key);
    const failed = level.filter((c) => c.outcome === 'fail').length;
    const decided = failed + level.filter((c) => c.outcome === 'pass').length;
    bySnr[key] = {
      turns: group.length,
      headUnitAsrWer: asrWer(group),
      voiceFailRate: group.filter((t) => t.failed).length / group.length,
      conversations: level.length,
      failRate: decided === 0 ? null : failed / decided,
    };
  }
  return {
    turns: turns.length,
    headUnitAsrWer: asrWer(turns),
    replyTranscriptionWer: replyPairs.length ? corpusWordErrorRate(replyPairs) : null,
    firstReplyLatencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
    replyDurationMs: { p50: percentile(durations, 50), p95: percentile(durations, 95) },
    bargeInEvents: turns.filter((t) => t.bargeIn).length,
    bySnr,
  };
}
