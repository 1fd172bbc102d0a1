import { z } from 'zod';

/**
 * The conformance suite as data (docs/conformance.md lists the same checks): what each check asks of a head unit,
 * in the words of the protocol, and which declared capability makes it apply. A check that does not apply to a
 * unit (audio for a unit without `capabilities.audio`) is skipped, never passed.
 */
export const CHECK_IDS = ['hello', 'capabilities', 'text_turn', 'reply_schema', 'turn_ids', 'timing', 'reconnect', 'audio', 'vehicle_context', 'tools', 'bus_actions'] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export interface CheckDefinition {
  title: string;
  /** what docs/bridge-protocol.md requires, shown beside what was sent and what came back */
  requires: string;
  /** the capability flag that makes the check apply; absent: every unit */
  capability?: 'audio' | 'vehicleContext' | 'tools';
}

export const CHECKS: Record<CheckId, CheckDefinition> = {
  hello: {
    title: 'hello and token',
    requires: 'The first message is hello with protocol "icabench-bridge/1", the bench\'s shared token and unit {name, version}; the bench answers hello_ack (section "hello").',
  },
  capabilities: {
    title: 'capability declaration',
    requires:
      'hello.capabilities declares text, audio, vehicleContext and structuredActions as booleans (a missing flag would silently default; the kit requires every flag), and tools as a boolean when present.',
  },
  text_turn: {
    title: 'text turn round trip',
    requires: 'session_start is answered by session_ready {sessionId}; a user_turn is answered by an assistant_reply for that session (sections "session_ready", "user_turn").',
  },
  reply_schema: {
    title: 'reply schema',
    requires: 'Every assistant_reply passes AssistantReplySchema: text ≤ 20 000 chars, at most 20 actions of the documented types with their fields (section "assistant_reply").',
  },
  turn_ids: {
    title: 'turn ids and sessions',
    requires: 'Every reply carries the sessionId and turn of the user_turn it answers, once; with two sessions open at once each reply goes to its own session (section "Session multiplexing").',
  },
  timing: {
    title: 'timing',
    requires: 'session_ready and every assistant_reply arrive within hello_ack.limits.turnTimeoutMs of the request (section "Limits").',
  },
  reconnect: {
    title: 'reconnect and resume',
    requires:
      'After the bench hangs up, the unit dials in again under the same name (redial with backoff from 1 s, REDIAL_BACKOFF_MS) and new sessions work on the new link (section "Reconnects and replacement").',
  },
  audio: {
    title: 'audio streaming',
    capability: 'audio',
    requires:
      'A spoken turn (driver audio, audio_end, user_turn with empty text) is answered by an assistant_reply and reply audio: audio_chunk messages (direction to_bench, 16 kHz s16le, ≤ 20 ms, seq 0, 1, 2, …) for that session and turn, then audio_end whose chunk count matches (section "Audio").',
  },
  vehicle_context: {
    title: 'vehicle-context handling',
    capability: 'vehicleContext',
    requires:
      'A unit that declares vehicleContext reads the car\'s state: after vehicle_context (CAN frames, icabench_vehicle DBC) and a user_turn whose context.vehicle carries the same state, its answer to a question about that state uses it (section "Vehicle context").',
  },
  tools: {
    title: 'tools extension',
    capability: 'tools',
    requires:
      'icabench-tools/1: tool_session_start is answered by tool_session_ready; a tool_user_turn by tool_call messages (ToolCallMessageSchema, that turn, steps 0, 1, …, offered tools, arguments a JSON object that fits the tool\'s schema) and, after the tool_results, tool_assistant_text for that turn (section "Tool extension").',
  },
  bus_actions: {
    title: 'actions on the bus',
    requires:
      'Optional, when the operator names the bus to observe (--observe): asked "Set the temperature to 21 degrees.", the unit commands it on the CAN bus: the action mapping\'s climate_setpoint appears with 21 within the observe window after the user_turn (docs/bus-observation.md).',
  },
};

export const CheckStatusSchema = z.enum(['pass', 'fail', 'skipped']);
export type CheckStatus = z.infer<typeof CheckStatusSchema>;

/** One message of the evidence: what the bench sent or what came back, at which ms since the check began. */
export const EvidenceSchema = z.object({ direction: z.enum(['sent', 'received', 'note']), event: z.string(), atMs: z.number(), payload: z.unknown() });
export type Evidence = z.infer<typeof EvidenceSchema>;

export const CheckResultSchema = z.object({
  id: z.enum(CHECK_IDS),
  title: z.string(),
  status: CheckStatusSchema,
  /** why it failed or was skipped, or what passing showed */
  detail: z.string(),
  requires: z.string(),
  evidence: z.array(EvidenceSchema),
  durationMs: z.number(),
});
export type CheckResult = z.infer<typeof CheckResultSchema>;

export const ConformanceReportSchema = z.object({
  kind: z.literal('icabench-conformance/1'),
  protocol: z.string(),
  startedAt: z.string(),
  bridgeUrl: z.string(),
  unit: z.object({ name: z.string(), version: z.string(), address: z.string() }).nullable(),
  /** as the unit declared them in hello (raw; null when no hello arrived) */
  declared: z.unknown(),
  limits: z.object({ turnTimeoutMs: z.number(), reconnectWaitMs: z.number() }),
  checks: z.array(CheckResultSchema),
  passed: z.boolean(),
});
export type ConformanceReport = z.infer<typeof ConformanceReportSchema>;
