import type { SerialPort } from 'serialport';
import type { TimedFrame } from '../frames.ts';
import { bytesToHex } from '../frames.ts';
import type { FrameSink } from './sink.ts';

/** Lawicel SLCAN bit-rate commands (S0..S8) */
const BITRATE_CODES: Record<number, string> = {
  10_000: 'S0', 20_000: 'S1', 50_000: 'S2', 100_000: 'S3', 125_000: 'S4',
  250_000: 'S5', 500_000: 'S6', 800_000: 'S7', 1_000_000: 'S8',
};
export const SLCAN_BITRATES = Object.keys(BITRATE_CODES).map(Number);

/** One frame as an SLCAN transmit command: t<iii><len><data>\r (standard) or T<iiiiiiii><len><data>\r (extended). */
export function slcanCommand(frame: TimedFrame): string {
  if (frame.data.length > 8) throw new Error(`SLCAN carries classic CAN only (8 bytes); frame 0x${frame.id.toString(16)} has ${frame.data.length}`);
  const id = frame.extended
    ? 'T' + frame.id.toString(16).toUpperCase().padStart(8, '0')
    : 't' + frame.id.toString(16).toUpperCase().padStart(3, '0');
  return `${id}${frame.data.length}${bytesToHex(frame.data)}\r`;
}

/**
 * Sends frames to a USB-CAN adapter speaking SLCAN over a serial port: on open it closes any open channel,
 * sets the bit rate and opens the channel (C, Sn, O); on close it closes the channel (C).
 * Adapter acknowledgements (CR / BEL) are not awaited: frames are written as fast as the port drains.
 */
export class SlcanSink implements FrameSink {
  readonly describe: string;

  private constructor(private readonly port: SerialPort, path: string, bitrate: number) {
    this.describe = `SLCAN ${path} @ ${bitrate} bit/s`;
  }

  static async open(path: string, options: { bitrate?: number; baudRate?: number } = {}): Promise<SlcanSink> {
    const bitrate = options.bitrate ?? 500_000;
    const code = BITRATE_CODES[bitrate];
    if (!code) throw new Error(`SLCAN bit rate ${bitrate} is not one of ${SLCAN_BITRATES.join(', ')}`);
    // loaded on first use: the native bindings cost every CLI start otherwise
    const { SerialPort } = await import('serialport');
    const port = new SerialPort({ path, baudRate: options.baudRate ?? 115_200, autoOpen: false });
    await new Promise<void>((resolve, reject) =>
      port.open((error) => (error ? reject(new Error(`cannot open serial port ${path} for SLCAN: ${error.message}`)) : resolve())),
    );
    const sink = new SlcanSink(port, path, bitrate);
    await sink.write(`C\r${code}\rO\r`);
    return sink;
  }

  private write(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.port.write(text, 'ascii', (error) => {
        if (error) return reject(new Error(`${this.describe}: ${error.message}`));
        this.port.drain((drainError) => (drainError ? reject(new Error(`${this.describe}: ${drainError.message}`)) : resolve()));
      });
    });
  }

  send(frames: readonly TimedFrame[]): Promise<void> {
    if (frames.length === 0) return Promise.resolve();
    return this.write(frames.map(slcanCommand).join(''));
  }

  async close(): Promise<void> {
    if (!this.port.isOpen) return;
    await this.write('C\r');
    await new Promise<void>((resolve) => this.port.close(() => resolve()));
  }
}
