import { describeConversationProtocol, describeLate, protocolCounts, type ProtocolSection } from '../analysis/protocol.ts';
import { escapeHtml as h } from './escape.ts';
import type { ReportSection } from './html.ts';

/** Rows of the late-reply, event and conversation tables shown in the report; the rest are counted (summary.json has all). */
export const PROTOCOL_ROWS_LIMIT = 50;

const ms = (value: number | null) => (value === null ? '–' : `${Math.round(value).toLocaleString('en')} ms`);

function table(head: readonly string[], rows: readonly string[][], total: number): string {
  if (rows.length === 0) return '<p class="muted">none</p>';
  const more = total > rows.length ? `<p class="muted">… and ${total - rows.length} more (summary.json lists them all)</p>` : '';
  return `<table><thead><tr>${head.map((c) => `<th>${h(c)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>${more}`;
}

/** The report's "Head unit protocol" section: anomaly counts, the unit's link over the run, late replies with how late, affected conversations. */
export function protocolSection(section: ProtocolSection): ReportSection {
  const counts = protocolCounts(section);
  const countTable = `<table data-section="protocol-counts"><tbody>${counts.map(([k, v]) => `<tr><td>${h(k)}</td><td class="n">${h(String(v))}</td></tr>`).join('')}</tbody></table>`;
  const stopped = section.stopped ? `<p class="err"><b>The run stopped:</b> ${h(section.stopped)}</p>` : '';
  const events = table(
    ['time', 'event', 'unit', 'address', 'detail'],
    section.events.slice(0, PROTOCOL_ROWS_LIMIT).map((e) => [
      h(e.at),
      h(e.kind),
      h(e.unit),
      e.kind === 'replaced' ? `${h(e.previousAddress ?? '?')} → ${h(e.address ?? '?')}` : h(e.address ?? ''),
      h([e.detail, e.pausedMs === null ? null : `waited ${ms(e.pausedMs)}`].filter(Boolean).join('; ')),
    ]),
    section.events.length,
  );
  const late = table(
    ['conversation', 'turn', 'how late'],
    section.late.slice(0, PROTOCOL_ROWS_LIMIT).map((l) => [h(l.key), l.turn === null ? 'session_ready' : String(l.turn + 1), h(describeLate(l))]),
    section.late.length,
  );
  const beforeHello = table(
    ['conversation', 'event', 'turn', 'content'],
    section.beforeHelloMessages
      .slice(0, PROTOCOL_ROWS_LIMIT)
      .map((m) => [h(m.key ?? '(no session of this run)'), h(m.event), m.turn === null ? '–' : String(m.turn + 1), `<code>${h(m.content)}</code>`]),
    section.beforeHelloMessages.length,
  );
  const conversations = table(
    ['conversation', 'anomalies'],
    section.byConversation.slice(0, PROTOCOL_ROWS_LIMIT).map((r) => [h(r.key), h(describeConversationProtocol(r))]),
    section.byConversation.length,
  );
  const notRecorded =
    section.notRecorded.events + section.notRecorded.afterClose > 0
      ? `<p class="muted">Beyond the recording caps: ${section.notRecorded.events} events and ${section.notRecorded.afterClose} late anomalies were counted but not detailed.</p>`
      : '';
  const html = `${stopped}<p class="note">What the head unit did on the wire (docs/bridge-protocol.md, “Protocol anomalies”): findings about the unit, apart from the judges’ labels.
Late replies come after the turn timed out or its link was lost (possibly over the unit’s next connection), so after their conversation ended.</p>
${countTable}${notRecorded}
<h3>The unit’s link</h3>${events}
<h3>Late replies</h3>${late}
<h3>Messages before hello</h3>${beforeHello}
<h3>Conversations with anomalies</h3>${conversations}`;
  return { title: 'Head unit protocol', html };
}
