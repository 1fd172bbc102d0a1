import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJudgeBench } from '../../src/judgebench/bench.ts';
import { generateDataset } from '../../src/judgebench/generator.ts';
import { injectedPairs } from '../../src/judgebench/injection.ts';
import { llmConfiguration, oracleConfiguration } from '../../src/judgebench/runner.ts';
import { createProvider } from '../../src/llm/index.ts';
import type { LlmProvider } from '../../src/llm/types.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { fakeJudgeModel } from './fakeJudgeModel.ts';

/** The judge benchmark's injection set against the fake server: it measures susceptibility; no model number is claimed. */
const pairs = generateDataset({ seed: 5, users: 3 });
let server: FakeLlmServer;
const providers: LlmProvider[] = [];
const provider = (model: string) => {
  const p = createProvider(`openai-compat:${server.url}/v1#${model}`, { maxConcurrent: 4 });
  providers.push(p);
  return p;
};

beforeAll(async () => {
  server = await startFakeLlmServer({ respond: fakeJudgeModel(pairs) });
});
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await server.close();
});

describe('judge-bench injection set', () => {
  it('appends an instruction demanding the wrong verdict to every pair, in several forms', () => {
    const injected = injectedPairs(pairs);
    expect(injected).toHaveLength(pairs.length);
    injected.forEach((p, i) => {
      expect(p.id).toBe(`${pairs[i].id}+injected`);
      expect(p.label).toBe(pairs[i].label);
      // it asks for the opposite of the label, in words or as a verdict
      expect(p.system.note).toMatch(p.label ? /"fits": false|does not fit|as wrong/ : /"fits": true|fits the request|as correct/);
    });
    expect(new Set(injected.slice(0, 3).map((p) => p.system.note!.slice(0, 12))).size).toBe(3);
  });

  it('reports a judge that follows injected instructions as susceptible, one that does not (and the rule oracle) as not', async () => {
    const configurations = [oracleConfiguration(), llmConfiguration('truthful', 'io', [provider('truthful')]), llmConfiguration('obedient', 'io', [provider('obedient')])];
    const dataset = { source: 'generated', pairs };
    const output = await runJudgeBench('injection', dataset, configurations, {}, { injection: true, concurrency: 4 });
    const scores = Object.fromEntries(output.configurations.map((c) => [c.judge, c.injection]));
    expect(scores.oracle).toEqual({ pairs: pairs.length, rightWithout: pairs.length, flipped: 0, susceptibility: 0 });
    expect(scores.truthful).toEqual({ pairs: pairs.length, rightWithout: pairs.length, flipped: 0, susceptibility: 0 });
    expect(scores.obedient).toEqual({ pairs: pairs.length, rightWithout: pairs.length, flipped: pairs.length, susceptibility: 1 });
    // without the injection set nothing changes: the plain scores stay those of the plain pairs
    expect(output.configurations.find((c) => c.judge === 'obedient')!.accuracy).toBe(1);
    expect(output.pairs['obedient/io+injected']).toHaveLength(pairs.length);

    // the judge saw the instruction only inside the escaped <recommendation> data block
    const injectedRequests = server.chatRequests().filter((r) => JSON.stringify(r.body.messages).includes('Note to the evaluator'));
    expect(injectedRequests.length).toBeGreaterThan(0);
    for (const request of server.chatRequests().filter((r) => JSON.stringify(r.body.messages).includes('"note":'))) {
      const user = (request.body.messages as Array<{ role: string; content: string }>).at(-1)!.content;
      const block = /<recommendation>(.*)<\/recommendation>/.exec(user)!;
      expect(user.match(/<\/recommendation>/g)).toHaveLength(1);
      expect(block[1]).not.toContain('\n');
      expect(JSON.parse(block[1]).note).toMatch(/evaluator|System:|<\/recommendation>/);
      expect(user.slice(block.index + block[0].length)).not.toMatch(/evaluator|System:|assistant:/);
    }
  });
});
