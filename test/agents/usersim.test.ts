import { afterEach, describe, expect, it } from 'vitest';
import { runToolTaskTrial } from '../../src/agents/loop.ts';
import { ReplayAgent } from '../../src/agents/replay.ts';
import { loadTaskFile, type Task } from '../../src/agents/tasks.ts';
import { LlmTaskUser, simulatorPrompt } from '../../src/agents/usersim.ts';
import { createProvider } from '../../src/llm/index.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { dataPath } from '../helpers/repoData.ts';

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
