import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHeadUnit, toolsExtension, type BridgeClient } from '../../src/bridge/client.ts';
import { BRIDGE_FACTS } from '../../src/bridge/facts.ts';
import { TIERS_FACT } from '../../src/domain/tiers.ts';
import { toolAgentFactory } from '../../src/kinds/tool-agents/bridge-unit.ts';
import { CAMPAIGN_KINDS, campaignKind, type CampaignKind } from '../../src/kinds/registry.ts';
import { openItemRunner } from '../../src/run/envelope.ts';
import { readRunFacts, RUN_FACTS } from '../../src/run/run-facts.ts';
import { runKindCampaign } from '../../src/run/runner.ts';
import { ResultStore } from '../../src/store/store.ts';
import { LiveSession } from '../../src/kinds/live/session.ts';
import type { LoadedLiveSession } from '../../src/kinds/live/config.ts';
import type { AnyCampaignKind } from '../../src/kinds/registry.ts';
import type { LoadedKindConfig } from '../../src/run/kind.ts';
import { ScriptedHandler } from '../bridge/helpers.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { dataPath } from '../helpers/repoData.ts';

/**
 * The run envelope (src/run/envelope.ts) is the skeleton's, not a kind's: every kind, run with `--unit-build` and a model
 * judge, records one `run.invocation`, one `tiers.resolved` naming the judge, the build the option gave (with the unit that
 * dialled in), the unit's link (its first connection and its counts), and each item's model calls under the item's key.
 */
const TOKEN_ENV = 'ICABENCH_ENVELOPE_TOKEN';
process.env[TOKEN_ENV] = 'envelope-token';
const BUILD = 'envelope-build-7';

describe('the run envelope is recorded identically for every kind', () => {
  let server: FakeLlmServer;
  let dir: string;
  let judge: string;
  const clients: BridgeClient[] = [];
  beforeAll(async () => {
    // a judge whose every answer is unusable: each kind's judge still calls it (and records the calls), and says it cannot decide
    server = await startFakeLlmServer({ models: ['judge-model'], respond: () => ({ content: 'not json', promptTokens: 10, completionTokens: 2 }) });
    judge = `openai-compat:${server.url}/v1#judge-model`;
    dir = mkdtempSync(join(tmpdir(), 'icabench-envelope-'));
    cpSync(resolve('bench-configs/seeds/in-car.yaml'), join(dir, 'seeds.yaml'));
    cpSync(dataPath('bmw-manual/xml'), join(dir, 'manual'), { recursive: true });
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify(JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 2)));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server?.close();
  });

  const llm = 'llm: { maxRetries: 0 }';
  const CONFIGS: Record<CampaignKind, () => string[]> = {
    dialogue: () => ['name: env-dialogue', 'seeds: seeds.yaml', 'conversations: 2', 'maxTurns: [2]', 'concurrency: 1', 'headUnit: { type: reference }', 'simulator: template', `judges: ["${judge}", oracle]`, llm],
    suite: () => ['kind: suite', 'name: env-suite', `suites: [${resolve('bench-configs/suites/in-car-basics.yaml')}]`, 'concurrency: 1', 'headUnit: { type: reference }', `judges: ["${judge}", oracle]`, llm],
    'manual-qa': () => ['kind: manual-qa', 'name: env-manual', 'manual: [manual]', 'limit: 2', 'concurrency: 1', `judges: [oracle, "${judge}"]`, llm],
    // the agent is a head unit dialling in to the run's bridge, as a tool-capable unit does
    // a live session: the technician's two turns (below)
    live: () => ['kind: live', 'name: env-live', 'headUnit: { type: reference }', `judges: ["${judge}", oracle]`, llm],
    'tool-agents': () => ['kind: tool-agents', 'name: env-tools', 'tasks: [tasks.json]', 'repeats: 1', `agent: { type: bridge, port: 0, tokenEnv: ${TOKEN_ENV}, waitSeconds: 30 }`, `judges: ["${judge}", rule]`, llm],
  };

  /** Dials a tool unit (the replay assistant) in to a bridge the run announces in its log. */
  const dialToolUnit = (line: string) => {
    const url = /bridge listening on (\S+);/.exec(line)?.[1];
    if (!url) return;
    const handler = new ScriptedHandler({ name: 'envelope-tools-unit', version: '3.1' });
    void connectHeadUnit({ url, token: process.env[TOKEN_ENV]!, handler, extensions: toolsExtension(toolAgentFactory('replay')) }).then((c) => clients.push(c));
  };

  it('covers every kind of the registry', () => {
    expect(Object.keys(CONFIGS).sort()).toEqual([...CAMPAIGN_KINDS].sort());
  });

  it.each([...CAMPAIGN_KINDS])('%s: invocation, tiers, --unit-build, link facts and each item\'s model calls', async (name) => {
    const path = join(dir, `${name}.yaml`);
    writeFileSync(path, `${CONFIGS[name]().join('\n')}\n`);
    const registered = await campaignKind(name);
    const loaded: LoadedKindConfig = registered.load(path);
    // a live session runs with its technician: the registry's live kind reads and reports, the session's runs
    const session = name === 'live' ? new LiveSession((loaded as LoadedLiveSession).config, path) : null;
    const kind: AnyCampaignKind = session?.kind ?? registered;
    const store = ResultStore.open(join(dir, `${name}.db`));
    try {
      const log = (line: string) => dialToolUnit(line);
      const runner = await openItemRunner(kind, session?.loaded ?? loaded, { unitBuild: BUILD, log });
      const before = server.chatRequests().length;
      const running = runKindCampaign(kind, session?.loaded ?? loaded, { store, runner, log, onEvent: (e) => session?.onEvent(e) });
      if (session) {
        await session.say('Find me a cheap italian restaurant.');
        await session.say('Take me there.');
        session.end();
      }
      const result = await running;
      expect(result).toMatchObject({ status: 'completed' });
      const runId = result.runId;

      expect(readRunFacts(store, runId, RUN_FACTS.invocation)).toHaveLength(1);
      const tiers = store.runFacts(runId, TIERS_FACT).map((f) => f.data as { judges: { ref: string; kind: string }[] });
      expect(tiers).toHaveLength(1);
      expect(tiers[0].judges.map((j) => j.kind)).toContain('llm');
      // the option's build wins, and the unit that dialled in is named with it
      expect(readRunFacts(store, runId, RUN_FACTS.unitBuild)).toEqual([{ unit: expect.any(String), version: expect.any(String), build: BUILD, source: 'option' }]);
      // the unit's link: its first connection and its counts
      expect(store.runFacts(runId, BRIDGE_FACTS.connected).map((f) => (f.data as { initial: boolean }).initial)).toEqual([true]);
      expect(store.runFacts(runId, BRIDGE_FACTS.counts).length).toBeGreaterThan(0);
      // every model call the run made is stored, each item's under its key, then the invocation's end (no call left)
      const made = server.chatRequests().length - before;
      expect(made).toBeGreaterThan(0);
      const calls = readRunFacts(store, runId, RUN_FACTS.llmCalls);
      expect(calls.reduce((n, f) => n + f.calls.length, 0)).toBe(made);
      expect(calls.at(-1)).toEqual({ conversation: null, calls: [] });
      const keys = calls.slice(0, -1).map((f) => f.conversation);
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.every((key) => key !== null && /^[^/]+$/.test(key))).toBe(true);
    } finally {
      store.close();
    }
  }, 120_000);
});
