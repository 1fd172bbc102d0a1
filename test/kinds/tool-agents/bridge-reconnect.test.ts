import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectHeadUnit, toolsExtension, type BridgeClient, type ToolAssistant } from '../../../src/bridge/client.ts';
import { BRIDGE_FACTS } from '../../../src/bridge/facts.ts';
import { toolAgentFactory } from '../../../src/kinds/tool-agents/bridge-unit.ts';
import { loadToolAgentsConfig } from '../../../src/kinds/tool-agents/config.ts';
import { toolAgentsKind } from '../../../src/kinds/tool-agents/kind.ts';
import { loadToolAgentsRun, trialReruns } from '../../../src/kinds/tool-agents/results.ts';
import type { CampaignEvent } from '../../../src/run/events.ts';
import { runKindCampaign } from '../../../src/run/runner.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { ScriptedHandler } from '../../bridge/helpers.ts';
import { dataPath } from '../../helpers/repoData.ts';

const TOKEN_ENV = 'ICABENCH_TOOLS_RECONNECT_TOKEN';
const TOKEN = 'tools-reconnect-token';
process.env[TOKEN_ENV] = TOKEN;
const UNIT = 'tools-unit';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A tool-agents config over the bridge: four base tasks, one trial each, one at a time. */
function bridgeCampaign(graceSeconds: number) {
  const dir = mkdtempSync(join(tmpdir(), 'tools-reconnect-'));
  const tasks = JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 4);
  writeFileSync(join(dir, 'tasks.json'), JSON.stringify(tasks));
  writeFileSync(join(dir, 'c.yaml'), `kind: tool-agents\nname: reconnect\ntasks: [tasks.json]\nrepeats: 1\nagent: { type: bridge, port: 0, tokenEnv: ${TOKEN_ENV}, waitSeconds: 30, reconnectGraceSeconds: ${graceSeconds} }\n`);
  const store = ResultStore.open(join(dir, 'icabench.db'));
  cleanups.push(() => store.close());
  const taskIds: string[] = tasks.map((t: { task_id: string }) => t.task_id);
  return { loaded: loadToolAgentsConfig(join(dir, 'c.yaml')), store, taskIds, dropTask: taskIds[1] };
}

/** A hand-written tool unit (the replay assistant); `assistant` may replace it for a session. */
async function dialIn(url: string, assistant?: (taskId: string) => ToolAssistant | undefined): Promise<BridgeClient> {
  const replay = toolAgentFactory('replay');
  const client = await connectHeadUnit({ url, token: TOKEN, handler: new ScriptedHandler({ name: UNIT, version: '1' }), extensions: toolsExtension((start) => assistant?.(start.task?.id ?? '') ?? replay(start)) });
  cleanups.push(() => client.close());
  return client;
}

/**
 * A unit that hangs up in the middle of `dropTask`'s first session (as a crashing head unit does): its assistant never
 * answers, the unit's link goes away; `redial` runs once the bench says it paused.
 */
function droppingUnit(dropTask: string) {
  let url = '';
  let first: BridgeClient | undefined;
  let dropped = false;
  const hangUp: ToolAssistant = {
    next: () => {
      dropped = true;
      setImmediate(() => void first!.close());
      return new Promise(() => undefined);
    },
  };
  return {
    async onLog(line: string) {
      const listening = /bridge listening on (\S+);/.exec(line)?.[1];
      if (listening) {
        url = listening;
        first = await dialIn(url, (taskId) => (taskId === dropTask && !dropped ? hangUp : undefined));
      }
    },
    url: () => url,
  };
}

describe('tool-agents over the bridge: a head unit that leaves mid-trial', () => {
  it('the trial in flight is not stored as the agent failing: the run pauses, the unit redials, the trial runs again; facts record it', async () => {
    const { loaded, store, taskIds, dropTask } = bridgeCampaign(60);
    const unit = droppingUnit(dropTask);
    const notices: string[] = [];
    const lines: string[] = [];
    const result = await runKindCampaign(toolAgentsKind, loaded, {
      store,
      log: (line) => {
        lines.push(line);
        void unit.onLog(line);
        // the bench waits for the unit: now it dials in again
        if (line.includes('connected: new conversations wait')) void dialIn(unit.url());
      },
      onEvent: (event: CampaignEvent) => void (event.type === 'headunit' && notices.push(event.kind)),
    });
    expect(result).toMatchObject({ status: 'completed', done: 4, planned: 4, stopReason: null });
    const run = loadToolAgentsRun(store, result.runId);
    // every trial stored once, each a success of the replay agent: the lost session left no agent_error behind
    expect(run.results.map((r) => [r.taskId, r.outcome, r.reward])).toEqual(taskIds.map((id) => [id, 'scored', 1]));
    expect(store.itemResults(result.runId).map((row) => row.outcome)).toEqual(['pass', 'pass', 'pass', 'pass']);
    expect(trialReruns(store, result.runId)).toEqual([{ key: `${dropTask}#0`, attempt: 1, cause: expect.stringMatching(new RegExp(`^disconnected: head unit "${UNIT}" disconnected: .*; tool session tools-${dropTask}-\\d+ is lost$`)) }]);
    expect(store.runFacts(result.runId, BRIDGE_FACTS.disconnected)).toHaveLength(1);
    expect(store.runFacts(result.runId, BRIDGE_FACTS.paused)).toHaveLength(1);
    expect(store.runFacts(result.runId, BRIDGE_FACTS.resumed)).toHaveLength(1);
    expect(store.runFacts(result.runId, BRIDGE_FACTS.stopped)).toEqual([]);
    expect(notices).toEqual(['disconnected', 'paused', 'connected', 'resumed']);
    expect(lines.some((l) => l.startsWith(`${dropTask}#0: the head unit's link was lost during the trial`))).toBe(true);
  }, 120_000);

  it('a unit that does not come back stops the run with the reason; the trial is not stored and runs on resume', async () => {
    const { loaded, store, taskIds, dropTask } = bridgeCampaign(1);
    const unit = droppingUnit(dropTask);
    const first = await runKindCampaign(toolAgentsKind, loaded, { store, log: (line) => void unit.onLog(line) });
    expect(first.status).toBe('interrupted');
    expect(first.stopReason).toMatch(new RegExp(`^head unit "${UNIT}" left and did not come back: unavailable: no head unit named "${UNIT}" dialled in within 1000 ms`));
    // the trial before it is stored; the one cut off is not (no agent_error for a unit that left)
    expect(store.itemResults(first.runId, { done: true }).map((row) => [row.key, row.outcome])).toEqual([[`${taskIds[0]}#0`, 'pass']]);
    expect(store.runFacts(first.runId, BRIDGE_FACTS.stopped).map((f) => (f.data as { reason: string }).reason)).toEqual([first.stopReason]);
    expect(trialReruns(store, first.runId).map((r) => r.key)).toEqual([`${dropTask}#0`]);

    // --resume with the unit back: the rest runs, the cut-off trial among them, each stored once
    const resumed = await runKindCampaign(toolAgentsKind, loaded, { store, resumeRunId: first.runId, log: (line) => void (/bridge listening on (\S+);/.exec(line) && dialIn(/bridge listening on (\S+);/.exec(line)![1])) });
    expect(resumed).toMatchObject({ status: 'completed', done: 4, planned: 4 });
    expect(store.itemResults(first.runId).map((row) => row.outcome)).toEqual(['pass', 'pass', 'pass', 'pass']);
  }, 120_000);
});
