import { z } from 'zod';

/**
 * The payload of vehicle_context (bench → unit, inside its {sessionId, payload} envelope): CAN frames of the car
 * the bench simulates, batched and time-stamped. docs/bridge-protocol.md, section "Vehicle context".
 */

/** Frames per vehicle_context message: 50 messages at 100 Hz batched every 100 ms is 500. */
export const MAX_FRAMES_PER_BATCH = 2000;
/** The largest 29-bit (extended) CAN identifier. */
export const MAX_EXTENDED_ID = 0x1fffffff;

export const VehicleContextFrameSchema = z.object({
  /** timestamp in seconds (scenario time, or Unix time for live feeds) */
  t: z.number().finite().min(0),
  id: z.number().int().min(0).max(MAX_EXTENDED_ID),
  /** 29-bit identifier; default false */
  ext: z.boolean().default(false),
  /** data bytes as hex, 0..64 bytes */
  data: z.string().regex(/^(?:[0-9A-Fa-f]{2}){0,64}$/, 'expected data as hex bytes (0-64 bytes, e.g. "DEADBEEF")'),
});
export type VehicleContextFrame = z.infer<typeof VehicleContextFrameSchema>;

/** Payload of the bridge's vehicle_context event (inside its {sessionId, payload} envelope). */
export const VehicleContextMessageSchema = z.object({
  /** name of the DBC the frames follow (e.g. "icabench_vehicle"); the head unit must know it */
  dbc: z.string().min(1).max(200),
  frames: z.array(VehicleContextFrameSchema).max(MAX_FRAMES_PER_BATCH),
});
export type VehicleContextMessage = z.infer<typeof VehicleContextMessageSchema>;
