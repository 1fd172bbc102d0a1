import { describe, expect, it } from 'vitest';
import { CampaignConfigSchema, ConfigError } from '../../src/kinds/dialogue/config.ts';
import { buildTiers, describeTiers } from '../../src/kinds/dialogue/tiers.ts';
import { TierUnavailableError } from '../../src/run/model-tiers.ts';
import { startFakeLlmServer } from '../helpers/fakeLlmServer.ts';

const config = (fields: Record<string, unknown>) => CampaignConfigSchema.parse({ name: 't', seeds: 'seeds.yaml', conversations: 1, ...fields });

async function refusal(promise: Promise<unknown>): Promise<TierUnavailableError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TierUnavailableError);
  return error as TierUnavailableError;
}

describe('building the tiers a run names: explicit means explicit', () => {
  it('uses every named model that is available, judges in the order given', async () => {
    const server = await startFakeLlmServer({ models: ['sim:latest', 'judge:latest'] });
    try {
      const lines: string[] = [];
      const tiers = await buildTiers(config({ llm: { ollamaHost: server.url }, simulator: 'ollama:sim', judges: ['ollama:judge', 'oracle'] }), {}, (l) => void lines.push(l));
      expect(tiers.simulator).toMatchObject({ kind: 'llm', describe: 'ollama:sim' });
      expect(tiers.judges.map((j) => j.ref)).toEqual(['ollama:judge', 'oracle']);
      expect(tiers.fallbacks).toEqual([]);
      expect(tiers.tracker).not.toBeNull();
      expect(lines).toEqual([expect.stringMatching(/^simulator: ollama:sim \(Ollama at .* has sim\)/), expect.stringMatching(/^judge: ollama:judge/)]);
      // the record names the references in precedence order and the prompt versions each model tier sends
      const record = describeTiers(tiers);
      expect(record.judges.map((j) => [j.ref, j.kind])).toEqual([
        ['ollama:judge', 'llm'],
        ['oracle', 'oracle'],
      ]);
      expect(record.judges[0].prompts.map((p) => p.id)).toEqual(['dialogue/system.v1', 'judge/turn-labels.v6', 'judge/dimension.v5', 'judge/rubrics.v2']);
      expect(record.judges[0].prompts[0].sha256).toMatch(/^[0-9a-f]{16}$/);
      expect(record.judges[1].prompts).toEqual([]);
      expect(record.simulator.prompts.map((p) => p.id)).toContain('simulator/select-and-generate.v5');
    } finally {
      await server.close();
    }
  });

  it('refuses a model the server lacks, an endpoint outside the allowed hosts and an unreachable server, naming each with its fix', async () => {
    const server = await startFakeLlmServer({ models: ['sim:latest'] });
    try {
      const error = await refusal(
        buildTiers(config({ llm: { ollamaHost: server.url }, simulator: 'ollama:missing', judges: ['oracle', 'openai-compat:http://203.0.113.7:8080/v1#judge'] })),
      );
      expect(error.message).toMatch(/^the run was not started, nothing was recorded: models it names are not available/);
      expect(error.message).toMatch(/simulator ollama:missing: Ollama at .* does not have missing \(has: sim:latest\)\n {4}fix: ollama pull missing\n {4}or, to run with the template tier instead, add to the campaign config: {2}fallback: \{ simulator: template \}/);
      expect(error.message).toMatch(/judge openai-compat:http:\/\/203\.0\.113\.7:8080\/v1#judge: .*203\.0\.113\.7.*\n {4}fix: add the host to llm\.allowedHosts/);
      expect(error.message).toMatch(/fallback: \{ judges: oracle \}/);
      // the refused endpoint was never contacted, the missing model never called
      expect(server.chatRequests()).toHaveLength(0);
    } finally {
      await server.close();
    }
    const down = await refusal(buildTiers(config({ llm: { ollamaHost: server.url } }), { judges: ['ollama:judge'] }));
    expect(down.message).toMatch(/judge ollama:judge: Ollama not reachable at .*\n {4}fix: ollama serve/);
  });

  it('falls back only where the config asks for it, in the judge’s place, and returns what it replaced', async () => {
    const server = await startFakeLlmServer({ models: ['judge-b:latest'] });
    try {
      const fields = { llm: { ollamaHost: server.url }, simulator: 'ollama:sim', judges: ['ollama:judge-a', 'ollama:judge-b', 'oracle'], fallback: { judges: 'oracle' } };
      // the simulator has no fallback: still refused
      const error = await refusal(buildTiers(config(fields)));
      expect(error.problems).toHaveLength(1);
      expect(error.message).toMatch(/simulator ollama:sim/);
      const tiers = await buildTiers(config({ ...fields, fallback: { judges: 'oracle', simulator: 'template' } }));
      expect(tiers.simulator.kind).toBe('template');
      // judge-a's place goes to the oracle, which judges once
      expect(tiers.judges.map((j) => j.ref)).toEqual(['oracle', 'ollama:judge-b']);
      expect(tiers.fallbacks).toEqual([
        { role: 'simulator', requested: 'ollama:sim', replacedBy: 'template', reason: expect.stringContaining('does not have sim'), fix: 'ollama pull sim' },
        { role: 'judge', requested: 'ollama:judge-a', replacedBy: 'oracle', reason: expect.stringContaining('does not have judge-a'), fix: 'ollama pull judge-a' },
      ]);
      expect(describeTiers(tiers).fallbacks).toEqual(tiers.fallbacks);
    } finally {
      await server.close();
    }
  });

  it('never falls back from a reference that does not parse, and refuses a judge listed twice', async () => {
    const error = await refusal(buildTiers(config({ fallback: { judges: 'oracle' } }), { judges: ['olama:qwen3'] }));
    expect(error.message).toMatch(/judge olama:qwen3: .*\n {4}fix: use one of: ollama:<tag>/);
    expect(error.message).not.toMatch(/fallback:/);
    await expect(buildTiers(config({}), { judges: ['oracle', 'oracle'] })).rejects.toThrow(ConfigError);
    expect(() => config({ judges: ['oracle', 'oracle'] })).toThrow(/list each judge once/);
    expect(() => config({ fallback: { judges: 'template' } })).toThrow();
    expect(() => config({ fallback: { judge: 'oracle' } })).toThrow();
  });
});
