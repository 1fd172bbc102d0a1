import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bridgeToolAgent } from '../../../src/kinds/tool-agents/bridge-agent.ts';
import { confirmationRuleJudge } from '../../../src/kinds/tool-agents/judge.ts';
import { runToolTaskTrial } from '../../../src/kinds/tool-agents/loop.ts';
import { loadTaskFile } from '../../../src/toolenv/tasks.ts';
import { startBridgeServer } from '../../../src/bridge/server.ts';
import { dataPath } from '../../helpers/repoData.ts';

const CLI = resolve('bin/icabench.js');

describe('`icabench headunit --tool-agent replay` in its own process', () => {
  it('dials in with capabilities.tools and scores R = 1 on tasks of every type', async () => {
    const server = await startBridgeServer({ token: 'cli-tools' });
    const unit = spawn(process.execPath, [CLI, 'headunit', '--url', server.url, '--token', 'cli-tools', '--tool-agent', 'replay'], { stdio: 'ignore' });
    try {
      const connection = await server.waitForHeadUnit(60_000);
      expect(connection.capabilities().tools).toBe(true);
      const agent = bridgeToolAgent(connection, { timeoutMs: 30_000 });
      for (const [file, id] of [['tasks_base.json', 'base_84'], ['tasks_hallucination.json', 'hallucination_30'], ['tasks_disambiguation.json', 'disambiguation_44']]) {
        const task = loadTaskFile(dataPath(`carbench/${file}`)).find((t) => t.task_id === id)!;
        const r = await runToolTaskTrial(task, agent, { judge: confirmationRuleJudge });
        expect(r.reward, `${id}: ${r.failures.join(' | ')}`).toBe(1);
      }
    } finally {
      unit.kill('SIGINT');
      await server.close();
    }
  }, 120_000);
});
