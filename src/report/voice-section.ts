import type { ConversationResult, VoiceTurn } from '../domain/conversation.ts';
import { snrLevelName } from '../voice/acoustics.ts';
import { combinedVerdict, type CombinedVerdict } from '../analysis/verdict.ts';
import { buildVoiceSummary, type VoiceConversationOutcome, type VoiceSummary } from '../voice/metrics.ts';
import { escapeHtml as h } from './escape.ts';
import type { ConversationCollector, ReportSection } from './html.ts';

/** Misheard turns listed (with players) in the report; the rest are counted. */
export const MISHEARD_LIMIT = 40;

export interface VoiceReport {
  summary: VoiceSummary;
  section: ReportSection;
}

export interface VoiceReportOptions {
  /**
   * Puts a conversation's audio artifact `name` at `path` (relative to the report) and says whether it
   * exists; a turn without its audio (saveAudio: false) gets no player. Default: no players.
   */
  exportAudio?: (key: string, name: string, path: string) => boolean;
  limit?: number;
}

interface SpokenTurn {
  key: string;
  turn: number;
  voice: VoiceTurn;
}

/** Folder-safe form of a conversation key. */
function audioPath(key: string, name: string): string {
  return `audio/${key.replace(/[^A-Za-z0-9._-]+/g, '_')}/${name}`;
}

const pct = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(1)}%`);
const ms = (value: number | null) => (value === null ? '–' : `${Math.round(value)} ms`);

const levelTitle = (level: string) => (level === snrLevelName(null) ? 'clean' : `${level} dB`);

const turnLevel = (t: SpokenTurn) => levelTitle(snrLevelName(t.voice.snrDb));

/** Clean first, then from the highest SNR down. */
function levelOrder(a: string, b: string): number {
  const rank = (level: string) => (level === snrLevelName(null) ? Number.POSITIVE_INFINITY : Number(level));
  return rank(b) - rank(a);
}

/**
 * The voice path of a run, from the turns' stored `voice` records: the summary.json `voice` section
 * and a report section with the overall figures, WER and voice fail rate per SNR level, one example
 * per level to listen to (the first spoken turn of the first conversation, which every level shares
 * when a sweep pairs them), and the misheard turns with their driver and reply audio.
 * Null when the run has no spoken turns.
 */
export function voiceReport(options: VoiceReportOptions = {}): ConversationCollector<VoiceReport> {
  const turns: SpokenTurn[] = [];
  const outcomes: VoiceConversationOutcome[] = [];
  return {
    add(result: ConversationResult, combined?: CombinedVerdict) {
      const spoken = result.turns.filter((turn) => turn.voice);
      if (spoken.length === 0) return;
      outcomes.push({ snrDb: result.spec.snrDb ?? spoken[0].voice!.snrDb, outcome: (combined ?? combinedVerdict(result)).outcome });
      for (const turn of spoken) turns.push({ key: result.spec.key, turn: turn.index, voice: turn.voice! });
    },
    finish: () => (turns.length === 0 ? null : buildVoiceReport(turns, outcomes, options)),
  };
}

function buildVoiceReport(turns: readonly SpokenTurn[], outcomes: readonly VoiceConversationOutcome[], options: VoiceReportOptions): VoiceReport {
  const limit = options.limit ?? MISHEARD_LIMIT;
  const exported = new Map<string, boolean>();
  const summary = buildVoiceSummary(turns.map((t) => t.voice), outcomes);
  const players = (t: SpokenTurn) =>
    (['driver', 'reply'] as const)
      .map((side) => {
        if (side === 'reply' && t.voice.replyDurationMs === null) return '<span class="muted">no reply audio</span>';
        const name = `turn${t.turn}-${side}.wav`;
        const path = audioPath(t.key, name);
        if (!exported.has(path)) exported.set(path, options.exportAudio?.(t.key, name, path) ?? false);
        return exported.get(path) ? `<audio controls preload="none" src="${h(path)}" title="${side}"></audio>` : `<span class="muted">${side} audio not saved</span>`;
      })
      .join(' ');

  const levels = Object.keys(summary.bySnr).sort(levelOrder);
  const levelRows = levels
    .map((level) => {
      const s = summary.bySnr[level];
      return `<tr><td>${h(levelTitle(level))}</td><td class="n">${s.conversations}</td><td class="n">${pct(s.failRate)}</td><td class="n">${s.turns}</td><td class="n">${pct(s.headUnitAsrWer)}</td><td class="n">${pct(s.voiceFailRate)}</td></tr>`;
    })
    .join('');
  const examples = levels
    .map((level) => turns.find((t) => snrLevelName(t.voice.snrDb) === level))
    .filter((t): t is SpokenTurn => t !== undefined)
    .map((t) => `<tr><td>${h(turnLevel(t))}</td><td>${h(t.voice.utteranceText)}</td><td>${h(t.voice.recognizedText ?? '–')}</td><td>${players(t)}</td></tr>`)
    .join('');
  const misheard = turns.filter((t) => (t.voice.headUnitAsrWer ?? 0) > 0 || t.voice.voiceError !== null);
  const misheardRows = misheard
    .slice(0, limit)
    .map(
      (t) =>
        `<tr><td>${h(t.key)}</td><td class="n">${t.turn + 1}</td><td>${h(turnLevel(t))}</td><td>${h(t.voice.utteranceText)}</td>` +
        `<td>${h(t.voice.recognizedText ?? '–')}</td><td class="n">${pct(t.voice.headUnitAsrWer)}</td><td>${h(t.voice.voiceError ?? '')}</td><td>${players(t)}</td></tr>`,
    )
    .join('');
  const more = misheard.length > limit ? `<p class="muted">First ${limit} of ${misheard.length} misheard turns; the bench app plays every turn's audio.</p>` : '';
  const html =
    `<p>Spoken turns: ${summary.turns}. Head-unit recognition WER ${pct(summary.headUnitAsrWer)} (its reported recognised text against what the driver said); ` +
    `bench transcription of the replies WER ${pct(summary.replyTranscriptionWer)}; first reply audio ${ms(summary.firstReplyLatencyMs.p50)} p50 / ${ms(summary.firstReplyLatencyMs.p95)} p95 after the driver stopped speaking; ` +
    `reply duration ${ms(summary.replyDurationMs.p50)} p50; barge-in events ${summary.bargeInEvents}.</p>` +
    `<table><thead><tr><th>SNR</th><th class="n">conversations</th><th class="n">fail rate</th><th class="n">turns</th><th class="n">head-unit WER</th><th class="n">turns failed on the voice path</th></tr></thead><tbody>${levelRows}</tbody></table>` +
    `<p class="muted">Fail rate: conversations failed / decided at that level, as the run's fail rate. A turn fails on the voice path when the head unit misheard at least one word or no reply audio came. WERs are corpus-level (all edits over all words).</p>` +
    `<h3>Listen: one turn per level</h3><table><thead><tr><th>SNR</th><th>driver said</th><th>head unit heard</th><th>audio (driver, reply)</th></tr></thead><tbody>${examples}</tbody></table>` +
    (misheard.length > 0
      ? `<h3>Misheard turns</h3>${more}<table><thead><tr><th>conversation</th><th class="n">turn</th><th>SNR</th><th>driver said</th><th>head unit heard</th><th class="n">WER</th><th>voice error</th><th>audio</th></tr></thead><tbody>${misheardRows}</tbody></table>`
      : '<p>No turn was misheard.</p>');
  return { summary, section: { title: 'Voice', html } };
}
