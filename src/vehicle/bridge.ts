import type { TimedFrame } from './frames.ts';
import { bytesToHex, hexToBytes } from './frames.ts';
import { MAX_FRAMES_PER_BATCH, type VehicleContextMessage } from '../protocol/vehicle.ts';
import type { FrameSink } from './transports/sink.ts';

/** The payload schema is wire format: src/protocol/vehicle.ts holds it (from the bridge SDK). */
export { MAX_FRAMES_PER_BATCH, VehicleContextFrameSchema, VehicleContextMessageSchema, type VehicleContextMessage } from '../protocol/vehicle.ts';

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
