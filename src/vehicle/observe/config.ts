import { z } from 'zod';
import { ObserveTransportSchema } from './sources.ts';

/** How long after a turn is sent the bench watches the bus for what the unit does (vehicle.observe.windowMs). */
export const DEFAULT_OBSERVE_WINDOW_MS = 2000;

/**
 * `vehicle.observe`: listen (never send) on the bus the head unit drives and judge what it does there
 * (docs/bus-observation.md). Frames of the messages the action mapping names become observed actions.
 */
export const ObserveConfigSchema = z.strictObject({
  /** candump:FILE_OR_TTY, slcan:/dev/ttyX, socketcan:IFACE or replay:FILE (a recorded trace) */
  transport: ObserveTransportSchema,
  /** action mapping name (hardware/mappings/<name>.yaml) or path: which unit-sent messages and signals are which actions */
  mapping: z.string().min(1).default('icabench_vehicle-actions'),
  /** a requested change not seen on the bus this long after the turn was sent was not done; the bench waits it out each turn */
  windowMs: z.number().int().min(0).max(60_000).default(DEFAULT_OBSERVE_WINDOW_MS),
  /** SLCAN adapters: the bus bit rate */
  bitrate: z.union([z.literal(125_000), z.literal(250_000), z.literal(500_000), z.literal(1_000_000)]).default(500_000),
});
export type ObserveConfig = z.infer<typeof ObserveConfigSchema>;
