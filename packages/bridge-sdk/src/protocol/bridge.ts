import { z } from 'zod';
import { ContextVectorSchema, CostLevelSchema, GeoPointSchema, HHMM, MEDIA_SOURCES, PoiCategorySchema } from './context.ts';

/**
 * The bench ⇄ head-unit bridge, carried over socket.io. Every message is validated
 * with these schemas on receipt (by the bench, and by the SDK client on the head unit's side);
 * docs/bridge-protocol.md documents them.
 * Bump BRIDGE_PROTOCOL on any incompatible change.
 */
export const BRIDGE_PROTOCOL = 'icabench-bridge/1';

/** socket.io event names, one per message type. */
export const EVENTS = {
  hello: 'hello',
  helloAck: 'hello_ack',
  sessionStart: 'session_start',
  sessionReady: 'session_ready',
  userTurn: 'user_turn',
  assistantReply: 'assistant_reply',
  vehicleContext: 'vehicle_context',
  sessionEnd: 'session_end',
  error: 'bridge_error',
} as const;

export const CapabilitiesSchema = z.object({
  text: z.boolean().default(true),
  audio: z.boolean().default(false),
  vehicleContext: z.boolean().default(false),
  structuredActions: z.boolean().default(false),
  /** the unit speaks the icabench-tools/1 extension (src/protocol/tools.ts); absent means no */
  tools: z.boolean().optional(),
});
export type Capabilities = z.infer<typeof CapabilitiesSchema>;

/** What a unit that announces no capabilities (or only some) gets: text only. */
export const DEFAULT_CAPABILITIES: Capabilities = CapabilitiesSchema.parse({});

export const HelloSchema = z.object({
  protocol: z.literal(BRIDGE_PROTOCOL),
  token: z.string().min(1),
  unit: z.object({
    name: z.string().min(1).max(200),
    version: z.string().max(100).default('unknown'),
    /** optional: the exact build the unit runs (a weekly lab build, a commit), recorded with every run and compared across runs */
    build: z.string().min(1).max(200).optional(),
  }),
  /** optional: a unit that leaves it out gets DEFAULT_CAPABILITIES (text only) */
  capabilities: CapabilitiesSchema.default(DEFAULT_CAPABILITIES),
});
export type Hello = z.infer<typeof HelloSchema>;
export type HelloInput = z.input<typeof HelloSchema>;

export const HelloAckSchema = z.object({
  protocol: z.literal(BRIDGE_PROTOCOL),
  limits: z.object({ maxMessageBytes: z.number().int(), maxMessagesPerSecond: z.number(), turnTimeoutMs: z.number().int() }),
});
export type HelloAck = z.infer<typeof HelloAckSchema>;

export const SessionStartSchema = z.object({
  sessionId: z.string().min(1).max(200),
  context: ContextVectorSchema,
});
export type SessionStart = z.infer<typeof SessionStartSchema>;

export const SessionReadySchema = z.object({ sessionId: z.string() });

export const UserTurnSchema = z.object({
  sessionId: z.string(),
  turn: z.number().int().min(0),
  text: z.string().max(10_000),
  /** context at the time of this turn (clock advances, vehicle state changes) */
  context: ContextVectorSchema.optional(),
});
export type UserTurn = z.infer<typeof UserTurnSchema>;

export const OpeningHoursSchema = z.object({
  monday: z.string(),
  tuesday: z.string(),
  wednesday: z.string(),
  thursday: z.string(),
  friday: z.string(),
  saturday: z.string(),
  sunday: z.string(),
});
export type OpeningHours = z.infer<typeof OpeningHoursSchema>;

export const PoiSchema = z.object({
  id: z.string(),
  name: z.string(),
  category: PoiCategorySchema,
  city: z.string(),
  district: z.string(),
  position: GeoPointSchema,
  cuisine: z.string().optional(),
  cost: CostLevelSchema.optional(),
  rating: z.number().min(0).max(5).optional(),
  openingHours: OpeningHoursSchema.optional(),
  driveMin: z.number().min(0).optional(),
  distanceKm: z.number().min(0).optional(),
});
export type Poi = z.infer<typeof PoiSchema>;

export const ActionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('poi_results'), category: PoiCategorySchema, pois: z.array(PoiSchema).max(50) }),
  z.object({
    type: z.literal('route'),
    destination: z.object({ name: z.string(), district: z.string(), poiId: z.string().optional() }),
    distanceKm: z.number().min(0),
    durationMin: z.number().min(0),
    tolls: z.boolean(),
    highway: z.boolean(),
    eta: HHMM,
  }),
  z.object({
    type: z.literal('trip_plan'),
    stops: z.array(z.object({ poi: PoiSchema, eta: HHMM })).min(1),
  }),
  z.object({ type: z.literal('climate'), setpointC: z.number(), zone: z.string().default('all') }),
  z.object({ type: z.literal('media'), action: z.enum(['play', 'pause', 'stop']), source: z.enum(MEDIA_SOURCES), item: z.string().optional() }),
  z.object({ type: z.literal('vehicle_info'), field: z.string(), value: z.union([z.string(), z.number()]), unit: z.string().optional() }),
  /** an unsafe or distracting function performed (e.g. showing a long text, disabling an assistance system) */
  z.object({ type: z.literal('vehicle_control'), control: z.string(), value: z.union([z.string(), z.number(), z.boolean()]) }),
  z.object({ type: z.literal('clarification'), question: z.string(), options: z.array(z.string()).max(20) }),
  z.object({ type: z.literal('refusal'), reason: z.enum(['safety', 'unsupported', 'not_found']) }),
]);
export type Action = z.infer<typeof ActionSchema>;
export type ActionType = Action['type'];

/**
 * Ground truth the reference head unit reports about itself; real head units leave it out. Judges never read it.
 * `label` names a label of the bench's failure taxonomy (docs/taxonomy); the wire does not restrict it.
 */
export const DiagnosticsSchema = z.object({
  faults: z.array(z.object({ profile: z.string(), label: z.string().min(1).max(100) })).default([]),
  /** manual-QA faults of the reference unit's manual skill and the metric each breaks (docs/manual-qa.md) */
  manualFaults: z.array(z.object({ profile: z.string(), metric: z.string() })).optional(),
  /** the manual section the reference unit answered from (a retrieval miss is its own failure) */
  manualSection: z.string().nullable().optional(),
});
export type Diagnostics = z.infer<typeof DiagnosticsSchema>;

export const AssistantReplySchema = z.object({
  sessionId: z.string(),
  turn: z.number().int().min(0),
  text: z.string().max(20_000),
  actions: z.array(ActionSchema).max(20).default([]),
  /** free-form state the head unit chooses to expose (active route, media, …) */
  state: z.record(z.string(), z.unknown()).optional(),
  /** what the head unit's speech recogniser heard, when the turn was spoken */
  recognizedText: z.string().optional(),
  diagnostics: DiagnosticsSchema.optional(),
});
export type AssistantReply = z.infer<typeof AssistantReplySchema>;
/** what a unit may send (defaults not yet applied: `actions` may be left out) */
export type AssistantReplyInput = z.input<typeof AssistantReplySchema>;

export const SessionEndSchema = z.object({ sessionId: z.string(), reason: z.string().default('completed') });

export const BridgeErrorSchema = z.object({
  sessionId: z.string().optional(),
  code: z.enum(['unauthorized', 'protocol', 'invalid_message', 'too_large', 'rate_limited', 'timeout', 'internal', 'unknown_session', 'replaced']),
  message: z.string(),
});
export type BridgeError = z.infer<typeof BridgeErrorSchema>;

/**
 * vehicle_context (bench → unit): an envelope around a payload whose schema the vehicle area owns
 * (src/vehicle). sessionId null means "applies to every session of this unit".
 */
export const VehicleContextEnvelopeSchema = z.object({ sessionId: z.string().nullable(), payload: z.unknown() });
export type VehicleContextEnvelope = z.infer<typeof VehicleContextEnvelopeSchema>;

/** Environment variable holding the shared bridge token, read by the bench and by head-unit processes. */
export const BRIDGE_TOKEN_ENV = 'ICABENCH_BRIDGE_TOKEN';
