import { afterEach, describe, expect, it } from 'vitest';
import { createLlmJudge, JUDGE_PROMPTS } from '../../src/judge/llm.ts';
import { ConcurrencyLimiter, LlmUsageTracker } from '../../src/llm/index.ts';
import { loadPromptSections } from '../../src/llm/prompts.ts';
import { createLlmSimulator, SIMULATOR_PROMPTS } from '../../src/simulator/llm.ts';
import { startFakeLlmServer, type FakeLlmServer, type RecordedRequest } from '../helpers/fakeLlmServer.ts';
import { CONTEXT, spec, TARGETS, turn } from './fixtures.ts';

/**
 * Prompt layout (issue #26's prefix cache, issue #21's data blocks): the stable part of a role's prompt
 * (instructions, rubric, taxonomy, strategy catalogue) comes first and is byte-identical in every call of
 * that role in a campaign; what changes per conversation or turn comes last, in the user message.
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

describe('prompt layout: stable prefix first, per-call part last', () => {
  it('no judge or simulator prompt puts a per-call placeholder in its system part', () => {
    // the only placeholders allowed there are fixed for a role within a campaign
    const stable = new Set(['dimensionTitle', 'rubric', 'strategyCatalog']);
    for (const id of [JUDGE_PROMPTS.turn, JUDGE_PROMPTS.dimension, SIMULATOR_PROMPTS.extractTargets, SIMULATOR_PROMPTS.opening, SIMULATOR_PROMPTS.next]) {
      const placeholders = [...loadPromptSections(id).system.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]);
      expect(placeholders.filter((p) => !stable.has(p)), id).toEqual([]);
    }
  });

  it('two consecutive turn-judge calls share the whole system message and the conversation so far', async () => {
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
    // the user message opens with the dialogue, which only grows: the earlier call's history is a prefix of the later one's
    const firstHistory = first[1].content.slice(0, first[1].content.indexOf('\n\nContext now:'));
    expect(second[1].content.startsWith(firstHistory)).toBe(true);
    expect(sharedPrefix(JSON.stringify(first), JSON.stringify(second))).toBeGreaterThan(JSON.stringify(first[0]).length + firstHistory.length);
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

  it('the same rubric evaluator in two conversations sends the same system message', async () => {
    server = await startFakeLlmServer({ respond: () => '{"score": 2, "reasoning": "fine"}' });
    const judge = createLlmJudge(`openai-compat:${server.url}/v1#judge`, { tracker: new LlmUsageTracker(), provider: { limiter: new ConcurrencyLimiter(1) } });
    await judge.evaluateConversation({ spec: spec(), turns: [turn(0, 'Find an Italian place', 'Here they are.')], targets: TARGETS });
    await judge.evaluateConversation({ spec: spec({ key: 'other', persona: 'polite' }), turns: [turn(0, 'Play some jazz', 'Playing jazz.')], targets: TARGETS });
    const bySchema = (name: string) => server!.chatRequests().filter((r) => r.body.response_format?.json_schema?.name === name).map(messagesOf);
    for (const dimension of ['instruction', 'context', 'plan', 'safety']) {
      const [a, b] = bySchema(`dimension_${dimension}`);
      expect(b[0], dimension).toEqual(a[0]);
      expect(a[1].content).not.toEqual(b[1].content);
    }
  });
});
