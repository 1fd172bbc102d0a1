/** A classic or FD CAN frame. `extended` marks a 29-bit identifier. */
export interface CanFrame {
  id: number;
  extended: boolean;
  data: Uint8Array;
}

/** A frame with its timestamp in seconds (virtual scenario time or Unix time, as the producer says). */
export interface TimedFrame extends CanFrame {
  t: number;
}

export const MAX_STANDARD_ID = 0x7ff;
export { MAX_EXTENDED_ID } from '../protocol/vehicle.ts';
/** CAN FD carries at most 64 data bytes. */
export const MAX_FRAME_BYTES = 64;

export function bytesToHex(data: Uint8Array): string {
  let hex = '';
  for (const byte of data) hex += byte.toString(16).padStart(2, '0').toUpperCase();
  return hex;
}

/** Parses an even-length hex string; returns undefined when it is not one. */
export function hexToBytes(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return undefined;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

export function sameFrame(a: TimedFrame, b: TimedFrame): boolean {
  return a.t === b.t && a.id === b.id && a.extended === b.extended && bytesToHex(a.data) === bytesToHex(b.data);
}
