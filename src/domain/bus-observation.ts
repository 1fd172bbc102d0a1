import { z } from 'zod';

/**
 * What the bench saw a head unit do on the CAN bus during one turn (issue #32): the actions it decoded
 * from the unit's own frames, each with the frames that show it. Stored with the turn (TurnRecord.observed)
 * and read by the oracle beside the actions the unit announced (src/judge/bus-evidence.ts).
 */

/** The kinds of action a mapping can read off the bus (hardware/mappings/*-actions.yaml). */
export const OBSERVED_ACTION_KINDS = [
  'climate_setpoint',
  'fan_level',
  'seat_heating',
  'media_source',
  'media_volume',
  'window',
  'navigation_destination',
  'vehicle_control',
] as const;
export const ObservedActionKindSchema = z.enum(OBSERVED_ACTION_KINDS);
export type ObservedActionKind = z.infer<typeof ObservedActionKindSchema>;

/** One frame as evidence: id, data bytes and the signals it decoded to. */
export const ObservedFrameSchema = z.strictObject({
  /** ms after the turn was sent */
  atMs: z.number(),
  id: z.number().int().min(0),
  extended: z.boolean(),
  message: z.string(),
  /** data bytes, upper-case hex */
  data: z.string(),
  /** physical values of the frame's signals (the VAL_ label where the DBC gives one) */
  signals: z.record(z.string(), z.union([z.number(), z.string()])),
});
export type ObservedFrame = z.infer<typeof ObservedFrameSchema>;

export const ObservedActionSchema = z.strictObject({
  kind: ObservedActionKindSchema,
  /** number in the bench's unit (°C, level, percent), a media source, true/false for a control; a destination as "lat,lon" */
  value: z.union([z.number(), z.string(), z.boolean()]),
  /** which seat or window; which control (lane_keeping_assist, show_full_text, …) for vehicle_control */
  target: z.string().optional(),
  /** ms after the turn was sent */
  atMs: z.number(),
  frame: ObservedFrameSchema,
});
export type ObservedAction = z.infer<typeof ObservedActionSchema>;

/** Every action seen on the bus in one turn's window. */
export const BusObservationSchema = z.strictObject({
  /** how long after sending the turn the bench watched */
  windowMs: z.number().min(0),
  /** the action kinds the mapping reads: nothing of such a kind in the window means the unit did not do it */
  carries: z.array(z.string()),
  actions: z.array(ObservedActionSchema),
  /** unit frames seen in the window (decoded or not) */
  framesSeen: z.number().int().min(0),
  /** actions beyond the per-turn cap were counted, not kept */
  actionsDropped: z.number().int().min(0).default(0),
});
export type BusObservation = z.infer<typeof BusObservationSchema>;

/** "kind" or "kind:target": how a mapping names what it carries (vehicle_control per control). */
export function carriedKey(kind: ObservedActionKind, target?: string): string {
  return kind === 'vehicle_control' && target ? `${kind}:${target}` : kind;
}

/** One observed action in words, with its frame: the evidence text of a finding. */
export function describeObservedAction(action: ObservedAction): string {
  const f = action.frame;
  const signals = Object.entries(f.signals)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  const what = `${action.kind}${action.target ? ` ${action.target}` : ''} = ${action.value}`;
  return `${what} (${f.message} 0x${f.id.toString(16).toUpperCase()}#${f.data} ${signals}, +${Math.round(action.atMs)} ms)`;
}

/** A turn's observation in one line per action, for the report and the app ("nothing" when the window showed none). */
export function observationLines(observation: BusObservation): string[] {
  if (observation.actions.length === 0) return [`nothing on the bus within ${observation.windowMs} ms (${observation.framesSeen} unit frame(s))`];
  const lines = observation.actions.map(describeObservedAction);
  if (observation.actionsDropped > 0) lines.push(`${observation.actionsDropped} more action(s) counted, not kept`);
  return lines;
}
