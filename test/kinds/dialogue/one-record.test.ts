import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { RUN_FACTS, readRunFacts, recordRunFact } from '../../../src/run/run-facts.ts';
import { summarizeRun } from '../../../src/report/summary.ts';
import { combinedVerdict } from '../../../src/analysis/verdict.ts';
import { startBenchServer, type BenchServer } from '../../../src/server/server.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { ConversationResultSchema, type ConversationResult } from '../../../src/domain/conversation.ts';
import { benchModelResponder, startFakeLlmServer, type FakeLlmServer } from '../../helpers/fakeLlmServer.ts';
import { CONFIGS_DIR, startHarness } from '../../server/helpers.ts';
import { runCli } from '../../helpers/cli.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

const SEEDS = resolve('bench-configs/seeds/in-car.yaml');

/** GET a run's summary.json from a bench server, as text. */
async function summaryText(server: BenchServer, runId: string): Promise<string> {
  const res = await fetch(`${server.url}/api/runs/${runId}/summary.json`, { headers: { authorization: `Bearer ${server.token}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** The bench app over an existing workspace store: what its summary endpoint says of a run the CLI made. */
async function appSummaryOf(dbPath: string, runId: string): Promise<string> {
  const store = ResultStore.open(dbPath);
  const server = await startBenchServer({ store, workspace: mkdtempSync(join(tmpdir(), 'icabench-one-record-app-')), configsDir: CONFIGS_DIR, uiDir: null });
  try {
    return await summaryText(server, runId);
  } finally {
    await server.close();
    store.close();
  }
}

/** What legitimately differs between two runs of the same config: the run id (also in session ids), clocks and timings. */
const VOLATILE = new Set(['at', 'address', 'startedAt', 'durationMs', 'latencyMs', 'firstReplyLatencyMs', 'createdAt', 'finishedAt', 'meanLatencyMs', 'modelSeconds', 'gpuSeconds']);
function comparable(value: unknown, runId: string): unknown {
  return withoutVolatile(JSON.parse(JSON.stringify(value).replaceAll(runId, 'RUN')));
}
function withoutVolatile(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutVolatile);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([k]) => !VOLATILE.has(k)).map(([k, v]) => [k, withoutVolatile(v)]));
  return value;
}

/** A small spoken campaign fed by the parked drive scenario over the bridge: 2 conversations × 2 turns. */
const VOICE_VEHICLE = [
  'name: one-record',
  'mode: guided',
  `seeds: ${SEEDS}`,
  'conversations: 2',
  'personas: [polite]',
  'strategies: all',
  'maxTurns: [2]',
  'concurrency: 1',
  'seed: 42',
  'headUnit: { type: reference, worldSeed: 1, faults: { profiles: all, rate: 0.5, seed: 7 } }',
  'simulator: template',
  'judges: [oracle]',
  'vehicle: { scenario: parked, mapping: icabench_vehicle, transport: bridge, secondsPerTurn: 60 }',
  'voice: { enabled: true, acoustics: { snrDb: [clean], noise: { kind: road, seed: 1 } }, realtime: false, replyRecognizer: { engine: pocketsphinx }, vad: true, saveAudio: true }',
  '',
].join('\n');

describe('one rig, one record: the same campaign from the CLI and from the bench app', () => {
  it('stores identical conversations and facts, and summary.json is the same from run, report and the app', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-one-record-'));
    const config = join(dir, 'one-record.yaml');
    writeFileSync(config, VOICE_VEHICLE);

    // the CLI path
    const ran = await runCli(['run', config, '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress']);
    expect(ran.code, ran.stderr).toBe(0);
    const written = readFileSync(join(dir, 'out', 'summary.json'), 'utf8');
    const cliSummary = JSON.parse(written);
    const runId: string = cliSummary.run.id;
    // everything the report shows came from the store: vehicle frames, voice, tiers, invocation
    expect(cliSummary.conversations).toBe(2);
    expect(cliSummary.vehicle).toMatchObject({ scenario: 'parked', dbc: 'icabench_vehicle', transport: 'bridge', framesRejected: 0 });
    expect(cliSummary.vehicle.framesSent).toBeGreaterThan(0);
    expect(cliSummary.voice.turns).toBe(cliSummary.turns);
    expect(cliSummary.tiers).toHaveLength(1);
    expect(cliSummary.invocations).toEqual([{ icabench: JSON.parse(readFileSync('package.json', 'utf8')).version, node: process.version, platform: process.platform, arch: process.arch, modelHosts: [] }]);

    // `icabench report RUN` rebuilds it from the store byte for byte
    const reported = await runCli(['report', runId, '--workspace', join(dir, 'ws'), '--out', join(dir, 'again')]);
    expect(reported.code, reported.stderr).toBe(0);
    expect(readFileSync(join(dir, 'again', 'summary.json'), 'utf8')).toBe(written);
    // and so does the bench app's summary endpoint over the same workspace
    expect(await appSummaryOf(join(dir, 'ws', 'icabench.db'), runId)).toBe(written);
    // the rebuilt report is the run's report, vehicle and voice sections included
    const html = readFileSync(join(dir, 'again', 'report.html'), 'utf8');
    expect(html === readFileSync(join(dir, 'out', 'report.html'), 'utf8'), 'report.html rebuilt from the store differs').toBe(true);
    expect(html).toContain('<h2>Voice</h2>');
    expect(html).toContain(`&quot;framesSent&quot;: ${cliSummary.vehicle.framesSent}`);

    // the bench app runs the same config on the same rig (voice front end and CAN mapping included)
    const h = await startHarness();
    try {
      const started = await h.api('/api/campaign/start', { body: { configName: 'voice-quickstart.yaml', text: VOICE_VEHICLE } });
      expect(started.status, JSON.stringify(started.json)).toBe(202);
      await h.server.control.settled();
      const appRunId: string = started.json.runId;
      expect(h.store.getRun(appRunId)?.status).toBe('completed');
      const appText = await summaryText(h.server, appRunId);
      const appSummary = JSON.parse(appText);
      expect(appSummary.run.id).toBe(appRunId);
      const cliStore = ResultStore.open(join(dir, 'ws', 'icabench.db'));
      try {
        const cliConversations = [...cliStore.conversations(runId)];
        const appConversations = [...h.store.conversations(appRunId)];
        expect(appConversations.length).toBe(2);
        expect(appConversations.every((c) => c.turns.every((t) => t.voice !== undefined))).toBe(true);
        expect(comparable(appConversations, appRunId)).toEqual(comparable(cliConversations, runId));
        expect(readRunFacts(h.store, appRunId, RUN_FACTS.vehicleFrames).map(({ conversation, framesSent }) => [conversation, framesSent])).toEqual(
          readRunFacts(cliStore, runId, RUN_FACTS.vehicleFrames).map(({ conversation, framesSent }) => [conversation, framesSent]),
        );
      } finally {
        cliStore.close();
      }
      const { run: _appRun, ...appRest } = appSummary;
      const { run: _cliRun, ...cliRest } = cliSummary;
      expect(comparable(appRest, appRunId)).toEqual(comparable(cliRest, runId));
    } finally {
      await h.close();
    }
  });
});

describe('one record with a model judge: judges [model, oracle]', () => {
  let server: FakeLlmServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('stores every model call; loop, store, summary, rebuilt report and the app agree on the deciding verdict, and every verdict names its judge', { timeout: 120_000 }, async () => {
    server = await startFakeLlmServer({ respond: benchModelResponder(), models: ['judge:latest'] });
    const MODEL = 'ollama:judge';
    const dir = mkdtempSync(join(tmpdir(), 'icabench-one-record-llm-'));
    const config = join(dir, 'judged.yaml');
    writeFileSync(
      config,
      [`name: judged`, `seeds: ${SEEDS}`, 'conversations: 3', 'maxTurns: [3]', 'concurrency: 2', 'headUnit: { type: reference, faults: { profiles: all, rate: 0.5 } }', `judges: [${MODEL}, oracle]`, ''].join('\n'),
    );
    const ran = await runCli(['run', config, '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress'], { OLLAMA_HOST: server.url });
    expect(ran.code, ran.stderr).toBe(0);
    const written = readFileSync(join(dir, 'out', 'summary.json'), 'utf8');
    const summary = JSON.parse(written);
    const runId: string = summary.run.id;
    const db = join(dir, 'ws', 'icabench.db');

    const store = ResultStore.open(db);
    try {
      // every model call is in the store, and the llm section is computed from those calls
      const calls = readRunFacts(store, runId, RUN_FACTS.llmCalls).flatMap((f) => f.calls);
      expect(calls.length).toBe(server.chatRequests().length);
      expect(summary.llm.calls).toBe(calls.length);
      expect(summary.llm.tokensIn).toBe(calls.reduce((sum, c) => sum + c.promptTokens, 0));
      expect(summary.invocations[0].modelHosts).toEqual([{ ref: MODEL, host: server.url }]);
      // the deciding verdict: the model's, first in `judges:`, in the loop's stored verdicts, the store's outcome and the summary
      const stored = [...store.conversations(runId)];
      for (const conversation of stored) {
        for (const turn of conversation.turns) expect(turn.verdicts.map((v) => v.judge)).toEqual([MODEL, 'oracle']);
        expect(conversation.verdicts.map((v) => v.judge)).toEqual([MODEL, 'oracle']);
      }
      const decided = stored.filter((c) => combinedVerdict(c).outcome === 'pass' || combinedVerdict(c).outcome === 'fail');
      expect(summary.judgeTiers.judges[MODEL].decided).toBe(decided.length);
      expect(summary.perConversation.map((c: { key: string; decidedBy: string | null }) => [c.key, c.decidedBy])).toEqual(
        stored.map((c) => [c.spec.key, decided.includes(c) ? MODEL : null]),
      );
      expect(store.pageConversations(runId).rows.map((r) => r.outcome)).toEqual(stored.map((c) => combinedVerdict(c).outcome));
    } finally {
      store.close();
    }

    // with the model server gone, the record still rebuilds the same summary and report: nothing came from the run's memory
    await server.close();
    server = undefined;
    const reported = await runCli(['report', runId, '--workspace', join(dir, 'ws'), '--out', join(dir, 'again')]);
    expect(reported.code, reported.stderr).toBe(0);
    expect(readFileSync(join(dir, 'again', 'summary.json'), 'utf8')).toBe(written);
    expect(readFileSync(join(dir, 'again', 'report.html'), 'utf8')).toBe(readFileSync(join(dir, 'out', 'report.html'), 'utf8'));
    expect(readFileSync(join(dir, 'again', 'report.html'), 'utf8')).toContain(`<b>${MODEL}</b> <span class="muted">(llm, decides)</span>`);
    expect(await appSummaryOf(db, runId)).toBe(written);
  });
});

describe('one record across invocations', () => {
  it('a run interrupted and resumed reports the frames of every invocation, the same as a run in one go', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-one-record-resume-'));
    const config = join(dir, 'parked.yaml');
    writeFileSync(config, readFileSync('bench-configs/parked-safety.yaml', 'utf8').replace('seeds: seeds/in-car.yaml', `seeds: ${SEEDS}`).replace(/^conversations: \d+$/m, 'conversations: 4').replace(/^concurrency: \d+$/m, 'concurrency: 1'));
    const campaign = loadCampaignConfig(config);
    const store = ResultStore.open(join(dir, 'icabench.db'));
    try {
      const whole = await runCampaign(campaign, { store });
      const controller = new AbortController();
      const first = await runCampaign(campaign, { store, signal: controller.signal, onEvent: (e) => e.type === 'conversation_finished' && controller.abort() });
      expect(first.status).toBe('interrupted');
      expect(store.getRun(first.runId)!.stored).toBe(1);
      const resumed = await runCampaign(campaign, { store, resumeRunId: first.runId });
      expect(resumed.status).toBe('completed');

      const [a, b] = [await summarizeRun(store, whole.runId), await summarizeRun(store, first.runId)];
      expect(b.invocations).toHaveLength(2);
      expect(b.tiers).toHaveLength(2);
      // every conversation's frames were recorded once it ended; the interrupted invocation's count is not lost
      expect(readRunFacts(store, first.runId, RUN_FACTS.vehicleFrames).map((f) => f.conversation).sort()).toEqual(store.pageConversations(first.runId).rows.map((r) => r.key).sort());
      expect(b.vehicle).toEqual(a.vehicle);
      expect((b.vehicle as { framesSent: number }).framesSent).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  });
});

describe('run facts are validated both ways', () => {
  it('refuses to record a fact that does not fit its kind, and a stored fact that does not parse fails the summary naming the run and kind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-one-record-facts-'));
    const store = ResultStore.open(join(dir, 'icabench.db'));
    try {
      const runId = store.createRun({ name: 'facts', mode: 'guided', config: {}, plan: [] });
      expect(() => recordRunFact(store, runId, RUN_FACTS.vehicleFrames, { conversation: 'c1', framesSent: -1, framesRejected: null })).toThrow(/vehicle\.frames.*framesSent/);
      expect(store.runFacts(runId)).toEqual([]);
      recordRunFact(store, runId, RUN_FACTS.vehicleFeed, { scenario: 'parked', mapping: 'icabench_vehicle', dbc: 'icabench_vehicle', transport: 'bridge', secondsPerTurn: 60 });
      store.addRunFact(runId, RUN_FACTS.vehicleFrames, { conversation: 'c1', framesSent: 'many' });
      await expect(summarizeRun(store, runId)).rejects.toThrow(new RegExp(`run ${runId} fact vehicle\\.frames #1.*framesSent`));
    } finally {
      store.close();
    }
  });
});

describe('the dialogue loop stores its results without parsing them again', () => {
  it('every result the loop builds is what ConversationResultSchema keeps, so skipping the parse loses and adds nothing', { timeout: 120_000 }, async () => {
    // the guided quickstart (world-aware user, every fault profile) and a parked drive (vehicle context)
    for (const file of ['bench-configs/quickstart.yaml', 'bench-configs/parked-safety.yaml']) {
      const campaign = loadCampaignConfig(file);
      campaign.config.conversations = 12;
      const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-one-record-built-')), 'icabench.db'));
      const built: ConversationResult[] = [];
      try {
        const run = await runCampaign(campaign, { store, onEvent: (event) => event.type === 'conversation_finished' && built.push(event.result) });
        expect(built).toHaveLength(12);
        // as JSON (what the store writes): the same content, whatever the order of keys
        const asStored = (value: unknown) => JSON.parse(JSON.stringify(value));
        for (const result of built) expect(asStored(result), result.spec.key).toStrictEqual(asStored(ConversationResultSchema.parse(result)));
        // and what the store reads back (parsed at that boundary, in plan order) is what the loop built (in finishing order)
        const byKey = (a: ConversationResult, b: ConversationResult) => a.spec.key.localeCompare(b.spec.key);
        expect([...store.conversations(run.runId)].sort(byKey).map(asStored)).toStrictEqual([...built].sort(byKey).map(asStored));
      } finally {
        store.close();
      }
    }
  });
});
