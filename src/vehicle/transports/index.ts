import { z } from 'zod';
import { CandumpFileSink } from './candump.ts';
import { SlcanSink } from './slcan.ts';
import { SocketCanSink } from './socketcan.ts';
import type { FrameSink } from './sink.ts';
import { BridgeFrameSink, type VehicleContextMessage } from '../bridge.ts';

export type { FrameSink } from './sink.ts';

/** Where frames go, as parsed from a config or the command line (parseTransportSpec). */
const ParsedTransportSpecSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('candump'), path: z.string().min(1).optional() }),
  z.strictObject({ kind: z.literal('slcan'), path: z.string().min(1) }),
  z.strictObject({ kind: z.literal('socketcan'), iface: z.string().regex(/^[A-Za-z0-9_.-]{1,15}$/) }),
  z.strictObject({ kind: z.literal('bridge') }),
]);
export type TransportSpec = z.infer<typeof ParsedTransportSpecSchema>;

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

/**
 * A transport as written (`bridge`, `slcan:/dev/ttyACM0`, …), or already parsed: a config that was
 * loaded once and travels as JSON (a fleet run's descriptor, src/fleet/protocol.ts) parses again.
 */
export const TransportSpecSchema = z.union([z.string(), ParsedTransportSpecSchema]).transform((value, ctx) => {
  if (typeof value !== 'string') return value;
  const spec = parseTransportSpec(value);
  if (!spec) {
    ctx.addIssue({ code: 'custom', message: `${TRANSPORT_HELP}, got "${value}"` });
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
