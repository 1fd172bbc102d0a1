import { describe, expect, it } from 'vitest';
import { confirmationRuleJudge } from '../../../src/kinds/tool-agents/judge.ts';
import { checkRunnable, runToolTaskTrial } from '../../../src/kinds/tool-agents/loop.ts';
import { planReplay, ReplayAgent } from '../../../src/kinds/tool-agents/replay.ts';
import { loadTaskFile, type Task } from '../../../src/toolenv/tasks.ts';
import { dataPath, REPO_ROOT } from '../../helpers/repoData.ts';
import { join } from 'node:path';
import { scripted } from './scripted.ts';

const VENDORED: Task[] = loadTaskFile(dataPath('carbench/tasks_hallucination.json'));
/** the held-out task of test/fixtures/carbench/README.md: a later reference action depends on the one that needs the removed parameter */
const [DEPENDENT] = loadTaskFile(join(REPO_ROOT, 'test/fixtures/carbench/hallucination-dependent.json'));


describe('the replay agent on hallucination tasks: stop at the removed part and acknowledge it', () => {
  it('reaches R = 1 on every vendored hallucination task', async () => {
    const runnable = VENDORED.filter((t) => checkRunnable(t).runnable);
    expect(runnable).toHaveLength(48);
    for (const task of runnable) {
      const r = await runToolTaskTrial(task, new ReplayAgent(), { judge: confirmationRuleJudge });
      expect(r.reward, `${task.task_id}: ${r.failures.join(' | ')}`).toBe(1);
      expect(r.score!.hallucination.passed).toBe(true);
    }
  }, 120_000);

  it('reaches R = 1 on the dependent-action task, where going on past the removed part is rejected by the tool', async () => {
    expect(checkRunnable(DEPENDENT).runnable).toBe(true);
    // the plan stops before the waypoint it cannot add: nothing after it runs
    const called = planReplay(DEPENDENT).steps.flatMap((s) => (s.kind === 'calls' ? s.calls.map((c) => c.name) : []));
    expect(called).toEqual(['get_location_id_by_location_name', 'get_routes_from_start_to_destination', 'get_routes_from_start_to_destination']);
    const r = await runToolTaskTrial(DEPENDENT, new ReplayAgent(), { judge: confirmationRuleJudge });
    expect(r.reward, r.failures.join(' | ')).toBe(1);
    expect(r.score!.hallucination.passed).toBe(true);

    // the old replay (skip only the call that needs the removed parameter, carry on with the rest) fails here
    const skipOnly = DEPENDENT.actions.filter((a) => a.name !== 'navigation_add_one_waypoint');
    const carriedOn = await runToolTaskTrial(
      DEPENDENT,
      scripted('skip-only', [...skipOnly.map((a, i) => ({ content: '', toolCalls: [{ id: `c${i}`, name: a.name, arguments: a.kwargs }] })), { content: "I'm sorry, I cannot add Stuttgart as a stop.", toolCalls: [] }]),
      { judge: confirmationRuleJudge },
    );
    expect(carriedOn.reward).toBe(0);
    expect(carriedOn.score!.execution.passed).toBe(false);
  });
});
