import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/yaml.ts';
import { LlmSettingsSchema } from '../../src/llm/settings.ts';
import { buildModelTiers, TierUnavailableError, type RoleTiers } from '../../src/run/model-tiers.ts';
import { openToolAgentsRig } from '../../src/kinds/tool-agents/campaign.ts';
import { TIERS_FACT, type TiersRecord } from '../../src/domain/tiers.ts';
import { ResultStore } from '../../src/store/store.ts';
import { dataPath } from '../helpers/repoData.ts';
import { runCli } from '../helpers/cli.ts';
import { readRunFacts, RUN_FACTS } from '../../src/run/run-facts.ts';
import { computeToolAgentsSummary } from '../../src/kinds/tool-agents/results.ts';
import { loadToolAgentsConfig } from '../../src/kinds/tool-agents/config.ts';
import { startFakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { runToolAgentsCampaign } from '../helpers/run-kinds.ts';

/** A role whose tiers are the references themselves (deterministic: "oracle"), enough to see what the builder does. */
const judges = (refs: string[], fallback?: RoleTiers<string>['fallback']): RoleTiers<string> => ({
  role: 'judge',
  refs,
  deterministic: { oracle: { kind: 'oracle', build: () => 'oracle-tier' } },
  model: (ref, models) => `${models.provider(ref).ref} via ${models.settings.ollamaHost}`,
  fallback,
});

describe('the one tier builder of every kind (src/run/model-tiers.ts)', () => {
  it('builds deterministic tiers without a tracker or model hosts', async () => {
    const built = await buildModelTiers({ judges: judges(['oracle']) }, LlmSettingsSchema.parse({}));
    expect(built.judges).toEqual({ tiers: ['oracle-tier'], refs: ['oracle'], uses: [{ ref: 'oracle', kind: 'oracle', prompts: [] }] });
    expect(built.tracker).toBeNull();
    expect(built.modelHosts).toEqual([]);
  });

  it('builds model tiers of several roles with one tracker, providers from the llm: settings, and records their hosts', async () => {
    const server = await startFakeLlmServer({ models: ['sim:latest', 'judge:latest'] });
    try {
      const settings = LlmSettingsSchema.parse({ ollamaHost: server.url });
      const lines: string[] = [];
      const built = await buildModelTiers(
        {
          simulator: { role: 'simulator', refs: ['ollama:sim'], deterministic: {}, model: (ref, models) => models },
          judges: judges(['ollama:judge', 'oracle']),
        },
        settings,
        (line) => void lines.push(line),
      );
      expect(built.judges.tiers).toEqual([`ollama:judge via ${server.url}`, 'oracle-tier']);
      expect(built.judges.uses.map((use) => [use.ref, use.kind])).toEqual([['ollama:judge', 'llm'], ['oracle', 'oracle']]);
      // the simulator's tier was built with the same tracker every model call of the run goes to
      expect(built.simulator.tiers[0].tracker).toBe(built.tracker);
      expect(built.tracker).not.toBeNull();
      expect(built.modelHosts).toEqual([{ ref: 'ollama:sim', host: server.url }, { ref: 'ollama:judge', host: server.url }]);
      expect(lines).toEqual([expect.stringMatching(/^simulator: ollama:sim \(/), expect.stringMatching(/^judge: ollama:judge \(/)]);
    } finally {
      await server.close();
    }
  });

  it('judges are listed once each; an unavailable model stops the build naming its role, unless the fallback is asked for', async () => {
    await expect(buildModelTiers({ judges: judges(['oracle', 'oracle']) }, LlmSettingsSchema.parse({}))).rejects.toThrow(ConfigError);
    const server = await startFakeLlmServer({ models: ['other:latest'] });
    try {
      const settings = LlmSettingsSchema.parse({ ollamaHost: server.url });
      const refused = await buildModelTiers({ judges: judges(['ollama:missing', 'oracle'], { ref: 'oracle', use: false, configKey: 'fallback: { judges: oracle }' }) }, settings).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(TierUnavailableError);
      expect((refused as Error).message).toMatch(/judge ollama:missing: .*\n {4}fix: ollama pull missing\n {4}or, to run with the oracle tier instead, add to the campaign config: {2}fallback: \{ judges: oracle \}/);
      const replaced = await buildModelTiers({ judges: judges(['ollama:missing', 'oracle'], { ref: 'oracle', use: true, configKey: 'fallback: { judges: oracle }' }) }, settings);
      // the replacement takes the model's place; the oracle judges once
      expect(replaced.judges.refs).toEqual(['oracle']);
      expect(replaced.fallbacks).toEqual([expect.objectContaining({ role: 'judge', requested: 'ollama:missing', replacedBy: 'oracle' })]);
      expect(replaced.tracker).toBeNull();
    } finally {
      await server.close();
    }
  });

  it('tool-agents: the endpoint agent, the task user and the policy judges are checked by the same builder, each named by its role', async () => {
    const server = await startFakeLlmServer({ models: ['judge:latest'] });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-tiers-'));
    try {
      const path = join(dir, 'tools.yaml');
      writeFileSync(path, `kind: tool-agents\nname: t\ntasks: [t.json]\nagent: { type: endpoint, model: "ollama:agent" }\nsimulator: "ollama:user"\njudges: [rule, "ollama:judge"]\nllm: { ollamaHost: "${server.url}" }\n`);
      const error = await openToolAgentsRig(loadToolAgentsConfig(path)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TierUnavailableError);
      expect((error as Error).message).toMatch(/\n {2}agent ollama:agent: .*does not have agent/);
      expect((error as Error).message).toMatch(/\n {2}simulator ollama:user: .*does not have user/);
      expect((error as Error).message).not.toMatch(/judge ollama:judge/);
    } finally {
      await server.close();
    }
  });

  it('tool-agents: each policy verdict names the judge that decided it by the reference tiers.resolved records', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-tiers-'));
    const path = join(dir, 'rule.yaml');
    writeFileSync(path, `kind: tool-agents\nname: rule\ntasks: [${dataPath('carbench/tasks_base.json')}]\nrepeats: 1\njudges: [rule]\n`);
    const store = ResultStore.open(join(dir, 'rule.db'));
    try {
      const run = await runToolAgentsCampaign(loadToolAgentsConfig(path), { store });
      const decided = run.results.flatMap((r) => r.score?.policy.judged ?? []).filter((v) => v.status !== 'not_judged');
      expect(decided.length).toBeGreaterThan(0);
      expect(new Set(decided.map((v) => v.judge))).toEqual(new Set(['rule']));
      expect((store.runFacts(run.runId, TIERS_FACT)[0].data as TiersRecord).judges.map((j) => j.ref)).toEqual(['rule']);
    } finally {
      store.close();
    }
  });

  it("the CLI's --simulator and --judge reach every kind's tier builder (a kind without the role refuses it by name)", { timeout: 300_000 }, async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'icabench-overrides-'));
    // nothing listens on port 9: the model is named by its role in the refusal, and no run is stored
    const cases: Array<[string, string[], RegExp]> = [
      ['bench-configs/quickstart.yaml', ['--simulator', 'ollama:nosuch-simulator'], /\n {2}simulator ollama:nosuch-simulator: /],
      ['bench-configs/quickstart.yaml', ['--judge', 'ollama:nosuch-judge'], /\n {2}judge ollama:nosuch-judge: /],
      ['bench-configs/manual-qa.yaml', ['--judge', 'oracle', 'ollama:nosuch-judge'], /\n {2}judge ollama:nosuch-judge: /],
      ['bench-configs/carbench-train.yaml', ['--simulator', 'ollama:nosuch-simulator', '--judge', 'ollama:nosuch-judge'], /\n {2}simulator ollama:nosuch-simulator: [\s\S]*\n {2}judge ollama:nosuch-judge: /],
      ['bench-configs/suite-basics.yaml', ['--simulator', 'template'], /--simulator: a suite campaign plays its scripted turns/],
    ];
    for (const [config, overrides, expected] of cases) {
      const ran = await runCli(['run', config, '--workspace', workspace, ...overrides], { OLLAMA_HOST: 'http://127.0.0.1:9' });
      expect(ran.code, `${config} ${overrides.join(' ')}`).toBe(2);
      expect(ran.stderr).toMatch(expected);
    }
  });

  it("tool-agents: summary.json's llm section accounts for every stored model call, as the other kinds' do", async () => {
    const server = await startFakeLlmServer({ models: ['judge-model'], respond: () => ({ content: JSON.stringify({ reasoning: 'followed', policy_followed: true }), promptTokens: 100, completionTokens: 7 }) });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-tiers-'));
    const path = join(dir, 'llm.yaml');
    writeFileSync(path, `kind: tool-agents\nname: llm\ntasks: [${dataPath('carbench/tasks_base.json')}]\ntaskIds: [base_0, base_2]\nrepeats: 1\njudges: ["openai-compat:${server.url}/v1#judge-model", rule]\nllm: { prices: { "openai-compat:${server.url}/v1#judge-model": { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } } }\n`);
    const store = ResultStore.open(join(dir, 'llm.db'));
    try {
      const { runId } = await runToolAgentsCampaign(loadToolAgentsConfig(path), { store });
      const calls = readRunFacts(store, runId, RUN_FACTS.llmCalls).flatMap((fact) => fact.calls);
      expect(calls.length).toBeGreaterThan(0);
      const { summary } = computeToolAgentsSummary(store, runId);
      expect(summary.llm).toMatchObject({ calls: calls.length, tokensIn: 100 * calls.length, tokensOut: 7 * calls.length });
      expect(summary.llm?.costUsd).toBeCloseTo((100 * calls.length * 1 + 7 * calls.length * 2) / 1e6, 12);
    } finally {
      store.close();
      await server.close();
    }
  });
});
