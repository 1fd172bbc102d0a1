import { z } from 'zod';
import type { ConversationResult, ProtocolAnomalies } from '../domain/conversation.ts';
import type { RunFact } from '../domain/run-fact.ts';
import { BRIDGE_FACTS } from '../bridge/facts.ts';

/**
 * The `protocol` section of summary.json: what the head unit did wrong on the wire, per conversation
 * and per run. One place combines the two records the bridge keeps — each conversation's own counts
 * (stored with it) and the run facts (anomalies that arrived after their conversation was recorded,
 * unit events, per-invocation counts) — so summary.json, the report and the bench app agree.
 */

const count = z.number().int().min(0);

/** Why the bench had stopped waiting when a late reply came: the turn timed out, or its link was lost (the reply may come over the next connection). */
const LateCauseSchema = z.enum(['timeout', 'link_lost']);
const LateReplySchema = z.object({ turn: z.number().int().min(0).nullable(), lateMs: z.number().min(0), cause: LateCauseSchema });

/** A message the unit sent on a new connection before its hello (e.g. replies its socket.io client flushed on reconnect), with its content. */
const BeforeHelloMessageSchema = z.object({
  /** the conversation it named; null when it named no session of this run */
  key: z.string().nullable(),
  event: z.string(),
  turn: z.number().int().nullable(),
  content: z.string(),
});

export const ConversationProtocolSchema = z.object({
  key: z.string(),
  duplicateReplies: count,
  /** late replies of this conversation, each with ms after the bench stopped waiting (the deadline, or the lost link) */
  lateReplies: z.array(LateReplySchema),
  wrongTurnReplies: count,
  invalidMessages: count,
  linkLost: z.enum(['disconnected', 'replaced']).nullable(),
  /** messages naming this conversation that came on a new connection before its hello */
  beforeHello: count,
});
export type ConversationProtocol = z.infer<typeof ConversationProtocolSchema>;

const UnitEventSchema = z.object({
  at: z.string(),
  kind: z.enum(['connected', 'reconnected', 'disconnected', 'replaced', 'paused', 'resumed', 'stopped', 'incident']),
  unit: z.string(),
  address: z.string().nullable(),
  /** replaced: the connection that was hung up */
  previousAddress: z.string().nullable(),
  /** disconnected: socket.io's reason; stopped: why the run stopped; incident: what was contained */
  detail: z.string().nullable(),
  /** resumed, stopped: how long new conversations waited */
  pausedMs: z.number().min(0).nullable(),
});

export const ProtocolSectionSchema = z.object({
  /** conversations the bridge kept a record for */
  conversations: count,
  /** conversations with at least one anomaly, while they ran or after */
  affectedConversations: count,
  /** totals over the run's conversations (while they ran and after they were recorded) */
  duplicateReplies: count,
  lateReplies: count,
  wrongTurnReplies: count,
  invalidMessages: count,
  /** conversations cut off because the unit's link dropped */
  linkLost: z.object({ disconnected: count, replaced: count }),
  /** the unit's messages the bench could not tie to any of its sessions */
  unattributed: count,
  /** unsolicited messages dropped over maxMessagesPerSecond */
  droppedOverRate: count,
  /** connections refused at hello (wrong token or protocol, invalid or oversized hello, none in time) */
  refusedConnections: count,
  /** bench-side exceptions contained to one socket */
  contained: count,
  /** messages the unit sent on a connection before its hello (counted whether their content was kept or not) */
  beforeHello: count,
  /** those messages with their content, in arrival order */
  beforeHelloMessages: z.array(BeforeHelloMessageSchema),
  reconnects: count,
  disconnects: count,
  replacements: count,
  pauses: count,
  /** why the run stopped by itself (the unit did not come back within the grace); null when it did not */
  stopped: z.string().nullable(),
  /** late replies, slowest first */
  late: z.array(LateReplySchema.extend({ key: z.string() })),
  /** the unit's link over the run, in order */
  events: z.array(UnitEventSchema),
  /** only the conversations with an anomaly, in plan order */
  byConversation: z.array(ConversationProtocolSchema),
  /** events and after-close anomalies beyond the recording caps (counted, not detailed) */
  notRecorded: z.object({ events: count, afterClose: count }),
});
export type ProtocolSection = z.infer<typeof ProtocolSectionSchema>;

const AfterCloseFactSchema = z.object({
  key: z.string(),
  kind: z.enum(['duplicate', 'late', 'wrong_turn', 'invalid', 'disconnected', 'replaced']),
  turn: z.number().int().nullable(),
  lateMs: z.number().nullable(),
  /** absent in runs recorded before link-lost late replies were told apart: those were timeouts */
  cause: LateCauseSchema.nullable().optional(),
});
const CountsFactSchema = z.object({
  invocation: z.string(),
  unattributed: count,
  dropped: count,
  contained: count,
  beforeHello: count.default(0),
  refusedConnections: count,
  eventsNotRecorded: count,
  afterCloseNotRecorded: count,
});
const EventFactSchema = z.object({
  unit: z.string(),
  address: z.string().optional(),
  previousAddress: z.string().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
  pausedMs: z.number().optional(),
  initial: z.boolean().optional(),
});

const EVENT_KINDS: Record<string, UnitEvent['kind']> = {
  [BRIDGE_FACTS.connected]: 'connected',
  [BRIDGE_FACTS.disconnected]: 'disconnected',
  [BRIDGE_FACTS.replaced]: 'replaced',
  [BRIDGE_FACTS.paused]: 'paused',
  [BRIDGE_FACTS.resumed]: 'resumed',
  [BRIDGE_FACTS.stopped]: 'stopped',
  [BRIDGE_FACTS.incident]: 'incident',
};
type UnitEvent = z.infer<typeof UnitEventSchema>;

function emptyRow(key: string): ConversationProtocol {
  return { key, duplicateReplies: 0, lateReplies: [], wrongTurnReplies: 0, invalidMessages: 0, linkLost: null, beforeHello: 0 };
}

function isAffected(row: ConversationProtocol): boolean {
  return row.duplicateReplies + row.lateReplies.length + row.wrongTurnReplies + row.invalidMessages + row.beforeHello > 0 || row.linkLost !== null;
}

/** A conversation's own record plus what arrived for it after it was recorded (and before a hello that named it). */
export function conversationProtocol(
  key: string,
  stored: ProtocolAnomalies | undefined,
  after: readonly z.infer<typeof AfterCloseFactSchema>[] = [],
  beforeHello = 0,
): ConversationProtocol {
  const row = emptyRow(key);
  row.beforeHello = beforeHello;
  if (stored) {
    row.duplicateReplies = stored.duplicateReplies;
    row.wrongTurnReplies = stored.wrongTurnReplies;
    row.invalidMessages = stored.invalidMessages;
    row.linkLost = stored.linkLost;
  }
  for (const fact of after) {
    if (fact.kind === 'late') row.lateReplies.push({ turn: fact.turn !== null && fact.turn >= 0 ? fact.turn : null, lateMs: fact.lateMs ?? 0, cause: fact.cause ?? 'timeout' });
    else if (fact.kind === 'duplicate') row.duplicateReplies += 1;
    else if (fact.kind === 'wrong_turn') row.wrongTurnReplies += 1;
    else if (fact.kind === 'invalid') row.invalidMessages += 1;
    else row.linkLost ??= fact.kind;
  }
  return row;
}

/** "2 duplicate · 1 late (+840 ms)" for a table cell; empty when the conversation had none. */
export function describeConversationProtocol(row: ConversationProtocol): string {
  const parts: string[] = [];
  if (row.duplicateReplies) parts.push(`${row.duplicateReplies} duplicate`);
  if (row.lateReplies.length) parts.push(`${row.lateReplies.length} late (${row.lateReplies.map(describeLate).join(', ')})`);
  if (row.wrongTurnReplies) parts.push(`${row.wrongTurnReplies} wrong turn`);
  if (row.invalidMessages) parts.push(`${row.invalidMessages} invalid`);
  if (row.linkLost) parts.push(`link ${row.linkLost}`);
  if (row.beforeHello) parts.push(`${row.beforeHello} before hello`);
  return parts.join(' · ');
}

/** "+840 ms after the timeout" / "+120 ms after the link was lost". */
export function describeLate(late: { lateMs: number; cause: 'timeout' | 'link_lost' }): string {
  return `+${Math.round(late.lateMs)} ms after ${late.cause === 'timeout' ? 'the timeout' : 'the link was lost'}`;
}

/** The section's counts with their labels, in the order the report and the bench app show them. */
export function protocolCounts(section: ProtocolSection): [label: string, value: number | string][] {
  return [
    ['duplicate replies', section.duplicateReplies],
    ['late replies', section.lateReplies],
    ['wrong-turn replies', section.wrongTurnReplies],
    ['invalid messages', section.invalidMessages],
    ['unattributed messages', section.unattributed],
    ['messages before hello', section.beforeHello],
    ['dropped over the rate limit', section.droppedOverRate],
    ['conversations cut off (disconnected / replaced)', `${section.linkLost.disconnected} / ${section.linkLost.replaced}`],
    ['reconnects', section.reconnects],
    ['disconnects', section.disconnects],
    ['replacements', section.replacements],
    ['pauses of new conversations', section.pauses],
    ['refused connections', section.refusedConnections],
    ['bench-side errors contained', section.contained],
  ];
}

export interface ProtocolReport {
  /** per conversation, for the report's column (null when the run has no bridge record) */
  rowFor(result: ConversationResult): ConversationProtocol | null;
  add(result: ConversationResult): void;
  /** the summary section; null when the run did not go over the bridge */
  finish(): ProtocolSection | null;
}

/** Builds the protocol section from a run's facts (read first, they are few) and its conversations (streamed once). */
export function protocolReport(facts: readonly RunFact[]): ProtocolReport {
  const afterClose = new Map<string, z.infer<typeof AfterCloseFactSchema>[]>();
  const beforeHello: z.infer<typeof BeforeHelloMessageSchema>[] = [];
  const beforeHelloOf = new Map<string, number>();
  const lastCounts = new Map<string, z.infer<typeof CountsFactSchema>>();
  const events: UnitEvent[] = [];
  let bridgeFacts = 0;
  for (const fact of facts) {
    if (!fact.kind.startsWith('bridge.')) continue;
    bridgeFacts += 1;
    if (fact.kind === BRIDGE_FACTS.afterClose) {
      const parsed = AfterCloseFactSchema.safeParse(fact.data);
      if (!parsed.success) continue;
      const list = afterClose.get(parsed.data.key) ?? [];
      list.push(parsed.data);
      afterClose.set(parsed.data.key, list);
    } else if (fact.kind === BRIDGE_FACTS.beforeHello) {
      const parsed = BeforeHelloMessageSchema.safeParse(fact.data);
      if (!parsed.success) continue;
      beforeHello.push(parsed.data);
      if (parsed.data.key !== null) beforeHelloOf.set(parsed.data.key, (beforeHelloOf.get(parsed.data.key) ?? 0) + 1);
    } else if (fact.kind === BRIDGE_FACTS.counts) {
      const parsed = CountsFactSchema.safeParse(fact.data);
      if (parsed.success) lastCounts.set(parsed.data.invocation, parsed.data);
    } else if (EVENT_KINDS[fact.kind]) {
      const parsed = EventFactSchema.safeParse(fact.data);
      if (!parsed.success) continue;
      const e = parsed.data;
      const kind = EVENT_KINDS[fact.kind] === 'connected' && e.initial === false ? 'reconnected' : EVENT_KINDS[fact.kind];
      events.push({
        at: fact.at,
        kind,
        unit: e.unit,
        address: e.address ?? null,
        previousAddress: e.previousAddress ?? null,
        detail: e.reason ?? e.message ?? null,
        pausedMs: e.pausedMs ?? null,
      });
    }
  }

  const rows: ConversationProtocol[] = [];
  const seen = new Set<string>();
  let recorded = 0;
  const rowFor = (result: ConversationResult): ConversationProtocol | null => {
    const key = result.spec.key;
    return result.protocol || afterClose.has(key) || beforeHelloOf.has(key) ? conversationProtocol(key, result.protocol, afterClose.get(key), beforeHelloOf.get(key)) : null;
  };

  return {
    rowFor,
    add(result) {
      const row = rowFor(result);
      if (result.protocol) recorded += 1;
      if (!row) return;
      seen.add(row.key);
      if (isAffected(row)) rows.push(row);
    },
    finish() {
      if (recorded === 0 && bridgeFacts === 0) return null;
      // anomalies of conversations that were never stored (a session_start that failed): still the run's
      for (const key of new Set([...afterClose.keys(), ...beforeHelloOf.keys()])) {
        if (!seen.has(key)) rows.push(conversationProtocol(key, undefined, afterClose.get(key), beforeHelloOf.get(key)));
      }
      const counts = [...lastCounts.values()];
      const sum = (pick: (c: z.infer<typeof CountsFactSchema>) => number) => counts.reduce((total, c) => total + pick(c), 0);
      const late = rows.flatMap((row) => row.lateReplies.map((l) => ({ key: row.key, ...l }))).sort((a, b) => b.lateMs - a.lateMs);
      const ofKind = (kind: UnitEvent['kind']) => events.filter((e) => e.kind === kind).length;
      return {
        conversations: recorded,
        affectedConversations: rows.length,
        duplicateReplies: rows.reduce((n, r) => n + r.duplicateReplies, 0),
        lateReplies: late.length,
        wrongTurnReplies: rows.reduce((n, r) => n + r.wrongTurnReplies, 0),
        invalidMessages: rows.reduce((n, r) => n + r.invalidMessages, 0),
        linkLost: {
          disconnected: rows.filter((r) => r.linkLost === 'disconnected').length,
          replaced: rows.filter((r) => r.linkLost === 'replaced').length,
        },
        unattributed: sum((c) => c.unattributed),
        droppedOverRate: sum((c) => c.dropped),
        refusedConnections: sum((c) => c.refusedConnections),
        contained: sum((c) => c.contained),
        beforeHello: sum((c) => c.beforeHello),
        beforeHelloMessages: beforeHello,
        reconnects: ofKind('reconnected'),
        disconnects: ofKind('disconnected'),
        replacements: ofKind('replaced'),
        pauses: ofKind('paused'),
        stopped: stopReason(events),
        late,
        events,
        byConversation: rows,
        notRecorded: { events: sum((c) => c.eventsNotRecorded), afterClose: sum((c) => c.afterCloseNotRecorded) },
      };
    },
  };
}

/** The reason of the last stop, unless the run was resumed afterwards (a later invocation connected). */
function stopReason(events: readonly UnitEvent[]): string | null {
  let reason: string | null = null;
  for (const e of events) {
    if (e.kind === 'stopped') reason = e.detail;
    else if (e.kind === 'connected') reason = null;
  }
  return reason;
}
