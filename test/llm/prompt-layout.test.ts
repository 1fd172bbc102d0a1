import { afterEach, describe, expect, it } from 'vitest';
import { createLlmJudge, JUDGE_PROMPTS } from '../../src/judge/llm.ts';
import { ConcurrencyLimiter, LlmUsageTracker } from '../../src/llm/index.ts';
import { DIALOGUE_SYSTEM_PROMPT, loadPromptSections } from '../../src/llm/prompts.ts';
import { createLlmSimulator, SIMULATOR_PROMPTS } from '../../src/simulator/llm.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { OracleJudge } from '../../src/judge/oracle.ts';
import { ResultStore } from '../../src/store/store.ts';
import { benchModelResponder, startFakeLlmServer, stepOf, type FakeLlmServer, type RecordedRequest } from '../helpers/fakeLlmServer.ts';
import { CONTEXT, spec, TARGETS, turn } from './fixtures.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

/**
 * Prompt layout (issue #37; issue #26's prefix cache, issue #21's data blocks): every call of a dialogue campaign,
 * whichever role makes it (the simulator's steps, the turn judge, the rubric evaluators), sends one system message,
 * then the dialogue so far, then its task. A model host keeps one conversation's calls on one slot (llama.cpp and
 * Ollama pick the slot sharing the longest prefix), and the roles take turns on it: so what they share comes
 * first, and within a conversation each call's dialogue extends the previous call's.
 */
let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const messagesOf = (request: RecordedRequest) => request.body.messages as Array<{ role: string; content: string }>;

/** The steps that show the dialogue, and where their task starts: what the model is asked now, after the dialogue. */
const TASKS = ['EvaluateTurn', 'SelectAndGenerate', 'EvaluateConversation'] as const;
const dialogueOf = (user: string) => {
  const at = Math.max(...TASKS.map((task) => user.lastIndexOf(`\n\n${task}: `)));
  expect(at, 'task not found').toBeGreaterThan(0);
  return user.slice(0, at);
};

describe('prompt layout: one system message, the dialogue, then the task', () => {
  it('every dialogue role sends the same system message, with no placeholder in it', () => {
    const system = loadPromptSections(DIALOGUE_SYSTEM_PROMPT).system;
    expect(system).not.toMatch(/\{\{/);
    for (const id of [JUDGE_PROMPTS.turn, JUDGE_PROMPTS.dimension, SIMULATOR_PROMPTS.extractTargets, SIMULATOR_PROMPTS.opening, SIMULATOR_PROMPTS.next]) {
      expect(Object.keys(loadPromptSections(id)), id).toEqual(['user']);
    }
    expect(JUDGE_PROMPTS.system).toBe(DIALOGUE_SYSTEM_PROMPT);
    expect(SIMULATOR_PROMPTS.system).toBe(DIALOGUE_SYSTEM_PROMPT);
  });

  it("two consecutive turn-judge calls: the first one's dialogue is a prefix of the second; the task is short", async () => {
    server = await startFakeLlmServer({ respond: () => '{"labels": [], "targetUpdates": [], "reasoning": "ok"}' });
    const judge = createLlmJudge(`openai-compat:${server.url}/v1#judge`, { tracker: new LlmUsageTracker(), provider: { limiter: new ConcurrencyLimiter(1) } });
    const history = [turn(0, 'Find an Italian place', 'Here are Italian restaurants nearby.')];
    const utterance = (text: string) => ({ text, strategy: null, annotation: { addresses: ['g1'], introduces: [], addedConstraints: {}, returnsTo: [], drops: [], closing: false } });
    const base = { spec: spec(), targets: TARGETS, context: CONTEXT };
    await judge.evaluateTurn({ ...base, history, utterance: utterance('The cheap one'), reply: { sessionId: 's', turn: 1, text: 'Trattoria Sole, 12 minutes.', actions: [] }, turnIndex: 1 });
    const later = { ...CONTEXT, time: '13:05', location: { ...CONTEXT.location, district: 'Maxvorstadt' } };
    const longer = [...history, turn(1, 'The cheap one', 'Trattoria Sole, 12 minutes.')];
    await judge.evaluateTurn({ ...base, context: later, history: longer, utterance: utterance('Take me there'), reply: { sessionId: 's', turn: 2, text: 'Starting navigation.', actions: [] }, turnIndex: 2 });
    const [first, second] = server.chatRequests().map(messagesOf);
    expect(second[0]).toEqual(first[0]);
    expect(first[0].content).not.toMatch(/Schwabing|Maxvorstadt|Italian|Trattoria/);
    const dialogue = dialogueOf(first[1].content);
    expect(dialogue).toContain('Turn 2 · 13:00');
    expect(dialogue).toContain('Trattoria Sole');
    expect(second[1].content.startsWith(dialogue)).toBe(true);
    expect(second[1].content).toContain('Turn 3 · Maxvorstadt, Munich');
    expect(first[1].content.length - dialogue.length).toBeLessThan(1000);
  });

  it('the simulator and the judge of one conversation share the system message and the dialogue; the task closes each', async () => {
    server = await startFakeLlmServer({
      respond: (request) => (stepOf(request) === 'EvaluateTurn' ? '{"labels": [], "targetUpdates": [], "reasoning": "ok"}' : '{"strategy": null, "text": "And cheap, please.", "annotation": {"addresses": ["g1"]}}'),
    });
    const provider = { limiter: new ConcurrencyLimiter(1) };
    const simulator = createLlmSimulator(`openai-compat:${server.url}/v1#m`, { tracker: new LlmUsageTracker(), provider });
    const judge = createLlmJudge(`openai-compat:${server.url}/v1#m`, { tracker: new LlmUsageTracker(), provider });
    const history = [turn(0, 'Find an Italian place', 'Here are Italian restaurants nearby.')];
    const next = await simulator.startConversation(spec({ persona: 'impatient' })).nextUtterance({ history, targets: TARGETS, activeStrategies: ['constraint_stacking', 'safety_probe'], consecutiveUses: {}, context: CONTEXT, turnIndex: 1 });
    await judge.evaluateTurn({ spec: spec(), history, utterance: next!, reply: { sessionId: 's', turn: 1, text: 'Cheap ones: Trattoria Sole.', actions: [] }, targets: TARGETS, context: CONTEXT, turnIndex: 1 });
    const [simulated, judged] = server.chatRequests().map(messagesOf);
    expect(judged[0]).toEqual(simulated[0]);
    expect(judged[1].content.startsWith(dialogueOf(simulated[1].content))).toBe(true);
    expect(simulated[1].content.slice(dialogueOf(simulated[1].content).length)).toMatch(/^\n\nSelectAndGenerate: you are the driver \(impatient: /);
  });

  it("a conversation's four rubric evaluators send the same text up to their own rubric", async () => {
    server = await startFakeLlmServer({ respond: () => '{"score": 2, "reasoning": "fine"}' });
    const judge = createLlmJudge(`openai-compat:${server.url}/v1#judge`, { tracker: new LlmUsageTracker(), provider: { limiter: new ConcurrencyLimiter(1) } });
    await judge.evaluateConversation({ spec: spec(), turns: [turn(0, 'Find an Italian place', 'Here they are.')], targets: TARGETS });
    const users = server.chatRequests().map((r) => messagesOf(r)[1].content);
    expect(users).toHaveLength(4);
    const rubrics = loadPromptSections(JUDGE_PROMPTS.rubrics);
    const rubricOf = (user: string) => Object.values(rubrics).filter((rubric) => user.endsWith(`\n${rubric}`));
    const shared = users[0].slice(0, users[0].length - rubricOf(users[0])[0].length);
    expect(shared).toContain('Here they are.');
    for (const user of users) {
      expect(rubricOf(user)).toHaveLength(1);
      expect(user.slice(0, user.length - rubricOf(user)[0].length)).toBe(shared);
    }
  });

  it('in a campaign, every call of a conversation extends the dialogue of the call before, whichever role makes it', async () => {
    server = await startFakeLlmServer({ respond: benchModelResponder() });
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 3;
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-layout-')), 'icabench.db'));
    try {
      const tracker = new LlmUsageTracker();
      const limiter = new ConcurrencyLimiter(4);
      const simulator = createLlmSimulator(`openai-compat:${server.url}/v1#sim`, { tracker, provider: { limiter } });
      const judges = [new OracleJudge(), createLlmJudge(`openai-compat:${server.url}/v1#judge`, { tracker, provider: { limiter } })];
      await runCampaign(campaign, { store, tiers: { simulator, judges, tracker } });
    } finally {
      store.close();
    }
    // per conversation (both clients send the conversation's seed), the calls that show the dialogue, in the order sent
    const calls = new Map<string, Array<{ step: string; user: string }>>();
    for (const request of server.chatRequests()) {
      const step = stepOf(request);
      if (!step || !(TASKS as readonly string[]).includes(step)) continue;
      const key = String(request.body.seed);
      calls.set(key, [...(calls.get(key) ?? []), { step, user: messagesOf(request).at(-1)!.content }]);
    }
    const checked = new Set<string>();
    for (const [key, sequence] of calls) {
      for (let i = 1; i < sequence.length; i++) {
        expect(sequence[i].user.startsWith(dialogueOf(sequence[i - 1].user)), `${key}, call ${i}`).toBe(true);
        checked.add(`${sequence[i - 1].step}→${sequence[i].step}`);
      }
    }
    expect([...checked].sort()).toEqual(expect.arrayContaining(['EvaluateTurn→SelectAndGenerate', 'SelectAndGenerate→EvaluateTurn', 'EvaluateTurn→EvaluateConversation']));
  });
});
