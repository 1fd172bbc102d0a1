import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolAgentsConfig } from '../../src/kinds/tool-agents/config.ts';
import type { TrialResult } from '../../src/kinds/tool-agents/loop.ts';
import type { ToolAgentsRunSummary } from '../../src/kinds/tool-agents/results.ts';
import { toolAgentsKind } from '../../src/kinds/tool-agents/kind.ts';
import { writeToolAgentsOutputs } from '../../src/kinds/tool-agents/outputs.ts';
import { ToolRunApi } from '../../src/kinds/tool-agents/view.ts';
import { ResultStore } from '../../src/store/store.ts';
import type { FirstScreen } from '../../src/report/first-screen.ts';
import { ToolRunPanel, ToolTrialPanel, type ToolTaskRow } from '../../src/ui/views/ToolRunView.tsx';
import { dataPath } from '../helpers/repoData.ts';
import { runToolAgentsCampaign } from '../helpers/run-kinds.ts';

describe('the bench app views of a tool-agents run (API + rendered markup)', () => {
  let store: ResultStore;
  let runId: string;
  let api: ToolRunApi;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tool-view-'));
    writeFileSync(join(dir, 'base.json'), JSON.stringify(JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 3)));
    // the half_done fault leaves the last state-changing call out: failed trials with a state diff to show
    writeFileSync(join(dir, 'c.yaml'), 'kind: tool-agents\nname: view\ntasks: [base.json]\nrepeats: 2\nagent: { type: replay, fault: { kind: half_done } }\n');
    store = ResultStore.open(join(dir, 'icabench.db'));
    runId = (await runToolAgentsCampaign(loadToolAgentsConfig(join(dir, 'c.yaml')), { store })).runId!;
    api = new ToolRunApi(store);
  }, 60_000);
  afterAll(() => store?.close());

  it('the run view: pass^k per family, one row per task with R per trial linking to the trial', async () => {
    const { summary, tasks, firstScreen } = api.overview(store.getRun(runId)!) as { summary: ToolAgentsRunSummary; tasks: ToolTaskRow[]; firstScreen: FirstScreen };
    expect(tasks.map((t) => [t.taskId, t.trials.map((x) => x.key)])).toEqual(['base_0', 'base_2', 'base_4'].map((id) => [id, [`${id}#0`, `${id}#1`]]));
    const html = renderToStaticMarkup(<ToolRunPanel runId={runId} summary={summary} tasks={tasks} firstScreen={firstScreen} />);
    // #35: the run page says, before any figure, that a replay tested no agent (from the stored trials' agent)
    expect(html).toContain(
      '<div class="warn-box" data-testid="caveat"><b>Read this first:</b> This run is a replay of the reference trajectories with the fault profile half_done injected, not an agent under test',
    );
    expect(html).toContain('<td>the replay agent (a replay of the reference trajectories, not an agent)</td>');
    expect(firstScreen).toEqual(writeToolAgentsOutputs(store, runId, join(dir, 'first')).firstScreen);
    expect(html).toMatch(/<a href="#\/runs\/[^"]+\/tool-agents\/base_\d%23\d">evidence: task base_\d, trial \d →<\/a>/);
    const table = html.replace(/<section class="first-screen"[\s\S]*?<\/section>/, '');
    expect(table.match(/<a href="#\/runs\/[^"]+\/tool-agents\/base_\d%230">/g)).toHaveLength(3);
    expect(table.match(/<a href="#\/runs\/[^"]+\/tool-agents\/[^"]+">/g)).toHaveLength(6);
    expect(html).toContain('data-testid="reliability-table"');
    expect(html).toContain('all k trials of a task pass');
    const failed = tasks.flatMap((t) => t.trials).filter((x) => x.outcome === 'fail').length;
    expect(failed).toBeGreaterThan(0);
    expect(html).toContain(`component state failed</td><td>${failed}</td>`);
    const types = /data-testid="tool-task-types">([\s\S]*?)<\/table>/.exec(html)![1];
    expect(types).toContain(`<td>base</td><td>3 / 3</td><td>${6 - failed} / 6</td>`);
    // summary.json served by the app is byte for byte the written one
    writeToolAgentsOutputs(store, runId, join(dir, 'out'));
    expect(await toolAgentsKind.outputs.summaryJson(store, store.getRun(runId)!)).toBe(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
  });

  it('the trial view: components, the state diff, policies and the trajectory with tool calls and results', () => {
    const { tasks } = api.overview(store.getRun(runId)!) as { tasks: ToolTaskRow[] };
    const key = tasks.flatMap((t) => t.trials).find((x) => x.outcome === 'fail')!.key;
    const { outcome, result } = api.trial(store.getRun(runId)!, key) as { outcome: string; result: TrialResult };
    const html = renderToStaticMarkup(<ToolTrialPanel runId={runId} outcome={outcome} result={result} />);
    expect(result.score!.state.finalDiff.length).toBeGreaterThan(0);
    const diff = /data-testid="state-diff">([\s\S]*?)<\/table>/.exec(html)![1];
    expect(diff.match(/<tr>/g)!.length - 1).toBe(result.score!.state.finalDiff.length);
    expect(diff).toContain(`<td>${result.score!.state.finalDiff[0].field}</td>`);
    const calls = result.messages.flatMap((m) => (m.role === 'assistant' ? m.toolCalls : []));
    const trajectory = /data-testid="trajectory">([\s\S]*?)<\/table>/.exec(html)![1];
    expect(trajectory.match(/agent → tool/g)).toHaveLength(calls.length);
    expect(trajectory.match(/<td>← /g)).toHaveLength(result.messages.filter((m) => m.role === 'tool').length);
    expect(html).toMatch(/<th>state<\/th>/);
    expect(html).toContain('FAIL');
    expect(() => api.trial(store.getRun(runId)!, 'base_0#9')).toThrow(/no task trial "base_0#9"/);
  });
});
