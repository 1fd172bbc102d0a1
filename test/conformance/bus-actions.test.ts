import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/server.ts';
import { ConformanceReportSchema, type CheckResult } from '../../src/conformance/checks.ts';
import { runConformance } from '../../src/conformance/run.ts';
import { conformanceJunit } from '../../src/conformance/report.ts';
import { ReferenceBus, type BusFaultProfile } from '../../src/headunit/reference/bus-actions.ts';
import { ReferenceHeadUnit } from '../../src/headunit/reference/reference-headunit.ts';
import { loadActionMapping } from '../../src/vehicle/observe/action-mapping.ts';
import { ObserveConfigSchema } from '../../src/vehicle/observe/config.ts';
import { CandumpFileSink } from '../../src/vehicle/transports/candump.ts';
import { connectHeadUnit } from '../../packages/bridge-sdk/src/index.ts';
import { runCli } from '../helpers/cli.ts';

/**
 * The optional "actions on the bus" check (issue #32): the reference unit, text only, sends its commands as frames
 * into a candump log; the kit follows the log (listen-only) and looks for the 21 °C it asked for.
 */
const TOKEN = 'conformance-bus-token';
const TURN_TIMEOUT_MS = 2500;
const WINDOW_MS = 500;
const dir = mkdtempSync(join(tmpdir(), 'icabench-conformance-bus-'));

let bridge: BridgeServer | null = null;
afterEach(async () => {
  await bridge?.close();
  bridge = null;
});

async function busCheckOf(busFaults: BusFaultProfile[]): Promise<{ check: CheckResult; passed: boolean; junit: string }> {
  const log = join(dir, `${busFaults.join('-') || 'good'}.log`);
  writeFileSync(log, '');
  const bus = new ReferenceBus(new CandumpFileSink(log), loadActionMapping('icabench_vehicle-actions'), { profiles: busFaults, rate: 1, seed: 1 });
  const unit = new ReferenceHeadUnit({ worldSeed: 1, bus, announceActions: false });
  bridge = await startBridgeServer({ token: TOKEN, turnTimeoutMs: TURN_TIMEOUT_MS });
  const observe = ObserveConfigSchema.parse({ transport: `candump:${log}`, windowMs: WINDOW_MS });
  const running = runConformance({ bridge, turnTimeoutMs: TURN_TIMEOUT_MS, waitMs: 30_000, reconnectWaitMs: 8000, observe });
  const client = await connectHeadUnit({ url: bridge.url, token: TOKEN, handler: unit, reconnect: true });
  try {
    const report = ConformanceReportSchema.parse(await running);
    return { check: report.checks.find((c) => c.id === 'bus_actions')!, passed: report.passed, junit: conformanceJunit(report) };
  } finally {
    await client.close();
    await bus.close();
  }
}

const busNotes = (check: CheckResult) => check.evidence.filter((e) => e.direction === 'note').map((e) => String(e.payload));

describe('conformance: actions on the bus', () => {
  it('passes a unit that sends the 21 °C it was asked for, with the decoded frame as evidence', async () => {
    const { check, passed } = await busCheckOf([]);
    expect(check.status, check.detail).toBe('pass');
    expect(check.detail).toMatch(/asked for 21 °C, the bus shows climate_setpoint = 21 \(HU_CLIMATE_REQUEST 0x500#2A Setpoint=21, \+\d+ ms\)/);
    expect(check.evidence.some((e) => e.direction === 'sent' && e.event === 'user_turn')).toBe(true);
    expect(busNotes(check)[0]).toMatch(/^listening on candump log .*good\.log \(followed\) with mapping icabench_vehicle-actions/);
    expect(passed).toBe(true);
  }, 120_000);

  it('fails a unit that sends another value (°F), naming the frame', async () => {
    const { check, passed, junit } = await busCheckOf(['bus_wrong_value']);
    expect(check.status).toBe('fail');
    expect(check.detail).toMatch(/asked for 21 °C, the bus shows another value: climate_setpoint = 70 \(HU_CLIMATE_REQUEST 0x500#[0-9A-F]{2} Setpoint=70/);
    expect(passed).toBe(false);
    expect(junit).toContain('<failure type="bus_actions"');
  }, 120_000);

  it('fails a unit that sends nothing: "nothing on the bus within the window"', async () => {
    const { check, passed } = await busCheckOf(['bus_silent']);
    expect(check.status).toBe('fail');
    expect(check.detail).toMatch(new RegExp(`asked for 21 °C: nothing on the bus within ${WINDOW_MS} ms \\(0 unit frame\\(s\\)\\)`));
    expect(busNotes(check)).toContain(`on the bus: nothing on the bus within ${WINDOW_MS} ms (0 unit frame(s))`);
    expect(passed).toBe(false);
  }, 120_000);

  it('`icabench conformance --observe` names the flag of a bad observe transport before it listens', async () => {
    const result = await runCli(['conformance', '--token', TOKEN, '--observe', 'bridge', '--wait', '1']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/--observe: expected candump:FILE_OR_TTY, slcan:\/dev\/ttyX, socketcan:IFACE or replay:FILE/);
  }, 60_000);
});
