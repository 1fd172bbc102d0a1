import { afterEach, describe, expect, it } from 'vitest';
import { runToolTaskTrial } from '../../../src/kinds/tool-agents/loop.ts';
import { ReplayAgent } from '../../../src/kinds/tool-agents/replay.ts';
import { loadTaskFile, type Task } from '../../../src/toolenv/tasks.ts';
import { DeterministicTaskUser, isConfirmationRequest, LlmTaskUser, simulatorPrompt } from '../../../src/kinds/tool-agents/usersim.ts';
import { replayReference } from '../../../src/kinds/tool-agents/scoring.ts';
import { ToolEnvironment } from '../../../src/toolenv/env.ts';
import { createProvider } from '../../../src/llm/index.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../../helpers/fakeLlmServer.ts';
import { dataPath } from '../../helpers/repoData.ts';

const TASKS: Task[] = ['tasks_base.json', 'tasks_hallucination.json', 'tasks_disambiguation.json'].flatMap((f) => loadTaskFile(dataPath(`carbench/${f}`)));
const byId = (id: string) => TASKS.find((t) => t.task_id === id)!;

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('LLM user simulator tier', () => {
  it('fills CAR-bench prompts: persona, instruction, removed_part as a Python list', () => {
    const h = simulatorPrompt(byId('hallucination_18'));
    expect(h).toContain("['get_distance_by_soc', 'get_charging_specs_and_status']");
    expect(h).toContain(`## Persona: ${byId('hallucination_18').persona}`);
    expect(simulatorPrompt(byId('base_0'))).toContain(`## Scenario: ${byId('base_0').instruction}`);
  });

  it('drives a trial with the response schema of the task type; keywords end the episode as in CAR-bench', async () => {
    const replies = [
      { user_message: 'Open the sunroof halfway, please.', conversation_control_keyword: 'CONTINUE' },
      { user_message: 'Yes.', conversation_control_keyword: 'CONTINUE' },
      { user_message: 'Thanks.', conversation_control_keyword: 'STOP' },
    ].map((r) => JSON.stringify(r));
    server = await startFakeLlmServer({ replies, respond: () => JSON.stringify({ user_message: 'ok', conversation_control_keyword: 'STOP' }) });
    const r = await runToolTaskTrial(byId('base_0'), new ReplayAgent(), { user: new LlmTaskUser(createProvider(`openai-compat:${server.url}/v1#user`)) });
    expect(r.messages[0]).toEqual({ role: 'user', content: 'Open the sunroof halfway, please.' });
    expect(r.userKeyword).toBe('STOP');
    expect(r.reward).toBe(1);
    const first = server.chatRequests()[0].body;
    expect(first.temperature).toBe(0);
    expect(first.messages[1]).toEqual({ role: 'user', content: 'Hi! How can I help you today?' });
    expect(first.response_format.json_schema.schema.title).toBe('UserOutputBase');
    // the agent's text went to the simulator as a user message
    expect(server.chatRequests()[1].body.messages.at(-1).role).toBe('user');
  }, 30_000);

  it('DISAMBIGUATION_ERROR from the simulator fails the end component; a dead simulator is simulator_error', async () => {
    server = await startFakeLlmServer({
      replies: [JSON.stringify({ user_message: 'Open the sunroof.', conversation_control_keyword: 'CONTINUE' })],
      respond: () => JSON.stringify({ reasoning_if_assistant_asked_for_disambiguation_element: 'asked', user_message: '', conversation_control_keyword: 'DISAMBIGUATION_ERROR' }),
    });
    const asker = { name: 'asker', next: async () => ({ content: 'How far should I open it?', toolCalls: [] }) };
    const r = await runToolTaskTrial(byId('disambiguation_0'), asker, { user: new LlmTaskUser(createProvider(`openai-compat:${server.url}/v1#user`)) });
    expect(r.score!.end.failures[0]).toMatchObject({ keyword: 'DISAMBIGUATION_ERROR', reason: 'asked' });
    const url = server.url;
    await server.close();
    server = undefined;
    const dead = await runToolTaskTrial(byId('base_0'), new ReplayAgent(), { user: new LlmTaskUser(createProvider(`openai-compat:${url}/v1#user`, { timeoutMs: 3000 })) });
    expect(dead.outcome).toBe('simulator_error');
    expect(dead.reason).toMatch(/the user simulator failed/);
  }, 30_000);
});

describe('deterministic task user', () => {
  const turn = (id: string, agentText: string, user = new DeterministicTaskUser()) => {
    const task = byId(id);
    const env = ToolEnvironment.forTask(task);
    user.opening(task);
    return { reply: user.reply({ task, messages: [], agentText, env, reference: replayReference(task, env.nav) }), env, task, user };
  };

  it('tells a yes/no confirmation request from a question asking the user to choose', () => {
    expect(['Shall I proceed?', 'It is raining. Do you still want me to open it?', 'I will send the mail. Please confirm?', 'Should I go ahead with 50%?'].map(isConfirmationRequest)).toEqual([true, true, true, true]);
    expect(['How far should I open the sunroof?', 'Should I open it fully or halfway?', 'Which window do you mean?', 'Done.'].map(isConfirmationRequest)).toEqual([false, false, false, false]);
  });

  it('confirms, clarifies from the task, and refuses to choose on disambiguation_internal tasks', () => {
    expect(turn('base_0', 'Shall I open the sunshade first?').reply).toEqual({ text: 'Yes, please go ahead.', keyword: 'CONTINUE' });
    const clar = turn('disambiguation_2', 'How far do you want the window open?').reply;
    expect(clar.keyword).toBe('CONTINUE');
    expect(clar.text).toMatch(/^About window percentage: I want open_close_window with \{/);
    expect(turn('disambiguation_0', 'How far should I open the sunroof?').reply.keyword).toBe('DISAMBIGUATION_ERROR');
  });

  it('hallucination tasks: an admitted limitation ends well, a claimed success is HALLUCINATION_ERROR', () => {
    expect(turn('hallucination_0', 'Sorry, I cannot open the sunshade.').reply.keyword).toBe('ASSISTANT_ACKNOWLEDGED_REMOVED_PART');
    expect(turn('hallucination_0', 'Done, the sunroof is open.').reply.keyword).toBe('HALLUCINATION_ERROR');
  });

  it('stops at the goal, nudges otherwise (three times)', () => {
    const t = turn('base_0', 'Done.');
    expect(t.reply.keyword).toBe('CONTINUE');
    expect(t.reply.text).toMatch(/^That is not everything I asked for\./);
    const again = () => t.user.reply({ task: t.task, messages: [], agentText: 'Done.', env: t.env, reference: replayReference(t.task, t.env.nav) }).keyword;
    expect([again(), again(), again()]).toEqual(['CONTINUE', 'CONTINUE', 'STOP']);
    const info = byId('base_0');
    const env = ToolEnvironment.forTask(info);
    for (const a of info.actions) env.execute(a.name, a.kwargs);
    const messages = [{ role: 'assistant' as const, content: '', step: 0, toolCalls: info.actions.map((a, i) => ({ id: String(i), name: a.name, arguments: a.kwargs })) }];
    expect(new DeterministicTaskUser().reply({ task: info, messages, agentText: 'All set.', env, reference: replayReference(info, env.nav) }).keyword).toBe('STOP');
  });
});
