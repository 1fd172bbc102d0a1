import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/server.ts';
import { CHECK_IDS, ConformanceReportSchema, type ConformanceReport } from '../../src/conformance/checks.ts';
import { runConformance } from '../../src/conformance/run.ts';
import { conformanceHtml, conformanceJunit } from '../../src/conformance/report.ts';
import { connectHeadUnit, toolsExtension } from '../../packages/bridge-sdk/src/index.ts';
import { BROKEN_UNITS, goodHandler, sunroofAssistant } from './units.ts';
import { CLI, runCli } from '../helpers/cli.ts';

const TOKEN = 'conformance-token';
/** generous for a loaded 2-core machine; the slow unit answers 400 ms after it */
const TURN_TIMEOUT_MS = 2500;
const RECONNECT_WAIT_MS = 8000;

let bridge: BridgeServer | null = null;
afterEach(async () => {
  await bridge?.close();
  bridge = null;
});

async function conformanceOf(connect: (url: string) => Promise<{ close(): Promise<void> }>): Promise<ConformanceReport> {
  bridge = await startBridgeServer({ token: TOKEN, turnTimeoutMs: TURN_TIMEOUT_MS });
  const running = runConformance({ bridge, turnTimeoutMs: TURN_TIMEOUT_MS, waitMs: 30_000, reconnectWaitMs: RECONNECT_WAIT_MS });
  const unit = await connect(bridge.url);
  try {
    return ConformanceReportSchema.parse(await running);
  } finally {
    await unit.close();
  }
}

const statuses = (report: ConformanceReport) => Object.fromEntries(report.checks.map((c) => [c.id, c.status]));

describe('icabench conformance', () => {
  it('passes a good SDK unit on every check that applies, with evidence, and renders JUnit and HTML', async () => {
    const report = await conformanceOf((url) => connectHeadUnit({ url, token: TOKEN, handler: goodHandler(), reconnect: true, extensions: toolsExtension(() => sunroofAssistant) }));
    expect(statuses(report)).toEqual({ hello: 'pass', capabilities: 'pass', text_turn: 'pass', reply_schema: 'pass', turn_ids: 'pass', timing: 'pass', reconnect: 'pass', audio: 'skipped', vehicle_context: 'pass', tools: 'pass', bus_actions: 'skipped' });
    expect(report.passed).toBe(true);
    const text = report.checks.find((c) => c.id === 'text_turn')!;
    expect(text.evidence.some((e) => e.direction === 'sent' && e.event === 'user_turn')).toBe(true);
    expect(text.evidence.some((e) => e.direction === 'received' && e.event === 'assistant_reply')).toBe(true);
    const hello = report.checks.find((c) => c.id === 'hello')!;
    expect(JSON.stringify(hello.evidence)).not.toContain(TOKEN);
    const junit = conformanceJunit(report);
    expect(junit).toContain(`tests="${CHECK_IDS.length}" failures="0" errors="0" skipped="2"`);
    expect(junit).toContain('<skipped message="the unit does not declare capabilities.audio"/>');
    // the optional bus check without a bus to watch is skipped, not passed
    expect(junit).toContain('<skipped message="no bus to observe was given (--observe TRANSPORT)"/>');
    const html = conformanceHtml(report);
    expect(html).toContain('PASSED');
    expect(html).toContain('The protocol requires:');
  }, 120_000);

  for (const broken of BROKEN_UNITS) {
    it(`fails the unit with ${broken.name} on "${broken.check}", for its reason`, async () => {
      const report = await conformanceOf((url) => broken.connect(url, TOKEN, TURN_TIMEOUT_MS));
      const check = report.checks.find((c) => c.id === broken.check)!;
      expect(check.status, check.detail).toBe('fail');
      expect(check.detail).toMatch(broken.reason);
      expect(report.passed).toBe(false);
      // the checks before it passed: the failure is that check's, not a knock-on of an earlier one
      const before = CHECK_IDS.slice(0, CHECK_IDS.indexOf(broken.check as never)).filter((id) => !['reconnect'].includes(id));
      for (const id of before) expect(report.checks.find((c) => c.id === id)!.status, `${id} before ${broken.check}`).not.toBe('fail');
      expect(conformanceJunit(report)).toContain(`<failure type="${broken.check}"`);
      if (broken.name === 'bad reply schema') expect(report.checks.find((c) => c.id === 'reply_schema')!.detail).toMatch(/actions\.0\.reason/);
      // a dropped link ends the wait at once: the kit would otherwise wait out twice the turn timeout
      if (broken.name === 'link dropped on the request') expect(check.durationMs).toBeLessThan(2 * TURN_TIMEOUT_MS);
    }, 120_000);
  }

  it('`icabench conformance` passes the reference unit of `icabench headunit --tool-agent replay`, both in their own processes', async () => {
    const probe = await startBridgeServer({ token: 'port-probe' });
    const port = probe.port;
    await probe.close();
    const out = mkdtempSync(join(tmpdir(), 'icabench-conformance-'));
    const kit = runCli(['conformance', '--port', String(port), '--token', TOKEN, '--wait', '90', '--turn-timeout', '10000', '--out', out]);
    // the unit redials until the kit listens (its first dial may come before the kit's bridge is up)
    const unit = spawn(process.execPath, [CLI, 'headunit', '--url', `http://127.0.0.1:${port}`, '--token', TOKEN, '--tool-agent', 'replay'], { stdio: 'ignore' });
    try {
      const result = await kit;
      const report = ConformanceReportSchema.parse(JSON.parse(readFileSync(join(out, 'conformance.json'), 'utf8')));
      expect(statuses(report), result.stdout + result.stderr).toEqual({ hello: 'pass', capabilities: 'pass', text_turn: 'pass', reply_schema: 'pass', turn_ids: 'pass', timing: 'pass', reconnect: 'pass', audio: 'skipped', vehicle_context: 'pass', tools: 'pass', bus_actions: 'skipped' });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('conformance: PASSED (icabench-reference');
      expect(readFileSync(join(out, 'junit.xml'), 'utf8')).toContain('failures="0"');
      expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('tools extension');
    } finally {
      unit.kill('SIGINT');
    }
  }, 180_000);
});
