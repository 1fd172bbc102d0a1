import type { TimedFrame } from '../frames.ts';

/**
 * Where scheduled or replayed frames go. Every transport (candump file, SLCAN serial, SocketCAN, bridge)
 * has this shape. `send` resolves once the transport has accepted the frames; it rejects on failure.
 */
export interface FrameSink {
  readonly describe: string;
  send(frames: readonly TimedFrame[]): Promise<void>;
  close(): Promise<void>;
}
