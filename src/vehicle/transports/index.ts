import { z } from 'zod';
import { CandumpFileSink } from './candump.ts';
import { SlcanSink } from './slcan.ts';
import { SocketCanSink } from './socketcan.ts';
import type { FrameSink } from './sink.ts';
import { BridgeFrameSink, type VehicleContextMessage } from '../bridge.ts';

export type { FrameSink } from './sink.ts';

/** Where frames go, as written in configs and on the command line. */
export type TransportSpec =
  | { kind: 'candump'; path: string | undefined }
  | { kind: 'slcan'; path: string }
  | { kind: 'socketcan'; iface: string }
  | { kind: 'bridge' };

const TRANSPORT_HELP = 'expected candump, candump:FILE, slcan:/dev/ttyX, socketcan:IFACE or bridge';

export function parseTransportSpec(text: string): TransportSpec | undefined {
  const [kind, ...rest] = text.split(':');
  const arg = rest.join(':');
  if (kind === 'candump') return { kind, path: arg || undefined };
  if (kind === 'slcan' && arg) return { kind, path: arg };
  if (kind === 'socketcan' && /^[A-Za-z0-9_.-]{1,15}$/.test(arg)) return { kind, iface: arg };
  if (kind === 'bridge' && !arg) return { kind };
  return undefined;
}

export const TransportSpecSchema = z.string().transform((text, ctx) => {
  const spec = parseTransportSpec(text);
  if (!spec) {
    ctx.addIssue({ code: 'custom', message: `${TRANSPORT_HELP}, got "${text}"` });
    return z.NEVER;
  }
  return spec;
});

export interface OpenSinkOptions {
  /** SLCAN bus bit rate (default 500000) */
  bitrate?: number;
  /** candump interface name written in log lines (default can0) */
  iface?: string;
  /** for the bridge transport: how to emit a vehicle_context payload, and the DBC name it carries */
  bridge?: { dbc: string; emit: (payload: VehicleContextMessage) => void | Promise<void> };
}

/** Opens the sink a transport spec names. candump without a file writes to stdout. */
export async function openFrameSink(spec: TransportSpec, options: OpenSinkOptions = {}): Promise<FrameSink> {
  switch (spec.kind) {
    case 'candump':
      return new CandumpFileSink(spec.path ?? process.stdout, options.iface);
    case 'slcan':
      return SlcanSink.open(spec.path, { bitrate: options.bitrate });
    case 'socketcan':
      return SocketCanSink.open(spec.iface);
    case 'bridge':
      if (!options.bridge) throw new Error('the bridge transport needs a connected head unit to emit vehicle_context to');
      return new BridgeFrameSink(options.bridge.dbc, options.bridge.emit);
  }
}
