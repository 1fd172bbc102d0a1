import { afterEach, describe, expect, it } from 'vitest';
import { connectHeadUnit, toolsExtension, type BridgeClient } from '../../../src/bridge/client.ts';
import { startBridgeServer, type BridgeServer } from '../../../src/bridge/server.ts';
import { bridgeToolAgent } from '../../../src/kinds/tool-agents/bridge-agent.ts';
import { toolAgentFactory } from '../../../src/kinds/tool-agents/bridge-unit.ts';
import { confirmationRuleJudge } from '../../../src/kinds/tool-agents/judge.ts';
import { runToolTaskTrial, type ToolAgent } from '../../../src/kinds/tool-agents/loop.ts';
import { loadTaskFile, type Task } from '../../../src/toolenv/tasks.ts';
import { ScriptedHandler } from '../../bridge/helpers.ts';
import { dataPath } from '../../helpers/repoData.ts';

const TOKEN = 'tools-token';
const TASKS: Task[] = ['tasks_base.json', 'tasks_hallucination.json', 'tasks_disambiguation.json'].flatMap((f) => loadTaskFile(dataPath(`carbench/${f}`)));

let server: BridgeServer | undefined;
let client: BridgeClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

/** A head unit whose assistant is the replay agent for the task named in tool_session_start. */
async function replayUnit(name: string, agentFor?: (taskId: string) => ToolAgent) {
  server = await startBridgeServer({ token: TOKEN });
  const waiting = server.waitForHeadUnit(5_000, name);
  client = await connectHeadUnit({
    url: server.url,
    token: TOKEN,
    handler: new ScriptedHandler({ name, version: '1' }),
    // the same factory as `icabench headunit --tool-agent replay`
    extensions: toolsExtension(agentFor ? (start) => agentFor(start.task?.id ?? '') : toolAgentFactory('replay')),
  });
  return waiting;
}

describe('icabench-tools/1 over the bridge', () => {
  it('a bridge head unit running the replay agent scores R = 1 on every runnable train task', async () => {
    const connection = await replayUnit('tool-unit');
    expect(connection.capabilities().tools).toBe(true);
    const agent = bridgeToolAgent(connection);
    for (const task of TASKS) {
      const r = await runToolTaskTrial(task, agent, { judge: confirmationRuleJudge });
      expect(r.reward, `${task.task_id}: ${r.failures.join(' | ')}`).toBe(1);
    }
  }, 120_000);

  it('a unit without the capability is refused with a recorded reason; a silent unit times out as agent_error', async () => {
    server = await startBridgeServer({ token: TOKEN });
    const waiting = server.waitForHeadUnit(5_000, 'plain');
    client = await connectHeadUnit({ url: server.url, token: TOKEN, handler: new ScriptedHandler({ name: 'plain', version: '1' }) });
    const plain = await waiting;
    const r = await runToolTaskTrial(TASKS[0], bridgeToolAgent(plain));
    expect(r).toMatchObject({ outcome: 'agent_error', reward: 0 });
    expect(r.reason).toMatch(/did not announce capabilities.tools/);
    await client.close();
    await server.close();
    const silentConnection = await replayUnit('silent', () => ({ name: 'silent', next: () => new Promise(() => undefined) }));
    const t = await runToolTaskTrial(TASKS[0], bridgeToolAgent(silentConnection, { timeoutMs: 300 }));
    expect(t.outcome).toBe('agent_error');
    expect(t.reason).toMatch(/timeout: head unit sent nothing for tool session/);
  }, 30_000);
});
