import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { benchModelResponder, startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';

const CLI = resolve('bin/icabench.js');
let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The CLI runs as a child process while the fake model server answers in this one (async, so it can). */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => (stdout += d));
    child.on('exit', (code) => done({ code, stderr, stdout }));
  });
}

describe('icabench run with model tiers (fake Ollama/OpenAI server)', () => {
  it('uses an ollama simulator and an openai-compat judge beside the oracle, and reports calls, tokens and disagreements', async () => {
    server = await startFakeLlmServer({ respond: benchModelResponder(), models: ['sim:latest'] });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-llm-run-'));
    const result = await run(
      ['run', 'bench-configs/quickstart.yaml', '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress', '--simulator', 'ollama:sim', '--judge', 'oracle', `openai-compat:${server.url}/v1#judge`],
      { OLLAMA_HOST: server.url },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/simulator: ollama:sim/);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.llm.calls).toBe(server.chatRequests().length);
    expect(summary.llm.callsPerTurn).toBeGreaterThan(1);
    expect(summary.llm.tokensIn).toBeGreaterThan(0);
    expect(summary.llm.errors).toEqual({ invalid_output: 0, timeout: 0, refused_endpoint: 0, server_error: 0 });
    expect(summary.judgeTiers.turn.llm.judged).toBe(summary.turns);
    expect(summary.judgeTiers.turn.oracle.judged + summary.judgeTiers.turn.oracle.inconclusive).toBe(summary.turns);
    expect(server.chatRequests().some((r) => r.api === 'ollama')).toBe(true);
    expect(server.chatRequests().some((r) => r.api === 'openai')).toBe(true);
    expect(readFileSync(join(dir, 'out', 'report.html'), 'utf8')).toContain('Judge tier disagreements');
  });

  it('says plainly when a configured model is not there and falls back to the deterministic tiers', async () => {
    server = await startFakeLlmServer({ respond: benchModelResponder(), models: [] });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-llm-run-'));
    const result = await run(['run', 'bench-configs/quickstart.yaml', '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress', '--simulator', 'ollama:absent-model', '--judge', 'ollama:absent-model'], { OLLAMA_HOST: server.url });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/absent-model is not available.*Falling back to the template tier/);
    expect(result.stderr).toMatch(/the oracle judges instead/);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    expect(summary.llm).toBeUndefined();
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('refuses a model endpoint outside loopback before contacting it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-llm-run-'));
    const result = await run(['run', 'bench-configs/quickstart.yaml', '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress', '--judge', 'oracle', 'openai-compat:http://203.0.113.7:8080/v1#judge']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/203\.0\.113\.7.*(refused|not allowed|allowedHosts)/i);
  });
});
