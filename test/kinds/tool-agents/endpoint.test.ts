import { afterEach, describe, expect, it } from 'vitest';
import { ToolAgentsConfigSchema } from '../../../src/kinds/tool-agents/config.ts';
import { createEndpointAgent } from '../../../src/kinds/tool-agents/endpoint.ts';
import { confirmationRuleJudge } from '../../../src/kinds/tool-agents/judge.ts';
import { runToolTaskTrial } from '../../../src/kinds/tool-agents/loop.ts';
import { planReplay, DONE_TEXT } from '../../../src/kinds/tool-agents/replay.ts';
import { loadTaskFile, type Task } from '../../../src/toolenv/tasks.ts';
import { startFakeLlmServer, type FakeLlmServer, type FakeReply, type RecordedRequest } from '../../helpers/fakeLlmServer.ts';
import { dataPath } from '../../helpers/repoData.ts';

const TASKS: Task[] = ['tasks_base.json', 'tasks_hallucination.json', 'tasks_disambiguation.json'].flatMap((f) => loadTaskFile(dataPath(`carbench/${f}`)));

/** A fake model that replays the task's ground truth: the next step is chosen by the number of assistant turns so far. */
function replayingModel(task: Task, argumentsAsText: boolean): (request: RecordedRequest) => FakeReply {
  const steps = planReplay(task).steps;
  return (request) => {
    const turns = (request.body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
    const step = steps[turns];
    if (!step) return { content: DONE_TEXT, toolCalls: [] };
    if (step.kind === 'say') return { content: step.text, toolCalls: [] };
    return { toolCalls: step.calls.map((c) => ({ name: c.name, arguments: argumentsAsText ? JSON.stringify(c.kwargs) : c.kwargs })) };
  };
}

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('agent endpoint (bench runs the loop, the model answers with tool calls)', () => {
  const sample = ['base_0', 'base_34', 'base_84', 'hallucination_6', 'disambiguation_2', 'disambiguation_55'].map((id) => TASKS.find((t) => t.task_id === id)!);

  it('OpenAI-compatible: tool schemas offered as is, replayed tool calls score R = 1', async () => {
    for (const task of sample) {
      server = await startFakeLlmServer({ respond: replayingModel(task, true) });
      const agent = createEndpointAgent(`openai-compat:${server.url}/v1#fake-agent`);
      const r = await runToolTaskTrial(task, agent, { judge: confirmationRuleJudge });
      expect(r.reward, `${task.task_id}: ${r.failures.join(' | ')}`).toBe(1);
      const first = server.chatRequests()[0].body;
      expect(first.messages[0].role).toBe('system');
      expect(first.messages[0].content).toContain(task.context_init_config.current_location.id);
      expect(first.tools.length).toBe(57 - (task.removed_part ?? []).filter((p) => !p.includes('.')).length);
      await server.close();
      server = undefined;
    }
  }, 60_000);

  it('Ollama tool calling: the same replay scores R = 1; tool results go back as tool messages', async () => {
    const task = sample[0];
    server = await startFakeLlmServer({ respond: replayingModel(task, false) });
    const agent = createEndpointAgent('ollama:fake-agent', { ollamaHost: server.url });
    const r = await runToolTaskTrial(task, agent, { judge: confirmationRuleJudge });
    expect(r.reward, r.failures.join(' | ')).toBe(1);
    const later = server.chatRequests()[1].body.messages as Array<{ role: string; tool_name?: string; content: string }>;
    expect(later.find((m) => m.role === 'tool')).toMatchObject({ tool_name: 'get_weather' });
  }, 30_000);

  it('malformed arguments from the model are a recorded anomaly; a dead endpoint is agent_error', async () => {
    const task = sample[0];
    server = await startFakeLlmServer({ replies: [{ toolCalls: [{ name: 'open_close_sunroof', arguments: '{"percentage":' }] }, { content: 'Sorry.', toolCalls: [] }], respond: () => ({ content: 'Sorry.', toolCalls: [] }) });
    const r = await runToolTaskTrial(task, createEndpointAgent(`openai-compat:${server.url}/v1#fake-agent`));
    expect(r.anomalies[0]).toMatch(/malformed tool call open_close_sunroof/);
    await server.close();
    const dead = await runToolTaskTrial(task, createEndpointAgent(`openai-compat:${server.url}/v1#fake-agent`, { timeoutMs: 5000 }));
    server = undefined;
    expect(dead.outcome).toBe('agent_error');
    expect(dead.reason).toMatch(/server_error/);
    expect(() => createEndpointAgent('gguf:models/x.gguf')).toThrow(/ollama: or openai-compat:/);
  }, 30_000);
});

describe('the agent model in a reasoning mode ("thinking", CAR-bench\'s thinking vs non-thinking models)', () => {
  const task = TASKS.find((t) => t.task_id === 'base_0')!;
  const reasoned: FakeReply = { content: 'Done.', toolCalls: [], reasoning: 'The user wants the sunroof open; check the weather first.' };

  it('OpenAI-compatible: an effort goes out as reasoning_effort with enable_thinking; off switches thinking off; absent sends neither', async () => {
    server = await startFakeLlmServer({ respond: () => reasoned });
    const ref = `openai-compat:${server.url}/v1#fake-agent`;
    const high = await runToolTaskTrial(task, createEndpointAgent(ref, { thinking: 'high' }));
    expect(server.chatRequests().at(-1)!.body).toMatchObject({ reasoning_effort: 'high', chat_template_kwargs: { enable_thinking: true } });
    expect(high.agent).toBe(`${ref} (thinking: high)`);
    // the reasoning the server returned is kept with the agent's message, and not sent back to the model
    expect(high.messages.find((m) => m.role === 'assistant')).toMatchObject({ content: 'Done.', reasoning: reasoned.reasoning });
    await runToolTaskTrial(task, createEndpointAgent(ref, { thinking: 'on' }));
    expect(server.chatRequests().at(-1)!.body).toMatchObject({ reasoning_effort: 'medium', chat_template_kwargs: { enable_thinking: true } });
    await runToolTaskTrial(task, createEndpointAgent(ref, { thinking: 'off' }));
    const off = server.chatRequests().at(-1)!.body;
    expect(off.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(off).not.toHaveProperty('reasoning_effort');
    const plain = await runToolTaskTrial(task, createEndpointAgent(ref));
    expect(server.chatRequests().at(-1)!.body).not.toHaveProperty('chat_template_kwargs');
    expect(plain.agent).toBe(ref);
    for (const request of server.chatRequests()) expect(JSON.stringify(request.body.messages)).not.toContain('check the weather first');
  }, 30_000);

  it('Ollama: think true / false / an effort level; the thinking it returns is kept', async () => {
    server = await startFakeLlmServer({ respond: () => reasoned });
    const think = async (thinking?: 'on' | 'off' | 'low') => {
      const trial = await runToolTaskTrial(task, createEndpointAgent('ollama:fake-agent', { ollamaHost: server!.url, thinking }));
      return { body: server!.chatRequests().at(-1)!.body, trial };
    };
    expect((await think('on')).body.think).toBe(true);
    expect((await think('off')).body.think).toBe(false);
    const low = await think('low');
    expect(low.body.think).toBe('low');
    expect(low.trial.messages.find((m) => m.role === 'assistant')).toMatchObject({ reasoning: reasoned.reasoning });
    expect((await think()).body).not.toHaveProperty('think');
  }, 30_000);

  it('a tool-agents config takes agent.thinking and refuses a mode it does not know, naming the field', () => {
    const base = { kind: 'tool-agents', name: 't', tasks: ['x.json'] };
    expect(ToolAgentsConfigSchema.parse({ ...base, agent: { type: 'endpoint', model: 'ollama:qwen3:8b', thinking: 'high' } }).agent).toMatchObject({ thinking: 'high' });
    const bad = ToolAgentsConfigSchema.safeParse({ ...base, agent: { type: 'endpoint', model: 'ollama:qwen3:8b', thinking: 'max' } });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0].path).toEqual(['agent', 'thinking']);
  });
});
