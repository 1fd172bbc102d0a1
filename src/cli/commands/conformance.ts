import type { Command } from 'commander';
import { BRIDGE_TOKEN_ENV } from '../../protocol/bridge.ts';
import { startBridgeServer } from '../../bridge/server.ts';
import { runConformance } from '../../conformance/run.ts';
import { writeConformanceReport } from '../../conformance/report.ts';

const positiveInt = (flag: string, value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag}: expected a positive whole number, got "${value}"`);
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
    .action(async (options: { host: string; port: string; token?: string; wait: string; turnTimeout: string; reconnectWait: string; unit?: string; out: string }) => {
      const token = options.token ?? process.env[BRIDGE_TOKEN_ENV];
      if (!token) throw new Error(`--token or $${BRIDGE_TOKEN_ENV} is required: the unit presents the same token in its hello`);
      const turnTimeoutMs = positiveInt('--turn-timeout', options.turnTimeout);
      const port = Number(options.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: expected an integer 0–65535, got "${options.port}"`);
      const bridge = await startBridgeServer({ host: options.host, port, token, turnTimeoutMs });
      try {
        console.log(`conformance: waiting up to ${options.wait} s for a head unit at ${bridge.url} (token in $${BRIDGE_TOKEN_ENV} or --token)`);
        const report = await runConformance({
          bridge,
          turnTimeoutMs,
          waitMs: positiveInt('--wait', options.wait) * 1000,
          reconnectWaitMs: positiveInt('--reconnect-wait', options.reconnectWait),
          unitName: options.unit,
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
