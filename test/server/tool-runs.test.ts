import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolAgentsConfig } from '../../src/kinds/tool-agents/config.ts';
import { dataPath } from '../helpers/repoData.ts';
import { startHarness, type Harness } from './helpers.ts';
import { runToolAgentsCampaign } from '../helpers/run-kinds.ts';

describe('the bench server with tool-agents runs', () => {
  let h: Harness;
  let runId: string;
  beforeAll(async () => {
    h = await startHarness();
    writeFileSync(join(h.workspace, 'base.json'), JSON.stringify(JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 2)));
    writeFileSync(join(h.workspace, 'c.yaml'), 'kind: tool-agents\nname: served\ntasks: [base.json]\nrepeats: 2\n');
    runId = (await runToolAgentsCampaign(loadToolAgentsConfig(join(h.workspace, 'c.yaml')), { store: h.store })).runId!;
  }, 60_000);
  afterAll(() => h?.close());

  it('lists carbench-train.yaml as a valid tool-agents config', async () => {
    const res = await h.api('/api/configs');
    expect(res.json.configs.find((c: { name: string }) => c.name === 'carbench-train.yaml')).toMatchObject({ kind: 'tool-agents', valid: true });
    expect(h.store.listRuns()).toHaveLength(1);
  });

  it('compares two tool-agents runs task by task, as icabench compare does; a run of another kind is refused with the reason', async () => {
    const compare = await h.api(`/api/compare?a=${runId}&b=${runId}`);
    expect(compare.status).toBe(200);
    expect(compare.json).toMatchObject({ kind: 'tool-agents', a: { id: runId, name: 'served' }, b: { id: runId } });
    expect(compare.json.toolComparison.families).toEqual([{ family: 'base', k: 2, a: 1, b: 1, delta: 0 }]);
    expect(compare.json.toolComparison.changed).toEqual([]);
    const dialogue = h.store.createRun({ name: 'talk', mode: 'guided', config: { name: 'talk' }, plan: [] });
    const mixed = await h.api(`/api/compare?a=${runId}&b=${dialogue}`);
    expect(mixed.status).toBe(400);
    expect(mixed.json.error).toMatchObject({ code: 'unsupported_kind', message: 'compare: a dialogue run compares with a dialogue, suite, live run, not with a tool-agents run' });
  });

  it('serves the run overview, one trial, and summary.json; other kinds’ endpoints refuse it', async () => {
    const overview = await h.api(`/api/runs/${runId}/tool-agents`);
    expect(overview.status).toBe(200);
    expect(overview.json.summary).toMatchObject({ kind: 'tool-agents', trials: 4, planned: 4 });
    expect(overview.json.tasks.map((t: { taskId: string; trials: { reward: number }[] }) => [t.taskId, t.trials.map((x) => x.reward)])).toEqual([
      ['base_0', [1, 1]],
      ['base_2', [1, 1]],
    ]);
    const trial = await h.api(`/api/runs/${runId}/tool-agents/trials/${encodeURIComponent('base_2#1')}`);
    expect(trial.status).toBe(200);
    expect(trial.json.result).toMatchObject({ taskId: 'base_2', trial: 1, reward: 1 });
    expect(trial.json.result.messages.length).toBeGreaterThan(0);
    expect((await h.api(`/api/runs/${runId}/tool-agents/trials/nope`)).status).toBe(404);
    const summary = await h.api(`/api/runs/${runId}/summary.json`);
    expect(summary.status).toBe(200);
    expect(summary.json.kind).toBe('tool-agents');
    const manual = await h.api(`/api/runs/${runId}/manual`);
    // a route another kind's view declares is not one of this run's
    expect(manual.status).toBe(404);
    expect(manual.json.error).toMatchObject({ code: 'not_found', message: `run ${runId} is a tool-agents run: it has no /manual` });
  });
});
