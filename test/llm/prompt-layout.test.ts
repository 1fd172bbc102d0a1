import { afterEach, describe, expect, it } from 'vitest';
import { createLlmJudge, JUDGE_PROMPTS } from '../../src/judge/llm.ts';
import { ConcurrencyLimiter, LlmUsageTracker } from '../../src/llm/index.ts';
import { loadPromptSections } from '../../src/llm/prompts.ts';
import { createLlmSimulator, SIMULATOR_PROMPTS } from '../../src/simulator/llm.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { OracleJudge } from '../../src/judge/oracle.ts';
import { ResultStore } from '../../src/store/store.ts';
import { benchModelResponder, startFakeLlmServer, systemPromptOf, type FakeLlmServer, type RecordedRequest } from '../helpers/fakeLlmServer.ts';
import { CONTEXT, spec, TARGETS, turn } from './fixtures.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

/**
 * Prompt layout (issue #26's prefix cache, issue #21's data blocks): the stable part of a role's prompt
 * (instructions, taxonomy, strategy catalogue) comes first and is byte-identical in every call of that role in
 * a campaign; what changes per conversation or turn comes last, in the user message. Within a conversation the
 * user message is append-only: the previous call of a role, without its closing request (the state now and the
 * ask), is a prefix of the next call, which is what a per-slot KV cache keeps.
 */
let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const messagesOf = (request: RecordedRequest) => request.body.messages as Array<{ role: string; content: string }>;
/** The number of leading characters two strings share. */
const sharedPrefix = (a: string, b: string) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

/** Where each role's closing request starts: what the model is asked now, after the append-only dialogue. */
const CLOSING_REQUEST = { EvaluateTurn: '\n\nTargets before turn ', SelectAndGenerate: '\n\nContext now: ', EvaluateConversation: '\n\nDimension: ' } as const;
const withoutClosingRequest = (task: keyof typeof CLOSING_REQUEST, user: string) => {
  const at = user.lastIndexOf(CLOSING_REQUEST[task]);
  expect(at, `${task}: closing request not found`).toBeGreaterThan(0);
  return user.slice(0, at);
};

describe('prompt layout: stable prefix first, per-call part last', () => {
  it('no judge or simulator prompt puts a per-call placeholder in its system part', () => {
    // the only placeholders allowed there are fixed for a role within a campaign
    const stable = new Set(['strategyCatalog']);
    for (const id of [JUDGE_PROMPTS.turn, JUDGE_PROMPTS.dimension, SIMULATOR_PROMPTS.extractTargets, SIMULATOR_PROMPTS.opening, SIMULATOR_PROMPTS.next]) {
      const placeholders = [...loadPromptSections(id).system.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]);
      expect(placeholders.filter((p) => !stable.has(p)), id).toEqual([]);
    }
  });

  it('two consecutive turn-judge calls of a conversation: the first, without its closing request, is a prefix of the second', async () => {
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
    expect(first[0].role).toBe('system');
    expect(first[0].content).not.toMatch(/Schwabing|Maxvorstadt|Italian|Trattoria/);
    // the judged turn's block is the text it has as history in the next call: only the closing request differs
    const dialogue = withoutClosingRequest('EvaluateTurn', first[1].content);
    expect(dialogue).toContain('Turn 1 — Schwabing');
    expect(dialogue).toContain('Trattoria Sole');
    expect(second[1].content.startsWith(dialogue)).toBe(true);
    expect(first[1].content.length - dialogue.length).toBeLessThan(600);
  });

  it('two SelectAndGenerate calls of different conversations, personas and available strategies share the whole system message', async () => {
    server = await startFakeLlmServer({ respond: () => '{"strategy": null, "text": "And cheap, please.", "annotation": {"addresses": ["g1"]}}' });
    const simulator = createLlmSimulator(`openai-compat:${server.url}/v1#sim`, { tracker: new LlmUsageTracker(), provider: { limiter: new ConcurrencyLimiter(1) } });
    const history = [turn(0, 'Find an Italian place', 'Here are Italian restaurants nearby.')];
    const input = (strategies: readonly string[], consecutive: Record<string, number>) => ({
      history,
      targets: TARGETS,
      activeStrategies: strategies as never,
      consecutiveUses: consecutive,
      context: CONTEXT,
      turnIndex: 1,
    });
    await simulator.startConversation(spec({ persona: 'impatient' })).nextUtterance(input(['constraint_stacking', 'safety_probe'], {}));
    await simulator.startConversation(spec({ key: 'other', persona: 'elderly' })).nextUtterance(input(['context_confusion'], {}));
    const [first, second] = server.chatRequests().map(messagesOf);
    expect(second[0]).toEqual(first[0]);
    expect(first[0].content).toContain('- planning_challenge: Planning Challenge');
    expect(first[0].content).not.toMatch(/impatient|elderly/);
    expect(first[1].content).toMatch(/^Persona — impatient: /);
    expect(first[1].content).toMatch(/Available strategies now: constraint_stacking, safety_probe\n\nWrite the driver's next utterance\.$/);
    expect(second[1].content).toMatch(/Available strategies now: context_confusion\n/);
  });

  it('the rubric evaluators send one system message in every conversation; a conversation\'s four calls differ only in the closing dimension and rubric', async () => {
    server = await startFakeLlmServer({ respond: () => '{"score": 2, "reasoning": "fine"}' });
    const judge = createLlmJudge(`openai-compat:${server.url}/v1#judge`, { tracker: new LlmUsageTracker(), provider: { limiter: new ConcurrencyLimiter(1) } });
    await judge.evaluateConversation({ spec: spec(), turns: [turn(0, 'Find an Italian place', 'Here they are.')], targets: TARGETS });
    await judge.evaluateConversation({ spec: spec({ key: 'other', persona: 'polite' }), turns: [turn(0, 'Play some jazz', 'Playing jazz.')], targets: TARGETS });
    const bySchema = (name: string) => server!.chatRequests().filter((r) => r.body.response_format?.json_schema?.name === name).map(messagesOf);
    const [instruction, context, plan, safety] = ['instruction', 'context', 'plan', 'safety'].map((dimension) => bySchema(`dimension_${dimension}`));
    for (const [a, b] of [instruction, context, plan, safety]) {
      expect(b[0]).toEqual(instruction[0][0]);
      expect(a[1].content).not.toEqual(b[1].content);
    }
    // the first conversation's four requests: the same conversation, then each its own dimension
    const conversation = withoutClosingRequest('EvaluateConversation', instruction[0][1].content);
    for (const [a] of [context, plan, safety]) expect(a[1].content.startsWith(conversation)).toBe(true);
    expect(safety[0][1].content.slice(conversation.length)).toMatch(/^\n\nDimension: Safety Compliance\nRubric:\n/);
  });

  it('in a campaign, every call of a role in a conversation extends the previous one: append-only but for its closing request', async () => {
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
    // per role and conversation (both clients send the conversation's seed), the calls in the order sent
    const calls = new Map<string, string[]>();
    for (const request of server.chatRequests()) {
      const task = (Object.keys(CLOSING_REQUEST) as (keyof typeof CLOSING_REQUEST)[]).find((t) => systemPromptOf(request).includes(t));
      if (!task) continue;
      const key = `${task}|${request.body.seed}`;
      calls.set(key, [...(calls.get(key) ?? []), messagesOf(request).at(-1)!.content]);
    }
    const checked = new Set<string>();
    for (const [key, users] of calls) {
      const task = key.split('|')[0] as keyof typeof CLOSING_REQUEST;
      for (let i = 1; i < users.length; i++) {
        expect(users[i].startsWith(withoutClosingRequest(task, users[i - 1])), `${key}, call ${i}`).toBe(true);
        checked.add(task);
      }
    }
    expect([...checked].sort()).toEqual(['EvaluateConversation', 'EvaluateTurn', 'SelectAndGenerate']);
  });
});
