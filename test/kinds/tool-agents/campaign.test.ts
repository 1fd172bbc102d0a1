import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadToolAgentsConfig, ToolAgentsConfigSchema } from '../../../src/kinds/tool-agents/config.ts';
import { nonStrictObjects } from '../../../src/config/schema-walk.ts';
import { dataPath } from '../../helpers/repoData.ts';
import { ScriptedHandler } from '../../bridge/helpers.ts';
import { connectHeadUnit, toolsExtension } from '../../../src/bridge/client.ts';
import { toolAgentFactory } from '../../../src/kinds/tool-agents/bridge-unit.ts';
import { loadTaskFile } from '../../../src/toolenv/tasks.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { runToolAgentsCampaign } from '../../helpers/run-kinds.ts';

/** A results store of its own for one run (every run is stored: resumable, and what the report reads). */
const tempStore = () => ResultStore.open(join(mkdtempSync(join(tmpdir(), 'tool-agents-store-')), 'icabench.db'));

describe('tool-agents campaign config', () => {
  it('bench-configs/carbench-train.yaml runs offline: every task x 3 trials, pass^k per family', async () => {
    const loaded = loadToolAgentsConfig(resolve('bench-configs/carbench-train.yaml'));
    expect(loaded.taskFiles).toEqual(['tasks_base.json', 'tasks_hallucination.json', 'tasks_disambiguation.json'].map((f) => dataPath(`carbench/${f}`)));
    const seen: number[] = [];
    const run = await runToolAgentsCampaign(loaded, { store: tempStore(), onTrial: (r) => seen.push(r.trial) });
    expect(run.results).toHaveLength(387);
    expect(seen.filter((t) => t === 2)).toHaveLength(129);
    expect(run.invalidTasks).toEqual([]);
    for (const family of ['base', 'hallucination', 'disambiguation']) {
      const f = run.summary.families[family];
      expect(f.reliability.byK.map((p) => p.k)).toEqual([1, 2, 3]);
      expect(f.reliability.byK[2].passHatK.firstK).toBe(1);
    }
  }, 120_000);

  it('--resume names the run to continue: an unknown run or one of another kind is refused before anything runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tool-agents-resume-'));
    const store = ResultStore.open(join(dir, 'icabench.db'));
    try {
      const manual = store.createItemRun({ name: 'm', kind: 'manual-qa', config: {}, plan: [{ key: 'q1', item: {} }] });
      const loaded = loadToolAgentsConfig(resolve('bench-configs/carbench-train.yaml'));
      await expect(runToolAgentsCampaign(loaded, { store, resumeRunId: 'nope' })).rejects.toThrow('--resume: no run nope in this workspace (icabench runs lists them)');
      await expect(runToolAgentsCampaign(loaded, { store, resumeRunId: manual })).rejects.toThrow(`--resume: run ${manual} is a manual-qa run, not a tool-agents run`);
      expect(store.listRuns()).toHaveLength(1);
    } finally {
      store.close();
    }
  });

  it('a bad task is recorded with its reason and the campaign goes on; config errors name the line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tool-agents-'));
    const tasks = JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 3);
    tasks[1].task_type = 'sightseeing';
    tasks[2].actions[0].name = 'open_the_moon_roof';
    writeFileSync(join(dir, 'mine.json'), JSON.stringify(tasks));
    writeFileSync(join(dir, 'c.yaml'), 'kind: tool-agents\nname: mine\ntasks: [mine.json, missing.json]\nrepeats: 1\nagent: { type: replay, fault: { kind: half_done } }\n');
    const run = await runToolAgentsCampaign(loadToolAgentsConfig(join(dir, 'c.yaml')), { store: tempStore() });
    expect(run.invalidTasks.map((i) => [i.taskId, i.position])).toEqual([['base_2', 1], ['(file)', -1]]);
    expect(run.invalidTasks[0].reason).toMatch(/task base_2 \(#1\): task_type/);
    expect(run.invalidTasks[1].reason).toMatch(/missing\.json: cannot read the task file \(no such file\)/);
    expect(run.results.map((r) => [r.taskId, r.outcome, r.reward])).toEqual([['base_0', 'scored', 0], ['base_4', 'not_runnable', null]]);
    // the same tasks with 4 trials at once over a bridge head unit: results in plan order, same verdicts
    writeFileSync(join(dir, 'bridge.yaml'), `kind: tool-agents\nname: b\ntasks: [${dataPath('carbench/tasks_disambiguation.json')}]\nrepeats: 2\nconcurrency: 4\nagent: { type: bridge, port: 0, tokenEnv: TOOLS_TEST_TOKEN, waitSeconds: 10 }\n`);
    process.env.TOOLS_TEST_TOKEN = 'concurrent';
    const loaded = loadToolAgentsConfig(join(dir, 'bridge.yaml'));
    const running = runToolAgentsCampaign(loaded, { store: tempStore(), log: (line) => void dialIn(line) });
    let unit: { close(): Promise<void> } | undefined;
    const dialIn = async (line: string) => {
      const url = /listening on (\S+);/.exec(line)![1];
      unit = await connectHeadUnit({ url, token: 'concurrent', handler: new ScriptedHandler({ name: 'tools', version: '1' }), extensions: toolsExtension(toolAgentFactory('replay')) });
    };
    const bridged = await running;
    await unit?.close();
    expect(bridged.results.map((r) => `${r.taskId}/${r.trial}`)).toEqual([0, 1].flatMap((t) => loadTaskFile(dataPath('carbench/tasks_disambiguation.json')).map((x) => `${x.task_id}/${t}`)));
    expect(bridged.results.every((r) => r.reward === 1)).toBe(true);
    writeFileSync(join(dir, 'bad.yaml'), 'kind: tool-agents\nname: x\ntasks: [mine.json]\nrepeats: 0\n');
    expect(() => loadToolAgentsConfig(join(dir, 'bad.yaml'))).toThrow(/bad\.yaml:4: repeats: /);
    // strict like every config: a typo fails at its line
    expect(nonStrictObjects(ToolAgentsConfigSchema)).toEqual([]);
    writeFileSync(join(dir, 'typo.yaml'), 'kind: tool-agents\nname: x\ntasks: [mine.json]\nrepeat: 2\n');
    expect(() => loadToolAgentsConfig(join(dir, 'typo.yaml'))).toThrow(/typo\.yaml:4: .*repeat.*repeats/);
  }, 60_000);
});
