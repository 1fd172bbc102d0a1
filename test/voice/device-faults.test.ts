import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { AcousticLink, measureLoopbackLatency, PLAUSIBLE_LATENCY_MS, type RigFault } from '../../src/voice/acoustic-link.ts';
import { streamUtterance, UtteranceCollector } from '../../src/voice/audio-link.ts';
import { checkAcousticDevices, openBenchAcousticLink } from '../../src/voice/config.ts';
import { CLIP_LEVEL } from '../../src/system/audio-devices.ts';
import { pcm16 } from '../../src/voice/types.ts';
import { startVirtualAudio, VIRTUAL_SINK_VOLUME, type VirtualAudio } from '../helpers/virtual-audio.ts';

const CLI = resolve('bin/icabench.js');
/** A PulseAudio address nothing answers on: the sound server is missing. */
const NO_SOUND_SERVER = { ...process.env, PULSE_SERVER: 'unix:/nonexistent/pulse-native' };
const FIX = /bash scripts\/virtual-audio\.sh start.*icabench voice devices|icabench voice devices.*bash scripts\/virtual-audio\.sh start/;

/** A full-scale 440 Hz tone, `ms` long: louder than any utterance. */
function fullScaleTone(ms: number) {
  const samples = new Int16Array((16_000 * ms) / 1000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(32767 * Math.sin((2 * Math.PI * 440 * i) / 16_000));
  return pcm16(samples);
}

describe('a missing audio device ends the run or the check at once, naming the device and the fix', () => {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-device-faults-'));

  it('the acoustic campaign with no sound server exits 2 with one line naming the device, and records no run', { timeout: 60_000 }, () => {
    const doc = parseDocument(readFileSync('bench-configs/voice-acoustic.yaml', 'utf8'));
    doc.set('seeds', resolve('bench-configs/seeds/in-car.yaml'));
    const config = join(dir, 'acoustic.yaml');
    writeFileSync(config, doc.toString());
    const out = join(dir, 'out');
    const result = spawnSync(process.execPath, [CLI, 'run', config, '--out', out, '--workspace', join(dir, 'ws'), '--no-progress'], { encoding: 'utf8', env: NO_SOUND_SERVER });
    expect(result.status, result.stderr).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/audio device "bench_out" \(voice\.link\.output\): no sound server answered/);
    expect(lines[0]).toMatch(FIX);
    expect(existsSync(out)).toBe(false);
    const runs = spawnSync(process.execPath, [CLI, 'runs', '--workspace', join(dir, 'ws')], { encoding: 'utf8' });
    expect(runs.stdout).not.toMatch(/voice-acoustic/);
  });

  it('opening an acoustic link with no sound server rejects with one line naming the device and the fix', { timeout: 30_000 }, async () => {
    const link = new AcousticLink({ devices: { output: 'bench_out', input: 'unit_out.monitor' }, speaks: 'to_unit', env: NO_SOUND_SERVER });
    const error = await link.open().then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/^audio device "unit_out\.monitor" \(record\): .*Connection refused/);
    expect(error?.message).toMatch(FIX);
    expect(error?.message).not.toContain('\n');
  });
});

describe('the shipped virtual rig', () => {
  let audio: VirtualAudio;
  beforeAll(() => {
    audio = startVirtualAudio();
  });
  afterAll(() => audio?.stop());

  it('scripts/virtual-audio.sh sets the volume the tests use', () => {
    const script = readFileSync('scripts/virtual-audio.sh', 'utf8');
    expect(script).toContain(`pactl set-sink-volume bench_out ${VIRTUAL_SINK_VOLUME}`);
    expect(script).toContain(`pactl set-sink-volume unit_out ${VIRTUAL_SINK_VOLUME}`);
  });

  it('a device the config names that the sound server lacks is refused before anything plays, naming it and its field', async () => {
    await expect(checkAcousticDevices({ type: 'acoustic', output: 'bench_out', input: 'unit_out.monitor' } as never, { input: 'bench_out.monitor', output: 'unit_speaker' }, audio.env)).rejects.toThrow(
      /^audio device "unit_speaker" \(headUnit\.acoustic\.output\) is not an output \(sink\) of the sound server \(it has: .*bench_out.*\): start the sound server/,
    );
    await expect(checkAcousticDevices({ type: 'acoustic', output: 'bench_out', input: 'unit_out.monitor', loopbackInput: 'bench_out.monitor' } as never, { input: 'bench_out.monitor', output: 'unit_out' }, audio.env)).resolves.toBeUndefined();
  });

  it('does not clip: a full-scale utterance played on one sink stays below full scale on its monitor', { timeout: 60_000 }, async () => {
    const faults: RigFault[] = [];
    const bench = new AcousticLink({ devices: audio.bench, speaks: 'to_unit', env: audio.env });
    const unit = new AcousticLink({ devices: audio.unit, speaks: 'to_bench', env: audio.env, onRigFault: (fault) => faults.push(fault) });
    await Promise.all([bench.open(), unit.open()]);
    try {
      const heard = new UtteranceCollector(unit, 'to_unit');
      await streamUtterance(bench, fullScaleTone(800), { sessionId: 'level', turn: 0, direction: 'to_unit', realtime: true });
      unit.expect('level', 0);
      const utterance = await heard.take('level', 0, 10_000);
      heard.close();
      const peak = utterance.pcm.samples.reduce((max, s) => Math.max(max, Math.abs(s)), 0);
      expect(peak).toBeGreaterThan(1_000);
      expect(peak).toBeLessThan(CLIP_LEVEL);
      expect(faults).toEqual([]);
    } finally {
      await Promise.all([bench.close(), unit.close()]);
    }
  });

  it('the latency calibration refuses an implausible result instead of using it', { timeout: 60_000 }, async () => {
    // the loopback input hears a tone that plays all along, so the "onset" comes before the calibration tone is written
    const steady = spawn('pacat', ['--playback', '--device=unit_out', '--raw', '--format=s16le', '--rate=16000', '--channels=1'], { env: audio.env, stdio: ['pipe', 'ignore', 'ignore'] });
    const tone = fullScaleTone(20_000);
    steady.stdin.on('error', () => undefined);
    steady.stdin.write(Buffer.from(tone.samples.buffer));
    try {
      const error = await measureLoopbackLatency({ output: audio.bench.output, loopbackInput: 'unit_out.monitor', env: audio.env, repeats: 1 }).then(
        (ms) => new Error(`a latency of ${ms} ms was accepted`),
        (e: Error) => e,
      );
      expect(error.message).toMatch(new RegExp(`outside the plausible ${PLAUSIBLE_LATENCY_MS.min}–${PLAUSIBLE_LATENCY_MS.max} ms, so it is not used`));
      expect(error.message).toMatch(/voice\.link\.latencyMs/);
    } finally {
      steady.kill();
    }
  });
});

describe('a sound server that goes away in the middle of a run', () => {
  it("the bench's acoustic link reports the failed device with its config field and the fix, and refuses to play (test/run/device-fault.test.ts: the run then stops)", { timeout: 60_000 }, async () => {
    const audio = startVirtualAudio();
    let stopped = false;
    const link = await openBenchAcousticLink({ type: 'acoustic', output: 'bench_out', input: 'unit_out.monitor', latencyMs: 40 } as never, () => undefined, audio.env);
    try {
      expect(link.failed()).toBeNull();
      // the sound server dies under a recording link (a USB sound card unplugged, PipeWire restarted)
      audio.stop();
      stopped = true;
      // the recorder's exit is reported as it happens; the test's timeout bounds the wait
      while (link.failed() === null) await new Promise((resolve) => setTimeout(resolve, 50));
      const failure = link.failed()!;
      expect(failure.message).toMatch(/^audio device "unit_out\.monitor" \(voice\.link\.input, record\): /);
      expect(failure.message).toMatch(FIX);
      expect(failure.message).not.toContain('\n');
      expect(() => link.sendChunk({ sessionId: 's', turn: 0, direction: 'to_unit', seq: 0, offsetMs: 0, sentAt: 0, sampleRate: 16_000, encoding: 'pcm_s16le', data: new Uint8Array(640) })).toThrow(failure.message);
    } finally {
      await link.close();
      if (!stopped) audio.stop();
    }
  });
});
