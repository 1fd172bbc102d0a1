import type { Command } from 'commander';
import { BRIDGE_TOKEN_ENV } from '../../protocol/bridge.ts';
import { startBridgeServer } from '../../bridge/server.ts';
import { runConformance } from '../../conformance/run.ts';
import { writeConformanceReport } from '../../conformance/report.ts';
import { ObserveConfigSchema } from '../../vehicle/observe/config.ts';
import { maxTimerValue, timerLimitMessage, type DurationUnit } from '../../domain/durations.ts';

/** A positive whole duration in `unit`, within what a timer can wait. */
const duration = (flag: string, value: string, unit: DurationUnit) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0 || n > maxTimerValue(unit)) throw new Error(`${flag}: expected a positive whole number of ${unit === 's' ? 'seconds' : 'ms'}, ${timerLimitMessage(unit)}, got "${value}"`);
  return n;
};

export function registerConformanceCommands(program: Command): void {
  program
    .command('conformance')
    .description('wait for a head unit to dial in and run the bridge conformance suite against it (docs/conformance.md); writes conformance.json, junit.xml, report.html; exit code 1 when a check fails')
    .option('--host <host>', 'address the bridge listens on (0.0.0.0 for a unit on the lab network)', '127.0.0.1')
    .option('--port <port>', 'bridge port', '7311')
    .option('--token <token>', `shared token (default: $${BRIDGE_TOKEN_ENV})`)
    .option('--wait <seconds>', 'how long to wait for the unit to dial in', '120')
    .option('--turn-timeout <ms>', 'the turn timeout announced in hello_ack and held to by the timing check', '15000')
    .option('--reconnect-wait <ms>', 'how long the unit may take to dial in again after the bench hangs up', '15000')
    .option('--unit <name>', 'test only the unit with this name (default: the first to dial in)')
    .option('--out <dir>', 'where the reports go', 'conformance')
    .option('--observe <transport>', 'also check the unit\'s actions on the CAN bus, listening (never sending) on candump:FILE_OR_TTY, slcan:/dev/ttyX, socketcan:IFACE or replay:FILE (docs/bus-observation.md)')
    .option('--observe-mapping <name>', 'action mapping for --observe (hardware/mappings/<name>.yaml or a path)', 'icabench_vehicle-actions')
    .option('--observe-window <ms>', 'how long after the request the command must be on the bus', '2000')
    .option('--observe-bitrate <bps>', 'SLCAN bus bit rate for --observe', '500000')
    .action(async (options: { host: string; port: string; token?: string; wait: string; turnTimeout: string; reconnectWait: string; unit?: string; out: string; observe?: string; observeMapping: string; observeWindow: string; observeBitrate: string }) => {
      const token = options.token ?? process.env[BRIDGE_TOKEN_ENV];
      if (!token) throw new Error(`--token or $${BRIDGE_TOKEN_ENV} is required: the unit presents the same token in its hello`);
      const turnTimeoutMs = duration('--turn-timeout', options.turnTimeout, 'ms');
      const observe = options.observe
        ? observeConfig(options.observe, options.observeMapping, options.observeWindow, options.observeBitrate)
        : undefined;
      const port = Number(options.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: expected an integer 0–65535, got "${options.port}"`);
      const bridge = await startBridgeServer({ host: options.host, port, token, turnTimeoutMs });
      try {
        console.log(`conformance: waiting up to ${options.wait} s for a head unit at ${bridge.url} (token in $${BRIDGE_TOKEN_ENV} or --token)`);
        const report = await runConformance({
          bridge,
          turnTimeoutMs,
          waitMs: duration('--wait', options.wait, 's') * 1000,
          reconnectWaitMs: duration('--reconnect-wait', options.reconnectWait, 'ms'),
          unitName: options.unit,
          ...(observe ? { observe } : {}),
          onCheck: (check) => console.log(`  ${check.status === 'pass' ? 'PASS   ' : check.status === 'fail' ? 'FAIL   ' : 'SKIPPED'} ${check.title}: ${check.detail}`),
        });
        const paths = writeConformanceReport(report, options.out);
        console.log(`conformance: ${report.passed ? 'PASSED' : 'FAILED'} (${report.unit ? `${report.unit.name} ${report.unit.version}` : 'no unit'}); ${paths.html}, ${paths.junit}, ${paths.json}`);
        process.exitCode = report.passed ? 0 : 1;
      } finally {
        await bridge.close();
      }
    });
}

/** The --observe flags as a vehicle.observe config (the same schema, so the same errors as in a campaign). */
function observeConfig(transport: string, mapping: string, windowMs: string, bitrate: string) {
  const parsed = ObserveConfigSchema.safeParse({ transport, mapping, windowMs: Number(windowMs), bitrate: Number(bitrate) });
  if (parsed.success) return parsed.data;
  const flags: Record<string, string> = { transport: '--observe', mapping: '--observe-mapping', windowMs: '--observe-window', bitrate: '--observe-bitrate' };
  throw new Error(parsed.error.issues.map((issue) => `${flags[String(issue.path[0])] ?? '--observe'}: ${issue.message}`).join('; '));
}
