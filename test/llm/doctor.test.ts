import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerDoctorCommands } from '../../src/cli/commands/doctor.ts';
import { addDoctorCheck, doctorChecks, modelsCheck, ollamaCheck, programChecks, runDoctor, manifestFilesCheck } from '../../src/doctor/checks.ts';
import { POCKETSPHINX } from '../../src/system/programs.ts';
import { checkModelAvailability, loadModelManifest } from '../../src/llm/index.ts';
import { verifyManifestFiles } from '../../src/llm/manifest.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  vi.restoreAllMocks();
});

describe('model availability', () => {
  it('knows which Ollama and OpenAI-compatible models are present and gives the fix for the rest', async () => {
    server = await startFakeLlmServer({ models: ['qwen2.5:14b', 'llama3.2:latest'] });
    expect(await checkModelAvailability('ollama:qwen2.5:14b', { ollamaHost: server.url })).toMatchObject({ available: true });
    expect(await checkModelAvailability('ollama:llama3.2', { ollamaHost: server.url })).toMatchObject({ available: true });
    expect(await checkModelAvailability('ollama:qwen2.5:32b', { ollamaHost: server.url })).toMatchObject({ available: false, fix: 'ollama pull qwen2.5:32b' });
    expect(await checkModelAvailability(`openai-compat:${server.url}/v1#qwen2.5:14b`)).toMatchObject({ available: true });
    expect(await checkModelAvailability(`openai-compat:${server.url}/v1#other`)).toMatchObject({ available: false, detail: expect.stringMatching(/does not list other/) });
    expect(server.requests.map((r) => r.path)).toEqual(['/api/tags', '/api/tags', '/api/tags', '/v1/models', '/v1/models']);
  });

  it('reports unreachable servers, refused hosts and missing files without throwing', async () => {
    server = await startFakeLlmServer();
    const url = server.url;
    await server.close();
    server = undefined;
    expect(await checkModelAvailability('ollama:x', { ollamaHost: url })).toMatchObject({ available: false, fix: expect.stringMatching(/ollama serve/) });
    const spy = vi.spyOn(globalThis, 'fetch');
    expect(await checkModelAvailability('openai-compat:http://192.168.7.7:8000/v1#m')).toMatchObject({ available: false, detail: expect.stringMatching(/refused_endpoint/), fix: expect.stringMatching(/allowedHosts/) });
    expect(spy).not.toHaveBeenCalled();
    expect(await checkModelAvailability('gguf:models/none.gguf')).toMatchObject({ available: false, detail: expect.stringMatching(/none\.gguf not found/) });
    expect(await checkModelAvailability('nonsense')).toMatchObject({ available: false });
  });
});

describe('model manifests', () => {
  it('loads the shipped manifest and verifies the file checksum it pins', async () => {
    const manifest = await loadModelManifest('models/default.yaml');
    expect(Object.keys(manifest.sets)).toEqual(['paper', 'llama-server', 'in-process']);
    expect(manifest.sets.paper).toMatchObject({ simulator: { ref: 'ollama:qwen2.5:14b' }, temperature: 0, seed: 42 });
    const checks = await verifyManifestFiles(manifest);
    expect(checks.find((c) => c.role === 'speech.vad')).toMatchObject({ status: 'ok' });
    expect(checks.filter((c) => c.set === 'in-process').map((c) => c.status)).toEqual(['missing', 'missing']);
  });

  it('names the file and field of an invalid manifest, and detects a checksum mismatch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-manifest-'));
    try {
      writeFileSync(join(dir, 'bad.yaml'), 'version: 1\nsets:\n  lab:\n    judge:\n      ref: llama:7b\n');
      await expect(loadModelManifest(join(dir, 'bad.yaml'))).rejects.toThrow(/bad\.yaml:5: sets\.lab\.judge\.ref: invalid model reference "llama:7b"/);
      writeFileSync(join(dir, 'broken.yaml'), 'version: 1\nsets: [\n');
      await expect(loadModelManifest(join(dir, 'broken.yaml'))).rejects.toThrow(/broken\.yaml:\d+:\d+: invalid YAML/);
      writeFileSync(join(dir, 'w.bin'), 'weights');
      writeFileSync(join(dir, 'ok.json'), JSON.stringify({ version: 1, sets: { s: { judge: { ref: 'gguf:w.gguf', file: 'w.bin', sha256: '0'.repeat(64) } } } }));
      const checks = await verifyManifestFiles(await loadModelManifest(join(dir, 'ok.json')));
      expect(checks[0]).toMatchObject({ status: 'checksum_mismatch', file: join(dir, 'w.bin') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('icabench doctor', () => {
  it('runs every check, reports providers and models with fixes, and accepts checks from other areas', async () => {
    server = await startFakeLlmServer({ models: ['qwen2.5:14b'] });
    const results = await runDoctor(
      { models: ['ollama:qwen2.5:14b', 'ollama:absent:1b'], allowedHosts: [], ollamaHost: server.url, manifest: 'models/default.yaml' },
      [ollamaCheck, modelsCheck, manifestFilesCheck, async () => [{ name: 'extra', status: 'ok', detail: 'from another area' }]],
    );
    expect(results.find((r) => r.name === 'ollama')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/Ollama 0\.12\.6/) });
    expect(results.find((r) => r.name === 'model ollama:absent:1b')).toMatchObject({ status: 'fail', fix: 'ollama pull absent:1b' });
    expect(results.find((r) => r.name === 'model ollama:qwen2.5:14b')?.status).toBe('ok');
    expect(results.find((r) => r.name === 'file in-process.judge')).toMatchObject({ status: 'fail' });
    expect(results.at(-1)?.name).toBe('extra');
    const before = doctorChecks.length;
    addDoctorCheck(async () => []);
    expect(doctorChecks.length).toBe(before + 1);
    doctorChecks.pop();
  });

  it('prints JSON with --json and sets a failing exit code when a check fails', async () => {
    server = await startFakeLlmServer({ models: [] });
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    const program = new Command().exitOverride();
    registerDoctorCommands(program);
    const previous = process.exitCode;
    await program.parseAsync(['node', 'icabench', 'doctor', '--json', '--model', `openai-compat:${server.url}/v1#m`]);
    const report = JSON.parse(lines.join('\n'));
    expect(report.ok).toBe(false);
    expect(report.results.map((r: { name: string }) => r.name)).toEqual(expect.arrayContaining(['node', 'better-sqlite3', 'disk', 'gpu', 'ollama', 'can-utils', `model openai-compat:${server.url}/v1#m`]));
    expect(report.results.find((r: { name: string }) => r.name === 'gpu').fix ?? 'present').toBeTruthy();
    expect(process.exitCode).toBe(1);
    process.exitCode = previous;
  });
});

describe('system programs', () => {
  it('checks the binary the voice path runs (pocketsphinx_continuous), not a similar name', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'icabench-doctor-bin-'));
    const savedPath = process.env.PATH;
    try {
      const speech = async () => (await runDoctor({ models: [], allowedHosts: [] }, programChecks)).find((r) => r.name === 'speech recognition')!;
      writeFileSync(join(bin, 'pocketsphinx'), '#!/bin/sh\n');
      chmodSync(join(bin, 'pocketsphinx'), 0o755);
      process.env.PATH = bin;
      expect(await speech()).toMatchObject({ status: 'warn', detail: expect.stringContaining('pocketsphinx_continuous not on PATH'), fix: 'sudo apt-get install pocketsphinx' });
      writeFileSync(join(bin, POCKETSPHINX.binary), '#!/bin/sh\n');
      chmodSync(join(bin, POCKETSPHINX.binary), 0o755);
      expect(POCKETSPHINX.binary).toBe('pocketsphinx_continuous');
      expect(await speech()).toMatchObject({ status: 'ok', detail: 'pocketsphinx_continuous found; used for the voice path (offline recognition)' });
    } finally {
      process.env.PATH = savedPath;
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
