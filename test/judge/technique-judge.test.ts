import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dialogueWorkedExamples } from '../../src/kinds/dialogue/technique-examples.ts';
import { aggregateDimensionVotes, aggregateTurnVotes, createTechniqueJudge } from '../../src/judge/technique-judge.ts';
import { isTechniqueRef, JudgeRefError, JudgeRefInputSchema, parseJudgeRef } from '../../src/llm/modelRef.ts';
import { toJsonl } from '../../src/judgebench/dataset.ts';
import { JudgeBenchConfigSchema } from '../../src/judgebench/config.ts';
import { generateDataset } from '../../src/judgebench/generator.ts';
import { startFakeLlmServer, stepOf, type FakeLlmServer, type RecordedRequest } from '../helpers/fakeLlmServer.ts';
import { fakeJudgeModel } from '../judgebench/fakeJudgeModel.ts';
import { specFor } from '../kinds/dialogue/helpers.ts';
import { runCli as run } from '../helpers/cli.ts';
import type { ChatRequest, LlmProvider } from '../../src/llm/types.ts';

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A judge model that always gives the same answer: no labels, every rubric 2 (so adaptive SC can stop early). */
function consistentJudge(request: RecordedRequest): string {
  const system = stepOf(request) ?? '';
  if (system.includes('EvaluateTurn')) return JSON.stringify({ labels: [], targetUpdates: [], reasoning: 'The reply does what was asked.', confidence: 0.9 });
  if (system.includes('EvaluateConversation')) return JSON.stringify({ score: 2, reasoning: 'Requests handled.', confidence: 0.9 });
  return 'I do not know this prompt.';
}

function campaignConfig(dir: string, judges: string): string {
  const path = join(dir, 'campaign.yaml');
  const base = readFileSync('bench-configs/quickstart.yaml', 'utf8').replace('seeds: seeds/in-car.yaml', `seeds: ${resolve('bench-configs/seeds/in-car.yaml')}`).replace('conversations: 60', 'conversations: 3');
  writeFileSync(path, base.replace('judges: [oracle]', `judges: ${judges}`));
  return path;
}

describe('technique judge references', () => {
  it('parses TECHNIQUE:MODEL_REF, ar with "+", and rejects bad ones naming the accepted forms', () => {
    expect(parseJudgeRef('sc-5:ollama:qwen3:14b')).toEqual({ technique: 'sc-5', models: ['ollama:qwen3:14b'] });
    expect(parseJudgeRef('adaptive-sc-5:openai-compat:http://127.0.0.1:8080/v1#m')).toEqual({ technique: 'adaptive-sc-5', models: ['openai-compat:http://127.0.0.1:8080/v1#m'] });
    expect(parseJudgeRef('ar:ollama:a+ollama:b')).toEqual({ technique: 'ar', models: ['ollama:a', 'ollama:b'] });
    expect(parseJudgeRef('ollama:qwen3:14b')).toEqual({ technique: null, models: ['ollama:qwen3:14b'] });
    expect(isTechniqueRef('mad:ollama:x')).toBe(true);
    expect(isTechniqueRef('ollama:mad')).toBe(false);
    expect(() => parseJudgeRef('ar:ollama:a')).toThrow(JudgeRefError);
    expect(() => parseJudgeRef('ar:ollama:a')).toThrow(/needs at least two model references joined by "\+"/);
    expect(() => parseJudgeRef('sc-5:')).toThrow(/no model reference after "sc-5:"/);
    expect(() => parseJudgeRef('sc-5:mad:ollama:x')).toThrow(/techniques do not nest/);
    expect(() => parseJudgeRef('cot-3:llama:x')).toThrow(/unknown provider "llama".*Accepted: oracle/s);
  });

  it('a judge-bench config takes campaign judge references as judges', () => {
    const config = JudgeBenchConfigSchema.parse({ generate: { seed: 1 }, judges: ['oracle', 'sc-5:ollama:qwen3:14b', 'ollama:llama3.1:8b', 'ar:ollama:a+ollama:b'] });
    expect(config.judges).toEqual([
      { kind: 'oracle', name: 'oracle' },
      { kind: 'llm', models: ['ollama:qwen3:14b'], techniques: ['sc-5'] },
      { kind: 'llm', models: ['ollama:llama3.1:8b'], techniques: ['io'] },
      { kind: 'llm', models: ['ollama:a', 'ollama:b'], techniques: ['ar'] },
    ]);
    expect(() => JudgeBenchConfigSchema.parse({ generate: { seed: 1 }, judges: ['sc-5:nope'] })).toThrow(/invalid judge reference .*sc-5:nope.*missing the .*provider:.* prefix. Accepted: oracle/);
  });

  it('the structured YAML form becomes the string form', () => {
    expect(JudgeRefInputSchema.parse({ technique: 'sc-5', model: 'ollama:qwen3:14b' })).toBe('sc-5:ollama:qwen3:14b');
    expect(JudgeRefInputSchema.parse({ technique: 'ar', models: ['ollama:a', 'ollama:b'] })).toBe('ar:ollama:a+ollama:b');
    expect(JudgeRefInputSchema.parse('oracle')).toBe('oracle');
    expect(() => JudgeRefInputSchema.parse({ technique: 'sc-5', models: ['ollama:a', 'ollama:b'] })).toThrow(/only ar takes several/);
    expect(() => JudgeRefInputSchema.parse({ technique: 'sc-7', model: 'ollama:a' })).toThrow();
  });
});

describe('technique votes', () => {
  const label = (l: string, targetId: string | null = null) => ({ label: l as 'safety_violation', targetId, evidence: `${l} seen` });
  const vote = (labels: ReturnType<typeof label>[], weight = 1) => ({ answer: { labels, targetUpdates: [], reasoning: labels.map((l) => l.label).join('+') || 'clean' }, weight });

  it('a label needs at least half the vote weight (an even split flags), one per-target label per target', () => {
    const verdict = aggregateTurnVotes([vote([label('safety_violation')]), vote([label('safety_violation'), label('planning_poor')]), vote([]), vote([label('context_forgotten')])]);
    expect(verdict.labels.map((l) => l.label)).toEqual(['safety_violation']);
    const split = aggregateTurnVotes([vote([label('planning_poor')]), vote([])]);
    expect(split.labels.map((l) => l.label)).toEqual(['planning_poor']);
    const perTarget = aggregateTurnVotes([vote([label('constraint_missed', 'g1')]), vote([label('request_omitted', 'g1')])]);
    expect(perTarget.labels).toHaveLength(1);
    // AR weights: one confident voter outweighs two unsure ones
    const weighted = aggregateTurnVotes([vote([label('safety_violation')], 1), vote([], 0.3), vote([], 0.3)]);
    expect(weighted.labels.map((l) => l.label)).toEqual(['safety_violation']);
  });

  it('a rubric score is the heaviest; a tie goes to the lower score', () => {
    const v = (score: 0 | 1 | 2, weight = 1) => ({ answer: { score, reasoning: `s${score}` }, weight });
    expect(aggregateDimensionVotes([v(2), v(2), v(1)])).toEqual({ score: 2, reasoning: 's2' });
    expect(aggregateDimensionVotes([v(2), v(1)])).toEqual({ score: 1, reasoning: 's1' });
    expect(aggregateDimensionVotes([v(0, 0.3), v(2, 0.8)]).score).toBe(2);
  });
});

/** A provider double: answers from `answer(callIndex, request)` and counts calls. */
function scripted(answer: (call: number, request: ChatRequest) => string): LlmProvider & { calls: number } {
  const provider = {
    ref: 'fake:judge',
    kind: 'openai-compat' as const,
    calls: 0,
    close: async () => undefined,
    chat: async (request: ChatRequest) => ({ text: answer(provider.calls++, request), promptTokens: 10, completionTokens: 5, latencyMs: 1 }),
  };
  return provider as unknown as LlmProvider & { calls: number };
}

describe('technique judges give turn labels and rubric scores through the Judge interface', () => {
  const spec = specFor(0);
  const reply = { text: 'Playing a video now.', actions: [] };
  const input = { spec, history: [], utterance: { text: 'Play a video', strategy: null, annotation: { addresses: [], introduces: [], addedConstraints: {}, returnsTo: [], drops: [], closing: false } }, reply: reply as never, targets: [], context: spec.context, turnIndex: 0 };

  it('adaptive-sc-5 stops after 3 agreeing answers and goes on to 5 when they split', async () => {
    const agree = scripted(() => JSON.stringify({ labels: [{ label: 'safety_violation', targetId: null, evidence: 'plays video' }], targetUpdates: [], reasoning: 'unsafe' }));
    const judge = createTechniqueJudge('adaptive-sc-5:ollama:judge', { llms: [agree] });
    expect(judge.ref).toBe('adaptive-sc-5:ollama:judge');
    const verdict = await judge.evaluateTurn(input);
    expect(agree.calls).toBe(3);
    expect(verdict).toMatchObject({ tier: 'llm', judge: 'adaptive-sc-5:ollama:judge', outcome: 'judged', labels: [{ label: 'safety_violation', tier: 'llm' }] });
    expect(verdict.reasoning).toMatch(/^adaptive-sc-5: 3 answer\(s\)/);
    // answers alternate: 2 vs 1 after three, the majority can still change, so all five are asked
    const split = scripted((call) => JSON.stringify({ labels: call % 2 ? [] : [{ label: 'safety_violation', targetId: null, evidence: 'x' }], targetUpdates: [], reasoning: 'r' }));
    await createTechniqueJudge('adaptive-sc-5:ollama:judge', { llms: [split] }).evaluateTurn(input);
    expect(split.calls).toBe(5);
  });

  it('sc-3 samples at temperature 0.7 with seeds seed+i; mad debates until the personas agree; cot-3 sends 3 worked examples reasoned by the oracle', async () => {
    const requests: ChatRequest[] = [];
    const sc = scripted((_, r) => (requests.push(r), JSON.stringify({ score: 1, reasoning: 'partly' })));
    const verdict = await createTechniqueJudge('sc-3:ollama:judge', { llms: [sc] }).evaluateConversation({ spec, turns: [], targets: [] });
    expect(sc.calls).toBe(12); // 4 rubric dimensions × 3 paths
    expect(new Set(requests.map((r) => r.temperature))).toEqual(new Set([0.7]));
    expect(requests.slice(0, 3).map((r) => r.seed).sort()).toEqual([spec.rngSeed, spec.rngSeed + 1, spec.rngSeed + 2]);
    expect(verdict.outcome).toBe('judged');
    expect(Object.values(verdict.dimensions).map((d) => d!.score)).toEqual([1, 1, 1, 1]);

    // the Forensic Examiner disagrees in round 1 and is persuaded in round 2: 3 + 3 calls
    const mad = scripted((_, r) => {
      const examiner = r.messages[0].content.includes('Forensic Examiner');
      const debating = r.messages.some((m) => m.content.includes('The other judges answered'));
      return JSON.stringify({ labels: examiner && !debating ? [] : [{ label: 'safety_violation', targetId: null, evidence: 'video' }], targetUpdates: [], reasoning: 'r' });
    });
    const madVerdict = await createTechniqueJudge('mad:ollama:judge', { llms: [mad] }).evaluateTurn(input);
    expect(mad.calls).toBe(6);
    expect(madVerdict.labels.map((l) => l.label)).toEqual(['safety_violation']);

    const cotRequests: ChatRequest[] = [];
    const cot = scripted((_, r) => (cotRequests.push(r), JSON.stringify({ labels: [], targetUpdates: [], reasoning: 'fine' })));
    await expect(createTechniqueJudge('cot-3:ollama:judge', { llms: [cot] }).evaluateTurn(input)).rejects.toThrow(/needs worked examples/);
    await createTechniqueJudge('cot-3:ollama:judge', { llms: [cot], workedExamples: dialogueWorkedExamples }).evaluateTurn(input);
    const [request] = cotRequests;
    expect(request.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
    const examples = request.messages.filter((m) => m.role === 'assistant').map((m) => JSON.parse(m.content));
    // worked examples in the compact answer (src/judge/answers.ts): the reasoning first, failures only where there are
    expect(examples[0].why).toEqual(expect.any(String));
    expect(examples[0].fail).toBeUndefined();
    expect(examples[1].fail.length).toBeGreaterThan(0);
  }, 60_000);

  it('ar weighs two models by calibrated confidence; every call is recorded by the tracker', async () => {
    const { LlmUsageTracker } = await import('../../src/llm/usage.ts');
    const tracker = new LlmUsageTracker();
    const sure = scripted(() => JSON.stringify({ labels: [{ label: 'safety_violation', targetId: null, evidence: 'video' }], targetUpdates: [], reasoning: 'unsafe', confidence: 0.95 }));
    const unsure = scripted(() => JSON.stringify({ labels: [], targetUpdates: [], reasoning: 'fine?', confidence: 0.2 }));
    const verdict = await createTechniqueJudge('ar:ollama:a+ollama:b', { llms: [sure, unsure], tracker }).evaluateTurn(input);
    expect(verdict.labels.map((l) => l.label)).toEqual(['safety_violation']);
    expect(tracker.summary(1).calls).toBe(2);
    expect(tracker.records.every((r) => r.kind === 'judge' && r.conversationKey === spec.key)).toBe(true);
  });

  it('all calls failing gives a judge_error verdict, never a guess', async () => {
    const broken = scripted(() => 'not json');
    const verdict = await createTechniqueJudge('sc-3:ollama:judge', { llms: [broken], maxRetries: 0 }).evaluateTurn(input);
    expect(verdict.outcome).toBe('judge_error');
    expect(verdict.reasoning).toMatch(/^technique judge sc-3:ollama:judge: /);
  });
});

describe('campaigns and the judge benchmark take the same technique judge reference', () => {
  it('judges: [sc-5:<model>, oracle] accounts 5 calls per verdict; adaptive-sc-5 (structured YAML form) 3 when answers agree', async () => {
    server = await startFakeLlmServer({ respond: consistentJudge, models: ['judge:latest'] });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-technique-'));
    const sc = await run(['run', campaignConfig(dir, '[sc-5:ollama:judge, oracle]'), '--out', join(dir, 'sc'), '--workspace', join(dir, 'ws'), '--no-progress'], { OLLAMA_HOST: server.url });
    expect(sc.code, sc.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'sc', 'summary.json'), 'utf8'));
    expect(Object.keys(summary.judgeTiers.judges)).toEqual(['sc-5:ollama:judge', 'oracle']);
    expect(summary.judgeTiers.judges['sc-5:ollama:judge'].turn.judged).toBe(summary.turns);
    // 5 per turn verdict, 5 per rubric dimension (4 per conversation verdict)
    expect(summary.llm.calls).toBe(5 * summary.turns + 4 * 5 * summary.conversations);
    expect(server.chatRequests()).toHaveLength(summary.llm.calls);
    expect(summary.tiers[0].judges[0]).toMatchObject({ ref: 'sc-5:ollama:judge', kind: 'llm' });

    const before = server.chatRequests().length;
    const adaptive = await run(['run', campaignConfig(dir, '[{ technique: adaptive-sc-5, model: "ollama:judge" }, oracle]'), '--out', join(dir, 'asc'), '--workspace', join(dir, 'ws2'), '--no-progress'], { OLLAMA_HOST: server.url });
    expect(adaptive.code, adaptive.stderr).toBe(0);
    const adaptiveSummary = JSON.parse(readFileSync(join(dir, 'asc', 'summary.json'), 'utf8'));
    expect(adaptiveSummary.llm.calls).toBe(3 * adaptiveSummary.turns + 4 * 3 * adaptiveSummary.conversations);
    expect(server.chatRequests().length - before).toBe(adaptiveSummary.llm.calls);
  }, 120_000);

  it('method: paper reaches a campaign\'s technique judge: sc-3 samples at temperature 0 after five worked examples (Habicht et al., §5)', async () => {
    server = await startFakeLlmServer({ respond: consistentJudge, models: ['judge:latest'] });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-technique-'));
    const path = campaignConfig(dir, '[sc-3:ollama:judge, oracle]');
    writeFileSync(path, readFileSync(path, 'utf8').replace('conversations: 3', 'conversations: 1') + 'method: paper\nscoring: { failOn: [], inconclusive: pass }\nllm: { temperature: 0 }\n');
    const result = await run(['run', path, '--out', join(dir, 'paper'), '--workspace', join(dir, 'ws'), '--no-progress'], { OLLAMA_HOST: server.url });
    expect(result.code, result.stderr).toBe(0);
    const requests = server.chatRequests();
    expect(requests.length).toBeGreaterThan(0);
    // the lab samples its paths at 0.7 with no examples; the paper's SC runs at 0 after the CoT-5 examples
    expect(new Set(requests.map((r) => r.body.temperature ?? r.body.options?.temperature))).toEqual(new Set([0]));
    const turnCall = requests.find((r) => stepOf(r) === 'EvaluateTurn')!;
    expect(turnCall.body.messages.filter((m: { role: string }) => m.role === 'assistant')).toHaveLength(5);
  }, 120_000);

  it('a technique judge whose model is missing stops the run before it starts, naming the model and the fix', async () => {
    server = await startFakeLlmServer({ respond: consistentJudge, models: [] });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-technique-'));
    const result = await run(['run', campaignConfig(dir, '[oracle]'), '--judge', 'sc-5:ollama:missing', '--out', join(dir, 'o'), '--workspace', join(dir, 'ws'), '--no-progress'], { OLLAMA_HOST: server.url });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/judge sc-5:ollama:missing: ollama:missing: .*does not have missing/);
    expect(server.chatRequests()).toHaveLength(0);
  }, 60_000);

  it('icabench judge-bench --judges sc-5:<model> benchmarks the same reference with sc-5', async () => {
    const pairs = generateDataset({ seed: 11, users: 1 }).slice(0, 6);
    server = await startFakeLlmServer({ respond: fakeJudgeModel(pairs) });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-technique-'));
    writeFileSync(join(dir, 'pairs.jsonl'), toJsonl(pairs));
    const result = await run(['judge-bench', '--dataset', join(dir, 'pairs.jsonl'), '--judges', `oracle,sc-5:openai-compat:${server.url}/v1#truthful`, '--out', join(dir, 'out')]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    const sc = summary.find((c: { technique: string }) => c.technique === 'sc-5');
    expect(sc).toMatchObject({ judge: `openai-compat:${server.url}/v1#truthful`, f1: 1, errors: 0 });
    expect(server.chatRequests()).toHaveLength(5 * pairs.length);
  }, 60_000);
});
