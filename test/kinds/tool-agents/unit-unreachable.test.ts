import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectHeadUnit, toolsExtension, type BridgeClient } from '../../../src/bridge/client.ts';
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
