import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvider } from '../../src/llm/index.ts';
import type { LlmProvider } from '../../src/llm/types.ts';
import { weekdayOf } from '../../src/judgebench/dataset.ts';
import { generateDataset } from '../../src/judgebench/generator.ts';
import { TECHNIQUES, calibrateConfidence, judgePair, type Technique } from '../../src/judgebench/techniques.ts';
import { llmConfiguration, runConfiguration, summarize } from '../../src/judgebench/runner.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { fakeJudgeModel } from './fakeJudgeModel.ts';

const pairs = generateDataset({ seed: 11, users: 2 });
let server: FakeLlmServer;
const providers = new Map<string, LlmProvider>();
const model = (name: string) => {
  let p = providers.get(name);
  if (!p) {
    p = createProvider(`openai-compat:${server.url}/v1#${name}`, { maxConcurrent: 8 });
    providers.set(name, p);
  }
  return p;
};

beforeAll(async () => {
  server = await startFakeLlmServer({ respond: fakeJudgeModel(pairs) });
});
afterAll(async () => {
  await Promise.all([...providers.values()].map((p) => p.close()));
  await server.close();
});

/** Chat requests the server received while `run` ran. */
async function countCalls<T>(run: () => Promise<T>): Promise<{ value: T; requests: number }> {
  const before = server.chatRequests().length;
  const value = await run();
  return { value, requests: server.chatRequests().length - before };
}

const EXPECTED_CALLS: Record<Technique, number> = {
  io: 1,
  'cot-1': 1,
  'cot-3': 1,
  'cot-5': 1,
  'sc-3': 3,
  'sc-5': 5,
  'adaptive-sc-3': 2,
  'adaptive-sc-5': 3,
  mab: 3,
  mad: 3,
  ar: 2,
};

describe('LLM judge techniques against a fake model server', () => {
  it.each(TECHNIQUES)('%s gets every verdict right with a consistent model and makes the expected number of calls', async (technique) => {
    const models = technique === 'ar' ? [model('truthful'), model('truthful-b')] : [model('truthful')];
    const configuration = llmConfiguration('fake', technique, models);
    const { value: results, requests } = await countCalls(() => runConfiguration(configuration, pairs, { concurrency: 3 }));
    const summary = summarize(configuration, results);
    expect(summary.f1).toBe(1);
    expect(summary.errors).toBe(0);
    expect(summary.calls).toBe(EXPECTED_CALLS[technique] * pairs.length);
    expect(requests).toBe(summary.calls);
    expect(summary.tokensIn).toBeGreaterThan(0);
  });

  it('shows the judge only the utterance, never the structured preferences', async () => {
    const { value } = await countCalls(() => judgePair('io', [model('truthful')], pairs[1]));
    expect(value.fits).toBe(pairs[1].label);
    const sent = JSON.stringify(server.chatRequests().at(-1)!.body.messages);
    expect(sent).toContain(pairs[1].user.utterance.replace(/"/g, '\\"'));
    expect(sent).not.toContain('"preferences"');
    expect(sent).toContain('more than a 15-minute drive');
  });

  it('CoT-n sends n worked examples before the pair', async () => {
    await judgePair('cot-3', [model('truthful')], pairs[0]);
    const messages = server.chatRequests().at(-1)!.body.messages as Array<{ role: string }>;
    expect(messages.filter((m) => m.role === 'assistant')).toHaveLength(3);
    expect(messages.filter((m) => m.role === 'user')).toHaveLength(4);
  });

  it('SC takes the majority of sampled paths and uses different seeds per path', async () => {
    const { value, requests } = await countCalls(() => judgePair('sc-5', [model('noisy')], pairs[2]));
    // seeds 1..5: odd seeds (1, 3, 5) tell the truth, so the majority is right
    expect(requests).toBe(5);
    expect(value.votes!.filter((v) => v === pairs[2].label)).toHaveLength(3);
    expect(value.fits).toBe(pairs[2].label);
    const seeds = server.chatRequests().slice(-5).map((r) => r.body.seed).sort();
    expect(new Set(seeds).size).toBe(5);
  });

  it('adaptive SC keeps sampling while the majority can still change', async () => {
    // seeds 1,2,3 → truth, lie, truth: 2–1 with 2 left, so it must go on; seed 4 lies (2–2), seed 5 decides
    const { value, requests } = await countCalls(() => judgePair('adaptive-sc-5', [model('noisy')], pairs[2]));
    expect(requests).toBe(5);
    expect(value.fits).toBe(pairs[2].label);
  });

  it('MAB takes the majority of the three personas', async () => {
    const { value, requests } = await countCalls(() => judgePair('mab', [model('split')], pairs[3]));
    expect(requests).toBe(3);
    expect(value.votes).toHaveLength(3);
    expect(value.fits).toBe(pairs[3].label);
  });

  it('MAD debates until consensus, and otherwise stops after 3 rounds and takes the majority', async () => {
    const persuaded = await countCalls(() => judgePair('mad', [model('persuadable')], pairs[3]));
    expect(persuaded.requests).toBe(6);
    expect(persuaded.value.votes).toEqual([pairs[3].label, pairs[3].label, pairs[3].label]);
    const debateRequest = server.chatRequests().at(-1)!.body.messages.at(-1).content as string;
    expect(debateRequest).toContain('The other judges answered');

    const stubborn = await countCalls(() => judgePair('mad', [model('split')], pairs[3]));
    expect(stubborn.requests).toBe(9);
    expect(stubborn.value.fits).toBe(pairs[3].label);
  });

  it('AR weighs answers by calibrated confidence across models', async () => {
    // one confident truthful model (weight 1.0) outvotes two unsure contrary ones (0.1 + 0.1)
    const { value, requests } = await countCalls(() => judgePair('ar', [model('truthful'), model('unsure-contrary'), model('unsure-contrary-b')], pairs[4]));
    expect(requests).toBe(3);
    expect(value.fits).toBe(pairs[4].label);
    expect(value.byModel && Object.keys(value.byModel)).toHaveLength(3);
    await expect(judgePair('ar', [model('truthful')], pairs[4])).rejects.toThrow(/at least two models/);
  });

  it("calibrates confidence with the paper's step function f(p) (Habicht et al. §3.3.3): 0.95 → 0.8, 0.75 → 0.3, 0.55 → 0.1", () => {
    // the worked values of the issue, then every step's edges: 1.0 at p = 1, 0.8 on [0.9, 1), 0.5 on [0.8, 0.9), 0.3 on [0.6, 0.8), 0.1 below
    expect([0.95, 0.75, 0.55].map(calibrateConfidence)).toEqual([0.8, 0.3, 0.1]);
    expect([1, 0.99, 0.9, 0.89, 0.8, 0.79, 0.6, 0.59, 0].map(calibrateConfidence)).toEqual([1, 0.8, 0.8, 0.5, 0.5, 0.3, 0.3, 0.1, 0.1]);
  });

  it('CoT worked examples include a cost error (the kind the paper found hardest) from CoT-3 on', async () => {
    await judgePair('cot-3', [model('truthful')], pairs[0]);
    const examples = (server.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'assistant').map((m) => JSON.parse(m.content));
    expect(examples.map((e) => e.fits)).toEqual([true, false, false]);
    expect(examples[1].reasoning).toMatch(/Violated: cost\./);
    expect(examples[2].reasoning).toMatch(/Violated: time\./);
  });

  it('paper method: SC samples every path at temperature 0 with the five worked examples; the lab samples at 0.7 without', async () => {
    await judgePair('sc-3', [model('truthful')], pairs[1], { method: 'paper' });
    const paper = server.chatRequests().slice(-3).map((r) => r.body);
    expect(paper.map((b) => b.temperature)).toEqual([0, 0, 0]);
    expect(paper.every((b) => b.messages.filter((m: { role: string }) => m.role === 'assistant').length === 5)).toBe(true);
    await judgePair('sc-3', [model('truthful')], pairs[1]);
    const lab = server.chatRequests().slice(-3).map((r) => r.body);
    expect(lab.map((b) => b.temperature)).toEqual([0.7, 0.7, 0.7]);
    expect(lab.every((b) => b.messages.filter((m: { role: string }) => m.role === 'assistant').length === 0)).toBe(true);
  });

  it("paper method: the prompt is the paper's Table 3 template, with coordinates and no weekday; the lab's names the weekday", async () => {
    const pair = pairs[0];
    const { latitude, longitude } = pair.user.location;
    await judgePair('io', [model('truthful')], pair, { method: 'paper' });
    const [paperSystem, paperUser] = server.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(paperSystem.content).toMatch(/^You are a critical evaluator/);
    expect(paperSystem.content).toMatch(/If every parameter is CORRECT, the\s+decision is true\./);
    expect(paperUser.content).toMatch(/^User Block: \{"utterance":/);
    // the user's coordinates and the recommendation's, with the district labels
    expect(paperUser.content).toContain(`"latitude":${latitude},"longitude":${longitude}`);
    expect(paperUser.content).toContain(`"latitude":${pair.system.location.latitude},"longitude":${pair.system.location.longitude}`);
    expect(paperUser.content).toContain(`"date":"${pair.user.date}","time":"${pair.user.time}"`);
    const weekday = weekdayOf(pair.user.date);
    // the weekday appears nowhere but as a key of the opening hours
    expect(paperUser.content.replace(/"opening_hours":\{[^}]*\}/, '').toLowerCase()).not.toContain(weekday);
    await judgePair('io', [model('truthful')], pair);
    const labUser = (server.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>)[1];
    expect(labUser.content).toContain(`Driver context: ${pair.user.location.description}; ${weekday} ${pair.user.date}`);
    expect(labUser.content).not.toContain(String(latitude));
  });

  it('paper method: AR agents get the CoT-5 examples and discuss until they agree (at most 3 rounds); the lab asks once', async () => {
    // round 1: truthful vs contrary-persuadable disagree; round 2: both tell the truth → consensus, 4 calls
    const persuaded = await countCalls(() => judgePair('ar', [model('truthful'), model('contrary-persuadable')], pairs[4], { method: 'paper' }));
    expect(persuaded.requests).toBe(4);
    expect(persuaded.value.votes).toEqual([pairs[4].label, pairs[4].label]);
    const discussion = server.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(discussion.at(-1)!.content).toContain('The other judges answered');
    expect(discussion.at(-1)!.content).toMatch(/confidence 0\.95/);
    // five worked examples, the pair, the agent's own first answer, then the discussion round
    expect(discussion.filter((m) => m.role === 'assistant')).toHaveLength(6);
    // two agents that never agree discuss for the full R = 3 rounds
    const stubborn = await countCalls(() => judgePair('ar', [model('truthful'), model('contrary')], pairs[4], { method: 'paper' }));
    expect(stubborn.requests).toBe(6);
    const lab = await countCalls(() => judgePair('ar', [model('truthful'), model('contrary')], pairs[4]));
    expect(lab.requests).toBe(2);
  });

  it('records a judge error (no verdict, counted as wrong) when the model never answers usably', async () => {
    const configuration = llmConfiguration('broken', 'io', [model('contrary')], { maxRetries: 0 });
    const wrong = summarize(configuration, await runConfiguration(configuration, pairs.slice(0, 6)));
    expect(wrong.accuracy).toBe(0);
    const garbage = await startFakeLlmServer({ respond: () => 'no json here' });
    const provider = createProvider(`openai-compat:${garbage.url}/v1#x`);
    try {
      const judgment = await judgePair('io', [provider], pairs[0], { maxRetries: 1 });
      expect(judgment.fits).toBeNull();
      expect(judgment.calls).toBe(2);
      expect(judgment.error).toMatch(/invalid_output/);
    } finally {
      await provider.close();
      await garbage.close();
    }
  });
});
