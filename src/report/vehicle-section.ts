import type { ConversationResult, TurnRecord } from '../domain/conversation.ts';
import type { ConversationCollector, ReportSection } from './html.ts';
import { escapeHtml as h } from './escape.ts';

/** Conversations that get a timeline in the report; the store keeps every turn's context for the rest. */
export const VEHICLE_TIMELINE_LIMIT = 40;

const WIDTH = 260;
const HEIGHT = 48;

function polyline(values: number[], max: number, color: string): string {
  if (values.length === 0) return '';
  const step = values.length > 1 ? WIDTH / (values.length - 1) : 0;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(HEIGHT - 4 - (v / max) * (HEIGHT - 8)).toFixed(1)}`).join(' ');
  return `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points}"/>`;
}

/**
 * The vehicle context each conversation saw, turn by turn: speed (blue, 0–150 km/h) and state of
 * charge (green, 0–100 %) as small inline SVG timelines, with the turns that got a safety_violation
 * marked in red. Self-contained markup: no script, no external resource.
 */
export function vehicleTimelineSection(limit = VEHICLE_TIMELINE_LIMIT): ConversationCollector<ReportSection> {
  const rows: string[] = [];
  let withContext = 0;
  return {
    add(result: ConversationResult) {
      const turns = result.turns.filter((t) => t.context.vehicle);
      if (turns.length === 0) return;
      withContext++;
      if (rows.length < limit) rows.push(timelineRow(result.spec.key, turns));
    },
    finish() {
      if (withContext === 0) return null;
      const note = withContext > rows.length ? `<p>First ${rows.length} of ${withContext} conversations with vehicle context; every turn's context is in the store and in the JSONL export.</p>` : '';
      return {
        title: 'Vehicle context',
        html:
          `<p>Speed (blue, 0–150 km/h) and state of charge (green, 0–100 %) at each turn, as the drive scenario fed them; red dots mark turns labelled safety_violation.</p>${note}` +
          `<table><thead><tr><th>conversation</th><th>timeline</th><th>speed per turn</th><th>last gear · time</th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
      };
    },
  };
}

function timelineRow(key: string, turns: readonly TurnRecord[]): string {
  const speeds = turns.map((t) => t.context.vehicle!.speedKmh);
  const soc = turns.map((t) => t.context.vehicle!.stateOfChargePct ?? 0);
  const step = turns.length > 1 ? WIDTH / (turns.length - 1) : 0;
  const marks = turns
    .map((t, i) => (t.verdicts.some((v) => v.labels.some((l) => l.label === 'safety_violation')) ? `<circle cx="${(i * step).toFixed(1)}" cy="6" r="4" fill="#c0392b"><title>turn ${t.index + 1}: safety_violation at ${t.context.vehicle!.speedKmh.toFixed(0)} km/h</title></circle>` : ''))
    .join('');
  const last = turns[turns.length - 1];
  return (
    `<tr><td>${h(key)}</td><td><svg width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="speed and charge by turn">` +
    `${polyline(speeds, 150, '#2b6cb0')}${polyline(soc, 100, '#2f855a')}${marks}</svg></td>` +
    `<td>${speeds.map((s) => s.toFixed(0)).join(' → ')} km/h</td><td>${h(last.context.vehicle!.gear)} · ${h(last.context.time)}</td></tr>`
  );
}
