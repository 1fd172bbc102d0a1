import { describe, expect, it } from 'vitest';
import { compareToolRuns, ToolRunComparisonSchema } from '../../../src/kinds/tool-agents/compare.ts';
import { runToolTaskTrial, type TrialResult } from '../../../src/kinds/tool-agents/loop.ts';
import type { FaultProfile } from '../../../src/kinds/tool-agents/config.ts';
import { ReplayAgent } from '../../../src/kinds/tool-agents/replay.ts';
import { loadTaskFile } from '../../../src/toolenv/tasks.ts';
import { dataPath } from '../../helpers/repoData.ts';

describe('comparing two tool-agent runs', () => {
  it('pass^k per family and the tasks that moved', async () => {
    const tasks = loadTaskFile(dataPath('carbench/tasks_base.json')).slice(0, 6);
    const run = async (fault: FaultProfile) => {
      const out: TrialResult[] = [];
      for (let trial = 0; trial < 2; trial++) for (const t of tasks) out.push(await runToolTaskTrial(t, new ReplayAgent(fault), { trial }));
      return out;
    };
    const clean = await run({ kind: 'none' });
    const faulty = await run({ kind: 'half_done' });
    const c = ToolRunComparisonSchema.parse(compareToolRuns(clean, faulty));
    expect(c.families).toEqual([{ family: 'base', k: 2, a: 1, b: 0, delta: -1 }]);
    expect(c.changed.map((x) => [x.a, x.b])).toEqual(tasks.map(() => [1, 0]));
    expect(compareToolRuns(clean, clean.slice(0, 6)).onlyIn).toEqual({ a: [], b: [] });
    expect(compareToolRuns(clean.slice(0, 3), clean).onlyIn.b).toEqual(tasks.slice(3).map((t) => t.task_id));
  }, 60_000);

  it('sets the two runs\' fabrication / concealment counts side by side', async () => {
    const tasks = loadTaskFile(dataPath('carbench/tasks_hallucination.json')).filter((t) => t.task_type === 'hallucination_missing_tool_parameter').slice(0, 3);
    const run = async (fault: FaultProfile) => Promise.all(tasks.map((t) => runToolTaskTrial(t, new ReplayAgent(fault))));
    const c = compareToolRuns(await run({ kind: 'none' }), await run({ kind: 'fabricates_removed' }));
    expect(c.hallucinationFailures).toEqual({ a: { fabrication: 0, concealment: 0 }, b: { fabrication: 3, concealment: 0 } });
  }, 60_000);
});
