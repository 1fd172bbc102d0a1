import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcousticLink, measureLoopbackLatency, PLAUSIBLE_LATENCY_MS } from '../../src/voice/acoustic-link.ts';
import { UtteranceCollector, streamUtterance } from '../../src/voice/audio-link.ts';
import { EspeakTts, voiceForPersona } from '../../src/voice/espeak.ts';
import { ASSISTANT_VOICE } from '../../src/voice/headunit-voice.ts';
import { wordErrorRate } from '../../src/voice/metrics.ts';
import { PocketsphinxStt } from '../../src/voice/pocketsphinx.ts';
import { driverVocabulary } from '../../src/voice/vocabulary.ts';
import { startVirtualAudio, type VirtualAudio } from '../helpers/virtual-audio.ts';

/** The tolerance docs/voice.md states for reply latencies measured over the acoustic link. */
const LATENCY_TOLERANCE_MS = 150;

describe('acoustic link through a virtual sound card (PulseAudio null sinks)', () => {
  let audio: VirtualAudio;
  let bench: AcousticLink;
  let unit: AcousticLink;
  let latencyMs: number;
  beforeAll(async () => {
    audio = startVirtualAudio();
    latencyMs = await measureLoopbackLatency({ output: audio.bench.output, loopbackInput: 'bench_out.monitor', env: audio.env });
    bench = new AcousticLink({ devices: audio.bench, speaks: 'to_unit', env: audio.env, latencyMs });
    unit = new AcousticLink({ devices: audio.unit, speaks: 'to_bench', env: audio.env });
    await Promise.all([bench.open(), unit.open()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([bench?.close(), unit?.close()]);
    audio?.stop();
  });

  it('the loopback measurement gives the devices a finite, plausible latency', () => {
    expect(Number.isFinite(latencyMs)).toBe(true);
    expect(latencyMs).toBeGreaterThanOrEqual(PLAUSIBLE_LATENCY_MS.min);
    expect(latencyMs).toBeLessThanOrEqual(PLAUSIBLE_LATENCY_MS.max);
  });

  it('the unit hears what the bench plays, labelled with the turn it expects, and recognises it', { timeout: 60_000 }, async () => {
    const heard = new UtteranceCollector(unit, 'to_unit');
    const text = 'navigate to the nearest charging station';
    const pcm = await new EspeakTts().synthesize(text, voiceForPersona('neutral'));
    await streamUtterance(bench, pcm, { sessionId: 'a', turn: 0, direction: 'to_unit', realtime: true });
    unit.expect('a', 0);
    const utterance = await heard.take('a', 0, 10_000);
    heard.close();
    // all of the speech arrives (plus the detector's preroll and hangover), as one utterance
    expect(utterance.pcm.samples.length).toBeGreaterThanOrEqual(pcm.samples.length * 0.9);
    expect(utterance.reason).toBe('completed');
    const stt = new PocketsphinxStt({ vocabulary: driverVocabulary() });
    const direct = (await stt.transcribe(pcm)).text;
    const overTheAir = (await stt.transcribe(utterance.pcm)).text;
    await stt.dispose?.();
    // the air path costs the recogniser at most one word more than the synthesized audio itself
    expect(wordErrorRate(text, overTheAir)).toBeLessThanOrEqual(wordErrorRate(text, direct) + 1 / 6 + 1e-9);
  });

  it('a unit that delays its reply by known amounts is timed within the documented tolerance', { timeout: 90_000 }, async () => {
    const tts = new EspeakTts();
    const driver = await tts.synthesize('play some jazz', voiceForPersona('neutral'));
    const reply = await tts.synthesize('playing jazz', ASSISTANT_VOICE);
    const replies = new UtteranceCollector(bench, 'to_bench');
    const measured: Record<number, number> = {};
    for (const delayMs of [300, 1000]) {
      const streamed = await streamUtterance(bench, driver, { sessionId: 'b', turn: delayMs, direction: 'to_unit', realtime: true });
      bench.expect('b', delayMs);
      // the unit answers `delayMs` after the driver stopped speaking (its reply is ready: no recognition time)
      setTimeout(() => void streamUtterance(unit, reply, { sessionId: 'b', turn: delayMs, direction: 'to_bench', realtime: true }), delayMs);
      const received = await replies.take('b', delayMs, 10_000);
      measured[delayMs] = received.firstChunkAt! - streamed.endedAt;
      await unit.drained();
    }
    replies.close();
    // the reply is timed where its speech starts: after the synthesized audio's own leading silence
    const firstSpeechFrame = Array.from({ length: Math.ceil(reply.samples.length / 320) }, (_, f) => reply.samples.subarray(f * 320, (f + 1) * 320)).findIndex(
      (frame) => 20 * Math.log10(Math.sqrt(frame.reduce((sum, s) => sum + s * s, 0) / frame.length) / 32768) > -45,
    );
    const leadingSilenceMs = firstSpeechFrame * 20;
    for (const delayMs of [300, 1000]) {
      const expected = delayMs + leadingSilenceMs;
      expect(Math.abs(measured[delayMs]! - expected), `injected ${delayMs} ms + ${leadingSilenceMs} ms of leading silence, measured ${measured[delayMs]!.toFixed(1)} ms`).toBeLessThanOrEqual(LATENCY_TOLERANCE_MS);
    }
  });

  it('an input that records only digital silence is a rig fault, not a unit failure', async () => {
    const faults: string[] = [];
    const deaf = new AcousticLink({ devices: { output: audio.bench.output, input: 'unit_out.monitor' }, speaks: 'to_unit', env: audio.env, onRigFault: (fault) => faults.push(fault.kind) });
    await deaf.open();
    await new Promise((resolve) => setTimeout(resolve, 800));
    const fault = deaf.checkInputAlive();
    await deaf.close();
    expect(fault?.kind).toBe('dead_input');
    expect(faults).toEqual(['dead_input']);
  });

  it('voice devices lists outputs and inputs with the level on each input (an idle monitor is flagged silent)', { timeout: 30_000 }, async () => {
    const { listAudioDevices } = await import('../../src/system/audio-devices.ts');
    const devices = await listAudioDevices({ env: audio.env, listenMs: 300 });
    expect(devices.filter((d) => d.kind === 'output').map((d) => d.name).sort()).toEqual(['bench_out', 'unit_out']);
    const inputs = devices.filter((d) => d.kind === 'input');
    expect(inputs.map((d) => d.name).sort()).toEqual(['bench_out.monitor', 'unit_out.monitor']);
    for (const input of inputs) expect(input.level?.fault).toBe('dead_input');
    // the doctor (and with it the rig status screen) lists the same devices
    const { audioDevicesCheck } = await import('../../src/doctor/checks.ts');
    const saved = { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR, PULSE_RUNTIME_PATH: process.env.PULSE_RUNTIME_PATH, HOME: process.env.HOME };
    Object.assign(process.env, { XDG_RUNTIME_DIR: audio.env.XDG_RUNTIME_DIR, PULSE_RUNTIME_PATH: audio.env.PULSE_RUNTIME_PATH, HOME: audio.env.HOME });
    try {
      const [result] = await audioDevicesCheck({ models: [], allowedHosts: [] });
      expect(result?.status).toBe('ok');
      expect(result?.detail).toMatch(/outputs: bench_out, unit_out; inputs: bench_out\.monitor \(peak -120 dBFS/);
    } finally {
      for (const [key, value] of Object.entries(saved)) value === undefined ? delete process.env[key] : (process.env[key] = value);
    }
  });

  it('a device that does not exist fails with its name', async () => {
    const missing = new AcousticLink({ devices: { output: 'bench_out', input: 'no_such_source' }, speaks: 'to_unit', env: audio.env });
    await expect(missing.open()).rejects.toThrow(/no_such_source/);
    await missing.close();
  });
});
