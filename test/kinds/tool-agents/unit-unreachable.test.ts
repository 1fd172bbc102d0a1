import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectHeadUnit, toolsExtension, type BridgeClient } from '../../../src/bridge/client.ts';
import { toolAgentFactory } from '../../../src/kinds/tool-agents/bridge-unit.ts';
import { loadToolAgentsConfig } from '../../../src/kinds/tool-agents/config.ts';
import { toolAgentsKind } from '../../../src/kinds/tool-agents/kind.ts';
import { runKindCampaign } from '../../../src/run/runner.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { ScriptedHandler } from '../../bridge/helpers.ts';
import { spawnCli } from '../../helpers/cli.ts';
import { dataPath } from '../../helpers/repoData.ts';

const TOKEN_ENV = 'ICABENCH_TOOLS_DEAD_TOKEN';
const TOKEN = 'tools-dead-token';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('tool-agents against a bridge unit that never answers', () => {
  it('ends unit_unreachable with exit code 4 and one line naming the count and the cause, like every kind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tools-dead-'));
    const tasks = JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 3);
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify(tasks));
    writeFileSync(join(dir, 'c.yaml'), `kind: tool-agents\nname: dead-tools\ntasks: [tasks.json]\nrepeats: 1\nagent: { type: bridge, port: 0, tokenEnv: ${TOKEN_ENV}, waitSeconds: 30, turnTimeoutMs: 300 }\n`);
    const workspace = join(dir, 'ws');
    const cli = spawnCli(['run', join(dir, 'c.yaml'), '--workspace', workspace, '--out', join(dir, 'out'), '--no-progress'], { [TOKEN_ENV]: TOKEN });
    cleanups.push(() => void cli.child.kill());
    const [, url] = await cli.waitFor(/bridge listening on (\S+);/);
    // the unit dials in and announces the tools capability, but its assistant never answers
    const client: BridgeClient = await connectHeadUnit({ url, token: TOKEN, handler: new ScriptedHandler({ name: 'silent-tools', version: '1' }), extensions: toolsExtension(() => ({ next: () => new Promise(() => undefined) })) });
    cleanups.push(() => client.close());
    expect(await cli.exited, cli.output()).toBe(4);
    const lines = cli.output().split('\n').filter((l) => l.includes('unit_unreachable: none of'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/unit_unreachable: none of the 3 task trial\(s\) that ran reached the head unit \(last cause: the agent failed: timeout: head unit sent nothing for tool session/);
    const store = ResultStore.open(join(workspace, 'icabench.db'));
    try {
      expect(store.listRuns()[0].status).toBe('unit_unreachable');
    } finally {
      store.close();
    }
  }, 120_000);
});

describe('--resume of a tool-agents run whose head unit stopped answering', () => {
  /** Dials a tool unit in to the bridge a run announces: its assistant replays the task for the first `answerFirst` sessions, then never answers. */
  function dialUnit(answerFirst: number) {
    let sessions = 0;
    const replay = toolAgentFactory('replay');
    return (line: string) => {
      const url = /bridge listening on (\S+);/.exec(line)?.[1];
      if (!url) return;
      const agents = toolsExtension((start) => (++sessions <= answerFirst ? replay(start) : { next: () => new Promise(() => undefined) }));
      void connectHeadUnit({ url, token: TOKEN, handler: new ScriptedHandler({ name: 'flaky-tools', version: '1' }), extensions: agents }).then((client) => cleanups.push(() => client.close()));
    };
  }

  it.each([
    { down: 'from the start', answerFirst: 0, firstStatus: 'unit_unreachable' },
    { down: 'after one trial', answerFirst: 1, firstStatus: 'completed' },
  ])('unit silent $down: --resume with the unit fixed reruns exactly the trials that never reached it and ends completed', { timeout: 120_000 }, async ({ answerFirst, firstStatus }) => {
    process.env[TOKEN_ENV] = TOKEN;
    const dir = mkdtempSync(join(tmpdir(), 'tools-resume-'));
    const tasks = JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 3);
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify(tasks));
    writeFileSync(join(dir, 'c.yaml'), `kind: tool-agents\nname: flaky-tools\ntasks: [tasks.json]\nrepeats: 1\nconcurrency: 1\nagent: { type: bridge, port: 0, tokenEnv: ${TOKEN_ENV}, waitSeconds: 30, turnTimeoutMs: 300 }\n`);
    const loaded = loadToolAgentsConfig(join(dir, 'c.yaml'));
    const store = ResultStore.open(join(dir, 'icabench.db'));
    cleanups.push(() => store.close());

    const first = await runKindCampaign(toolAgentsKind, loaded, { store, log: dialUnit(answerFirst) });
    expect(first).toMatchObject({ status: firstStatus, done: 3, planned: 3 });
    const before = store.itemResults(first.runId, { done: true });
    const unreached = before.filter((row) => row.outcome === 'agent_error').map((row) => row.key);
    const reached = before.filter((row) => row.outcome !== 'agent_error');
    expect(unreached).toHaveLength(3 - answerFirst);

    const lines: string[] = [];
    const resumed = dialUnit(Infinity);
    const second = await runKindCampaign(toolAgentsKind, loaded, { store, resumeRunId: first.runId, log: (line) => (lines.push(line), resumed(line)) });
    expect(second).toMatchObject({ runId: first.runId, status: 'completed', stopReason: null, done: 3 });
    expect(lines).toContain(`--resume: ${unreached.length} task trials that never reached the head unit run again (${unreached.join(', ')})`);
    const after = store.itemResults(first.runId, { done: true });
    // the trials that reached the unit are kept as stored; the others ran again and now reached it
    expect(after.filter((row) => reached.some((r) => r.key === row.key))).toEqual(reached);
    expect(after.map((row) => row.outcome)).not.toContain('agent_error');
    expect(store.getRun(first.runId)).toMatchObject({ status: 'completed', stored: 3 });
  });
});
