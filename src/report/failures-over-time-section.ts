import type { ConversationResult } from '../domain/conversation.ts';
import { threeOrMoreFailureTypes } from '../analysis/compare.ts';
import type { RunSummary } from '../analysis/profile.ts';
import { combinedVerdict } from '../analysis/verdict.ts';
import type { ReportSection } from './html.ts';

const WIDTH = 520;
const HEIGHT = 200;
const PAD = 36;

/** One conversation as the timeline sees it: when it ended (ms since the epoch) and whether it failed. */
interface Ended {
  startMs: number;
  endMs: number;
  failed: boolean;
}

/** The cumulative failed conversations at each conversation's end, minutes since the run's first conversation started. */
export function cumulativeFailures(ended: readonly Ended[]): { minutes: number; failed: number }[] {
  if (ended.length === 0) return [];
  const start = Math.min(...ended.map((e) => e.startMs));
  let failed = 0;
  return [...ended]
    .sort((a, b) => a.endMs - b.endMs)
    .map((e) => {
      if (e.failed) failed += 1;
      return { minutes: (e.endMs - start) / 60_000, failed };
    });
}

function stepChart(points: readonly { minutes: number; failed: number }[]): string {
  const maxX = Math.max(points.at(-1)?.minutes ?? 0, 1e-9);
  const maxY = Math.max(points.at(-1)?.failed ?? 0, 1);
  const x = (m: number) => PAD + (m / maxX) * (WIDTH - 2 * PAD);
  const y = (f: number) => HEIGHT - PAD - (f / maxY) * (HEIGHT - 2 * PAD);
  let path = `M${x(0).toFixed(1)},${y(0).toFixed(1)}`;
  let last = 0;
  for (const p of points) {
    path += ` H${x(p.minutes).toFixed(1)} V${y(p.failed).toFixed(1)}`;
    last = p.failed;
  }
  const axes =
    `<line x1="${PAD}" y1="${HEIGHT - PAD}" x2="${WIDTH - PAD}" y2="${HEIGHT - PAD}" stroke="#718096"/><line x1="${PAD}" y1="${PAD}" x2="${PAD}" y2="${HEIGHT - PAD}" stroke="#718096"/>` +
    `<text x="${WIDTH - PAD}" y="${HEIGHT - 8}" text-anchor="end" font-size="11">${maxX.toFixed(1)} min</text><text x="${PAD - 4}" y="${PAD + 4}" text-anchor="end" font-size="11">${maxY}</text>` +
    `<text x="${PAD - 4}" y="${HEIGHT - PAD}" text-anchor="end" font-size="11">0</text>`;
  return `<svg role="img" aria-label="cumulative failed conversations over the run, ${last} at the end" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}">${axes}<path d="${path}" fill="none" stroke="#c0392b" stroke-width="2"/></svg>`;
}

/**
 * "Failures over time" (Negi et al., Fig. 1 bottom: cumulative failures over the time budget): the failed
 * conversations counted at the moment each ended, over the run's wall-clock time, and the share of conversations
 * with at least three distinct failure types (§VI, the summary's figure: threeOrMoreFailureTypes). Self-contained SVG, no script.
 */
export function failuresOverTimeSection() {
  const ended: Ended[] = [];
  return {
    add(result: ConversationResult, combined = combinedVerdict(result)): void {
      const startMs = Date.parse(result.startedAt);
      if (!Number.isFinite(startMs)) return;
      ended.push({ startMs, endMs: startMs + result.durationMs, failed: combined.outcome === 'fail' });
    },
    finish(summary: Pick<RunSummary, 'perConversation'>): ReportSection | null {
      if (ended.length === 0) return null;
      const points = cumulativeFailures(ended);
      const conversations = summary.perConversation.length;
      const three = Math.round((threeOrMoreFailureTypes(summary) ?? 0) * conversations);
      return {
        title: 'Failures over time',
        html:
          `<p>Failed conversations, counted as each ended, over the run's wall-clock time: ${points.at(-1)!.failed} of ${ended.length} in ${points.at(-1)!.minutes.toFixed(1)} minutes. ` +
          `The slope is the discovery rate (the paper's Fig. 1, bottom, over a 4-hour budget). ` +
          `${three} of ${conversations} conversations (${((three / conversations) * 100).toFixed(1)} %) have at least three distinct failure types.</p>${stepChart(points)}`,
      };
    },
  };
}
