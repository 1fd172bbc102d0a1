import { afterEach, describe, expect, it } from 'vitest';
import { chainJudges, confirmationRuleJudge, judgePrompt, judgeTrajectoryText, llmPolicyJudge } from '../../../src/kinds/tool-agents/judge.ts';
import { runToolTaskTrial } from '../../../src/kinds/tool-agents/loop.ts';
import { ReplayAgent } from '../../../src/kinds/tool-agents/replay.ts';
import { loadTaskFile } from '../../../src/toolenv/tasks.ts';
import { createProvider } from '../../../src/llm/index.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../../helpers/fakeLlmServer.ts';
import { dataPath } from '../../helpers/repoData.ts';

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('policy judge tier', () => {
  const task = loadTaskFile(dataPath('carbench/tasks_base.json')).find((t) => t.actions.some((a) => a.name === 'send_email'))!;

  it('the LLM judge gets the verbatim CAR-bench prompt and its verdict decides the rule', async () => {
    server = await startFakeLlmServer({ respond: () => JSON.stringify({ reasoning: 'Distances were given in miles.', policy_followed: false }) });
    const judge = chainJudges(confirmationRuleJudge, llmPolicyJudge(createProvider(`openai-compat:${server.url}/v1#judge`)));
    const r = await runToolTaskTrial(task, new ReplayAgent(), { judge });
    const byRule = Object.fromEntries(r.score!.policy.judged.map((j) => [j.rule, j]));
    expect(byRule['004'].status).toBe('followed'); // answered by the rule-based tier, no model call
    expect(byRule['002']).toMatchObject({ status: 'violated', reasoning: 'Distances were given in miles.' });
    expect(r.reward).toBe(0);
    expect(r.score!.scope).toBe('full');
    const prompt = server.chatRequests()[0].body.messages[0].content as string;
    expect(prompt).toContain('You are an expert data labeler. \nYour task is to grade the adherence');
    expect(prompt).toContain('Grade if following policy is followed: \nLLM-POL:002:The metric system is used');
    expect(prompt).toContain(judgeTrajectoryText(r.messages));
    expect(server.chatRequests()[0].body.temperature).toBe(0);
  }, 30_000);

  it('the judge trajectory blanks content next to tool calls and keeps tool results', () => {
    const text = judgeTrajectoryText([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'thinking aloud', toolCalls: [{ id: 'a', name: 'get_car_color', arguments: {} }], step: 0 },
      { role: 'tool', toolCallId: 'a', name: 'get_car_color', content: '{"status":"SUCCESS"}', status: 'success' },
    ]);
    expect(text).not.toContain('thinking aloud');
    expect(text).toContain('get_car_color');
    expect(judgePrompt('P', 'T')).toMatch(/<trajectory> \nT \n<\/trajectory>/);
  });

  it('rule-based 004: a yes to a question covers the next confirmation-tool message once', async () => {
    const email = (id: string) => ({ role: 'assistant' as const, content: '', toolCalls: [{ id, name: 'send_email', arguments: {} }], step: 1 });
    const ask = { role: 'assistant' as const, content: 'Shall I send it?', toolCalls: [], step: 0 };
    const judge = (messages: Parameters<typeof confirmationRuleJudge.judge>[0]['messages']) => confirmationRuleJudge.judge({ rule: '004', paragraph: '', messages });
    expect(await judge([{ role: 'user', content: 'mail Bob' }, ask, { role: 'user', content: 'Yes, go ahead.' }, email('a')])).toMatchObject({ followed: true });
    expect(await judge([{ role: 'user', content: 'mail Bob' }, email('a')])).toMatchObject({ followed: false });
    expect(await judge([{ role: 'user', content: 'mail Bob' }, ask, { role: 'user', content: 'No.' }, email('a')])).toMatchObject({ followed: false });
    expect(await judge([{ role: 'user', content: 'x' }, ask, { role: 'user', content: 'yes' }, email('a'), email('b')])).toMatchObject({ followed: false });
    expect(await confirmationRuleJudge.judge({ rule: '002', paragraph: '', messages: [] })).toBeNull();
  });
});
