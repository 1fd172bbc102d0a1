import { describe, expect, it } from 'vitest';
import { runToolTaskTrial } from '../../../src/kinds/tool-agents/loop.ts';
import { ReplayAgent } from '../../../src/kinds/tool-agents/replay.ts';
import { toolTrialsJunit, trialText } from '../../../src/kinds/tool-agents/report.ts';
import { loadTaskFile, parseTasks } from '../../../src/toolenv/tasks.ts';
import { dataPath } from '../../helpers/repoData.ts';

describe('tool-trial renderings', () => {
  it('JUnit: passed, failed (components named), error and skipped (not runnable) cases', async () => {
    const [t0, t1] = loadTaskFile(dataPath('carbench/tasks_base.json'));
    const raw = structuredClone(t1);
    raw.actions[0].name = 'beam_me_up';
    const [bad] = parseTasks(JSON.stringify([raw]), 'mine.json');
    const results = [
      await runToolTaskTrial(t0, new ReplayAgent()),
      await runToolTaskTrial(t0, new ReplayAgent({ kind: 'half_done' }), { trial: 1 }),
      await runToolTaskTrial(t0, { name: 'boom', next: async () => Promise.reject(new Error('down')) }, { trial: 2 }),
      await runToolTaskTrial(bad, new ReplayAgent()),
    ];
    const xml = toolTrialsJunit(results, 'carbench <train>');
    expect(xml).toContain('tests="4" failures="1" errors="1" skipped="1"');
    expect(xml).toContain('<testcase name="base_0 trial 0" classname="carbench.base.base"/>');
    expect(xml).toMatch(/<failure type="state,subset" message="R = 0: state: final sunroof_position expected 50 got 0/);
    expect(xml).toContain('<error type="agent_error" message="the agent failed: down">');
    expect(xml).toContain('<skipped message="not runnable: unknown tool in the task&apos;s actions: beam_me_up"/>');
    expect(xml).toContain('name="carbench &lt;train&gt;"');
    const text = trialText(results[1]);
    expect(text).toContain('agent → get_weather(');
    expect(text).toContain('final state sunroof_position: expected 50, got 0');
    expect(text).toContain('components: state FAIL, subset FAIL, execution pass, end pass, policy pass');
  });
});
