import { z } from 'zod';
import type { TimedFrame } from './frames.ts';
import { bytesToHex, hexToBytes, MAX_EXTENDED_ID } from './frames.ts';
import type { FrameSink } from './transports/sink.ts';

/** Frames per vehicle_context message: 50 messages at 100 Hz batched every 100 ms is 500. */
export const MAX_FRAMES_PER_BATCH = 2000;

export const VehicleContextFrameSchema = z.object({
  /** timestamp in seconds (scenario time, or Unix time for live feeds) */
  t: z.number().finite().min(0),
  id: z.number().int().min(0).max(MAX_EXTENDED_ID),
  /** 29-bit identifier; default false */
  ext: z.boolean().default(false),
  /** data bytes as hex, 0..64 bytes */
  data: z.string().regex(/^(?:[0-9A-Fa-f]{2}){0,64}$/, 'expected data as hex bytes (0-64 bytes, e.g. "DEADBEEF")'),
});

/** Payload of the bridge's vehicle_context event (inside its {sessionId, payload} envelope). */
export const VehicleContextMessageSchema = z.object({
  /** name of the DBC the frames follow (e.g. "icabench_vehicle"); the head unit must know it */
  dbc: z.string().min(1).max(200),
  frames: z.array(VehicleContextFrameSchema).max(MAX_FRAMES_PER_BATCH),
});
export type VehicleContextMessage = z.infer<typeof VehicleContextMessageSchema>;

export function framesToMessage(dbc: string, frames: readonly TimedFrame[]): VehicleContextMessage {
  return { dbc, frames: frames.map((f) => ({ t: f.t, id: f.id, ext: f.extended, data: bytesToHex(f.data) })) };
}

export function messageToFrames(message: VehicleContextMessage): TimedFrame[] {
  return message.frames.map((f) => ({ t: f.t, id: f.id, extended: f.ext, data: hexToBytes(f.data)! }));
}

/**
 * Sends frames as vehicle_context messages through a caller-supplied emitter, e.g.
 * `(payload) => connection.sendVehicleContext(sessionId, payload)` of the bench's bridge connection.
 * Batches larger than MAX_FRAMES_PER_BATCH are split.
 */
export class BridgeFrameSink implements FrameSink {
  readonly describe: string;

  constructor(
    private readonly dbc: string,
    private readonly emit: (payload: VehicleContextMessage) => void | Promise<void>,
  ) {
    this.describe = `bridge vehicle_context (${dbc})`;
  }

  async send(frames: readonly TimedFrame[]): Promise<void> {
    for (let i = 0; i < frames.length; i += MAX_FRAMES_PER_BATCH) {
      await this.emit(framesToMessage(this.dbc, frames.slice(i, i + MAX_FRAMES_PER_BATCH)));
    }
  }

  async close(): Promise<void> {}
}
