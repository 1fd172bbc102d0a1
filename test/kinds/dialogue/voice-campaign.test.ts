import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { ConfigError, loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import { planConversations } from '../../../src/kinds/dialogue/sampling.ts';
import { writeRunOutputs } from '../../../src/report/write.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { connectHeadUnit } from '../../../src/bridge/client.ts';
import { startBridgeServer } from '../../../src/bridge/server.ts';
import { bridgeReadiness } from '../../../src/run/connect.ts';
import { ReferenceHeadUnit } from '../../../src/headunit/reference/reference-headunit.ts';
import { VoiceSummarySchema } from '../../../src/voice/metrics.ts';
import { parseWav } from '../../../src/voice/wav.ts';
import { addUtterance } from '../../../src/voice/library.ts';
import { EspeakTts } from '../../../src/voice/espeak.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

const CLI = resolve('bin/icabench.js');
const SEEDS = resolve('bench-configs/seeds/in-car.yaml');

/** bench-configs/voice-quickstart.yaml with fewer, shorter conversations (the full campaign is the README's command) */
function shortVoiceQuickstart(dir: string, conversations = 1, maxTurns = 4): string {
  const doc = parseDocument(readFileSync('bench-configs/voice-quickstart.yaml', 'utf8'));
  doc.set('seeds', SEEDS);
  doc.set('conversations', conversations);
  doc.set('maxTurns', [maxTurns]);
  const path = join(dir, 'voice-short.yaml');
  writeFileSync(path, doc.toString());
  return path;
}

function configFile(yaml: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'icabench-voice-config-')), 'campaign.yaml');
  writeFileSync(path, `name: v\nseeds: ${SEEDS}\nconversations: 3\n${yaml}`);
  return path;
}

describe('voice campaign, end to end offline', () => {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-voice-campaign-'));
  const out = join(dir, 'out');
  const workspace = join(dir, 'ws');

  // 5 spoken conversations through the CLI: about 50 s on an idle 2-core machine, over 80 s under load
  it('icabench run speaks every turn at each SNR level and reports WER per level with playable audio', { timeout: 300_000 }, () => {
    const result = spawnSync(process.execPath, [CLI, 'run', shortVoiceQuickstart(dir), '--out', out, '--workspace', workspace, '--no-progress'], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    // one sampled conversation × five levels (clean, 20, 10, 5, 0 dB), none lost to errors
    expect(summary.conversations).toBe(5);
    expect(summary.errors).toEqual({ sut_error: 0, simulator_error: 0, judge_error: 0 });
    const voice = VoiceSummarySchema.parse(summary.voice);
    expect(Object.keys(voice.bySnr).sort()).toEqual(['0', '10', '20', '5', 'clean']);
    expect(voice.turns).toBe(summary.turns);
    expect(voice.bySnr.clean.headUnitAsrWer).toBeLessThanOrEqual(0.1);
    // road noise at 0 dB drowns the speech; clean speech is recognised
    expect(voice.bySnr['0'].headUnitAsrWer as number).toBeGreaterThan(0.5);
    expect(voice.bySnr['0'].voiceFailRate).toBeGreaterThan(voice.bySnr.clean.voiceFailRate);
    for (const level of Object.values(voice.bySnr)) expect(level.conversations).toBe(1);
    // per level, the conversation fail rate is that level's conversation outcome in conversations.csv
    const rows = readFileSync(join(out, 'conversations.csv'), 'utf8').trim().split('\n').slice(1).map((line) => line.split(','));
    for (const [key, , , , , , outcome] of rows) {
      const level = key.endsWith('-clean') ? 'clean' : key.replace(/^.*-snr/, '');
      expect(voice.bySnr[level].failRate).toBe(outcome === 'fail' ? 1 : outcome === 'pass' ? 0 : null);
    }
    expect(voice.replyTranscriptionWer).not.toBeNull();
    expect(voice.firstReplyLatencyMs.p50 as number).toBeGreaterThan(0);
    expect(voice.firstReplyLatencyMs.p95 as number).toBeGreaterThanOrEqual(voice.firstReplyLatencyMs.p50 as number);

    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('<h2>Voice</h2>');
    // the drill-down shows what the unit heard under each utterance
    expect(html.match(/<div class="muted">heard: /g)?.length).toBe(summary.turns);
    for (const level of ['clean', '20 dB', '10 dB', '5 dB', '0 dB']) expect(html).toContain(`<td>${level}</td>`);
    const sources = [...html.matchAll(/<audio controls preload="none" src="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThanOrEqual(10);
    for (const source of sources) expect(parseWav(readFileSync(join(out, source)), source).samples.length).toBeGreaterThan(0);
  });

  it('stores each spoken turn with its voice record and audio, so a report rebuilt from the store has the same voice section', async () => {
    const store = ResultStore.open(join(workspace, 'icabench.db'));
    try {
      const run = store.listRuns().at(-1)!;
      const conversations = [...store.conversations(run.id)];
      expect(conversations.map((c) => c.spec.key.replace(/^.*-r0-/, '')).sort()).toEqual(['clean', 'snr0', 'snr10', 'snr20', 'snr5']);
      // the levels are paired: same seed, context and opening utterance
      expect(new Set(conversations.map((c) => JSON.stringify([c.spec.seed.id, c.spec.context, c.turns[0].utterance.text]))).size).toBe(1);
      for (const conversation of conversations) {
        for (const turn of conversation.turns) {
          expect(turn.voice?.utteranceText).toBe(turn.utterance.text);
          expect(turn.voice?.recognizedText).toBe(turn.reply?.recognizedText);
          expect(turn.voice?.snrDb).toBe(conversation.spec.snrDb);
        }
        const names = store.artifacts(run.id, conversation.spec.key).map((a) => a.name);
        expect(names).toContain('turn0-driver.wav');
        expect(names).toContain('turn0-reply.wav');
      }
      const rebuilt = (await writeRunOutputs(store, run.id, join(dir, 'rebuilt'), { unit: 'the built-in reference head unit', faults: null })).summary;
      expect(rebuilt.voice).toEqual(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')).voice);
    } finally {
      store.close();
    }
  });
});

describe('voice campaign with recorded utterances', () => {
  it('plays a recording from the library when its transcript matches what the simulator says, and synthesizes the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-voice-library-'));
    const path = configFile('maxTurns: [2]\nconcurrency: 1\nvoice: { library: lib }\n');
    const campaign = loadCampaignConfig(path);
    const store = ResultStore.open(join(dir, 'icabench.db'));
    try {
      // first the opening line the simulator will say (the plan and the template simulator are deterministic)
      const first = await runCampaign({ ...campaign, config: { ...campaign.config, voice: undefined } }, { store, tiers: await buildTiers(campaign.config) });
      const opening = [...store.conversations(first.runId)][0].turns[0].utterance.text;
      // a "recording" of it: here another espeak-ng voice stands in for a person
      await addUtterance(join(path, '..', 'lib'), { id: 'opening-1', text: opening, speaker: 'stand-in' }, await new EspeakTts().synthesize(opening, { voice: 'en-us+klatt4', rateWpm: 150, pitch: 40, amplitude: 100 }));
      const spoken = await runCampaign(loadCampaignConfig(path), { store, tiers: await buildTiers(campaign.config) });
      const turns = [...store.conversations(spoken.runId)][0].turns;
      expect(turns[0].utterance.text).toBe(opening);
      expect(turns[0].voice?.driverAudioSource).toBe('library:opening-1');
      expect(turns[0].voice?.headUnitAsrWer).toBe(0);
      expect(turns.slice(1).every((t) => t.voice?.driverAudioSource === 'tts:espeak-ng')).toBe(true);
    } finally {
      store.close();
    }
  });

  it('names the file when a library recording is not 16 kHz mono, before a run is recorded', async () => {
    const path = configFile('voice: { library: badlib }\n');
    const lib = join(path, '..', 'badlib');
    await addUtterance(lib, { id: 'x', text: 'hello' }, await new EspeakTts().synthesize('hello', { voice: 'en-us+klatt', rateWpm: 150, pitch: 50, amplitude: 100 }));
    const wav = readFileSync(join(lib, 'x.wav'));
    wav.writeUInt16LE(2, 22); // channels: stereo
    writeFileSync(join(lib, 'x.wav'), wav);
    const campaign = loadCampaignConfig(path);
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-voice-store-')), 'icabench.db'));
    try {
      await expect(runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) })).rejects.toThrow(/x\.wav.*(stereo|channel)/i);
      expect(store.listRuns()).toEqual([]);
    } finally {
      store.close();
    }
  });
});

describe('voice campaign configuration', () => {
  it('plans each conversation once per SNR level with the same seed and context', () => {
    const campaign = loadCampaignConfig(configFile('repeats: 2\nvoice: { acoustics: { snrDb: [clean, 10] } }\n'));
    const plan = planConversations(campaign);
    expect(plan).toHaveLength(3 * 2 * 2);
    expect(plan.slice(0, 4).map((s) => [s.key.replace(/^c00000-[^]*?-(r\d)/, '$1'), s.snrDb])).toEqual([
      ['r0-clean', null],
      ['r0-snr10', 10],
      ['r1-clean', null],
      ['r1-snr10', 10],
    ]);
    expect(new Set(plan.slice(0, 4).map((s) => JSON.stringify([s.seed.id, s.context]))).size).toBe(1);
  });

  it('keeps the plan of a campaign without voice unchanged (no SNR in keys or specs)', () => {
    const plan = planConversations(loadCampaignConfig(configFile('')));
    expect(plan.every((s) => !('snrDb' in s) && /-r0$/.test(s.key))).toBe(true);
  });

  it('refuses voice with the text-only http head unit, and a repeated SNR level, naming the field', () => {
    expect(() => loadCampaignConfig(configFile('headUnit: { type: http, baseUrl: "http://127.0.0.1:9/v1", model: m }\nvoice: {}\n'))).toThrow(
      /campaign\.yaml:\d+: voice: the http head unit adapter carries text only/,
    );
    expect(() => loadCampaignConfig(configFile('voice: { acoustics: { snrDb: [10, 10] } }\n'))).toThrow(ConfigError);
    expect(() => loadCampaignConfig(configFile('voice: { acoustics: { snrDb: [10, 10] } }\n'))).toThrow(/voice\.acoustics\.snrDb: each SNR level may appear only once/);
  });

  it('fails before recording a run when espeak-ng is missing, naming the package to install', async () => {
    const campaign = loadCampaignConfig(configFile('voice: {}\n'));
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-voice-store-')), 'icabench.db'));
    const path = process.env.PATH;
    process.env.PATH = mkdtempSync(join(tmpdir(), 'icabench-empty-path-'));
    try {
      await expect(runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) })).rejects.toThrow(/espeak-ng was not found on PATH: install the Debian package "espeak-ng"/);
      expect(store.listRuns()).toEqual([]);
    } finally {
      process.env.PATH = path;
      store.close();
    }
  });

  it('refuses a bridge head unit that does not declare audio, before any conversation', async () => {
    const campaign = loadCampaignConfig(configFile('voice: {}\n'));
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-voice-store-')), 'icabench.db'));
    const bridge = await startBridgeServer({ host: '127.0.0.1', port: 0, token: 't' });
    const client = await connectHeadUnit({ url: bridge.url, token: 't', handler: new ReferenceHeadUnit({}) });
    try {
      const connection = await bridge.waitForHeadUnit(5_000);
      const headUnit = { connection, bridge, reference: null, audio: connection.audio, ensureReady: bridgeReadiness(bridge, connection), close: async () => undefined };
      await expect(runCampaign(campaign, { store, tiers: await buildTiers(campaign.config), headUnit })).rejects.toThrow(/voice: bridge head unit "icabench-reference".* does not announce capabilities\.audio/);
      await expect(runCampaign(campaign, { store, tiers: await buildTiers(campaign.config), headUnit: { ...headUnit, audio: null } })).rejects.toThrow(/voice: this head unit connection carries no audio/);
      expect(store.listRuns()).toEqual([]);
    } finally {
      await client.close();
      await bridge.close();
      store.close();
    }
  });
});
