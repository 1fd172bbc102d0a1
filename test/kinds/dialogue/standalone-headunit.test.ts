import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = resolve('bin/icabench.js');

function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

function exitOf(child: ReturnType<typeof spawn>): Promise<number | null> {
  return new Promise((done) => child.once('exit', (code) => done(code)));
}

describe('a head unit in its own process dials in to the bench', () => {
  it('runs a bridge campaign against `icabench headunit` with the shared token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-standalone-'));
    const port = await freePort();
    const config = join(dir, 'bridge.yaml');
    writeFileSync(config, `name: standalone\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 6\nheadUnit: { type: bridge, port: ${port}, waitSeconds: 30 }\n`);
    const env = { ...process.env, ICABENCH_BRIDGE_TOKEN: 'rig-secret' };
    let stderr = '';
    const bench = spawn(process.execPath, [CLI, 'run', config, '--workspace', join(dir, 'ws'), '--out', join(dir, 'out'), '--no-progress'], { env });
    bench.stderr.on('data', (d) => (stderr += d));
    // start the head unit once the bench says it is listening
    for (let i = 0; i < 1200 && !stderr.includes('waiting up to'); i++) await new Promise((r) => setTimeout(r, 50));
    const headUnit = spawn(process.execPath, [CLI, 'headunit', '--url', `http://127.0.0.1:${port}`, '--faults', 'all', '--fault-rate', '0.5'], { env, stdio: 'ignore' });
    const code = await exitOf(bench);
    headUnit.kill('SIGINT');
    await exitOf(headUnit);
    expect(code, stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.conversations).toBe(6);
    expect(summary.errors.sut_error, JSON.stringify(summary.perConversation.filter((c: { status: string }) => c.status !== 'completed'))).toBe(0);
    expect(summary.failures).toBeGreaterThan(0);
  });

  it('speaks to `icabench headunit --voice` over the bridge: audio both ways, the unit reports what it heard', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-standalone-voice-'));
    const port = await freePort();
    const config = join(dir, 'voice-bridge.yaml');
    writeFileSync(
      config,
      `name: standalone-voice\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 2\nmaxTurns: [3]\nconcurrency: 1\n` +
        `headUnit: { type: bridge, port: ${port}, waitSeconds: 30 }\nvoice: { acoustics: { snrDb: 20 } }\n`,
    );
    const env = { ...process.env, ICABENCH_BRIDGE_TOKEN: 'rig-secret' };
    let stderr = '';
    const bench = spawn(process.execPath, [CLI, 'run', config, '--workspace', join(dir, 'ws'), '--out', join(dir, 'out'), '--no-progress'], { env });
    bench.stderr.on('data', (d) => (stderr += d));
    for (let i = 0; i < 1200 && !stderr.includes('waiting up to'); i++) await new Promise((r) => setTimeout(r, 50));
    const headUnit = spawn(process.execPath, [CLI, 'headunit', '--url', `http://127.0.0.1:${port}`, '--voice'], { env, stdio: 'ignore' });
    const code = await exitOf(bench);
    headUnit.kill('SIGINT');
    await exitOf(headUnit);
    expect(code, stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.errors).toEqual({ sut_error: 0, simulator_error: 0, judge_error: 0 });
    expect(Object.keys(summary.voice.bySnr)).toEqual(['20']);
    expect(summary.voice.turns).toBe(summary.turns);
    expect(summary.voice.headUnitAsrWer).toBeLessThan(0.2);
    expect(summary.voice.firstReplyLatencyMs.p50).toBeGreaterThan(0);
    expect(summary.voice.replyTranscriptionWer).not.toBeNull();
  });

  it('refuses a head unit with the wrong token, and the run reports that no head unit dialled in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-standalone-'));
    const port = await freePort();
    const config = join(dir, 'bridge.yaml');
    writeFileSync(config, `name: standalone\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 2\nheadUnit: { type: bridge, port: ${port}, waitSeconds: 10 }\n`);
    let stderr = '';
    const bench = spawn(process.execPath, [CLI, 'run', config, '--workspace', join(dir, 'ws'), '--no-progress'], { env: { ...process.env, ICABENCH_BRIDGE_TOKEN: 'right' } });
    bench.stderr.on('data', (d) => (stderr += d));
    for (let i = 0; i < 1200 && !stderr.includes('waiting up to'); i++) await new Promise((r) => setTimeout(r, 50));
    let unitOutput = '';
    const headUnit = spawn(process.execPath, [CLI, 'headunit', '--url', `http://127.0.0.1:${port}`, '--token', 'wrong']);
    headUnit.stderr.on('data', (d) => (unitOutput += d));
    const [benchCode, unitCode] = await Promise.all([exitOf(bench), exitOf(headUnit)]);
    expect(unitCode).toBe(2);
    expect(unitOutput).toMatch(/unauthorized/);
    // a unit that never got in is an unreachable unit (exit 4), not a configuration error
    expect(benchCode).toBe(4);
    expect(stderr).toMatch(/ICABENCH_BRIDGE_TOKEN|no head unit/i);
  });
});
