import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { VoiceSummarySchema } from '../../../src/voice/metrics.ts';
import { startVirtualAudio, type VirtualAudio } from '../../helpers/virtual-audio.ts';

const CLI = resolve('bin/icabench.js');

describe('a voice campaign over the acoustic link (virtual sound card, reference unit listening and speaking through it)', () => {
  let audio: VirtualAudio;
  const dir = mkdtempSync(join(tmpdir(), 'icabench-acoustic-'));
  beforeAll(() => {
    audio = startVirtualAudio();
  });
  afterAll(() => audio?.stop());

  function config(overrides: Record<string, unknown>): string {
    const doc = parseDocument(readFileSync('bench-configs/voice-acoustic.yaml', 'utf8'));
    doc.set('seeds', resolve('bench-configs/seeds/in-car.yaml'));
    for (const [key, value] of Object.entries(overrides)) doc.set(key, value);
    const path = join(dir, `acoustic-${Object.keys(overrides).join('-')}.yaml`);
    writeFileSync(path, doc.toString());
    return path;
  }

  it('icabench run speaks every turn into the air and reports WER and reply latency per SNR level', { timeout: 400_000 }, () => {
    const out = join(dir, 'out');
    const result = spawnSync(process.execPath, [CLI, 'run', config({ conversations: 1, maxTurns: [3] }), '--out', out, '--workspace', join(dir, 'ws'), '--no-progress'], { encoding: 'utf8', env: audio.env });
    expect(result.status, result.stderr + result.stdout).toBe(0);
    expect(result.stdout + result.stderr).toMatch(/device latency \d+(\.\d)? ms \(loopback through bench_out\.monitor\)/);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.errors).toEqual({ sut_error: 0, simulator_error: 0, judge_error: 0 });
    const voice = VoiceSummarySchema.parse(summary.voice);
    expect(Object.keys(voice.bySnr).sort()).toEqual(['10', 'clean']);
    // every spoken turn got a spoken reply through the air, timed on the recorded signal
    expect(voice.turns).toBe(summary.turns);
    expect(voice.firstReplyLatencyMs.p50).toBeGreaterThan(0);
    expect(voice.bySnr.clean.headUnitAsrWer).not.toBeNull();
    expect(voice.headUnitAsrWer as number).toBeLessThan(0.5);
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain('Voice');
    expect(report).toMatch(/clean/);
  });

  it('overlapping conversations are refused before anything runs: one cabin, one conversation', () => {
    const result = spawnSync(process.execPath, [CLI, 'run', config({ concurrency: 2 }), '--out', join(dir, 'out2'), '--workspace', join(dir, 'ws2'), '--no-progress'], { encoding: 'utf8', env: audio.env });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/voice\.link: acoustic .* set concurrency: 1/);
  });

  it('devices on one side only are refused: the other end would wait for audio that never comes', () => {
    const unitOnly = spawnSync(process.execPath, [CLI, 'run', config({ voice: { acoustics: { snrDb: null } } }), '--workspace', join(dir, 'ws3'), '--no-progress'], { encoding: 'utf8', env: audio.env });
    expect(unitOnly.status).toBe(2);
    expect(unitOnly.stderr).toMatch(/headUnit\.acoustic: the reference unit listens on audio devices only with voice\.link/);
    const benchOnly = spawnSync(process.execPath, [CLI, 'run', config({ headUnit: { type: 'reference' } }), '--workspace', join(dir, 'ws4'), '--no-progress'], { encoding: 'utf8', env: audio.env });
    expect(benchOnly.status).toBe(2);
    expect(benchOnly.stderr).toMatch(/voice\.link: acoustic with the reference head unit needs headUnit\.acoustic/);
  });
});
