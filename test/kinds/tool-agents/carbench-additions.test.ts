import { describe, expect, it } from 'vitest';
import { confirmationRuleJudge, type PolicyJudge } from '../../../src/kinds/tool-agents/judge.ts';
import { runToolTaskTrial, type AgentTurnInput, type TrialResult } from '../../../src/kinds/tool-agents/loop.ts';
import { ReplayAgent } from '../../../src/kinds/tool-agents/replay.ts';
import { summarizeTrials } from '../../../src/kinds/tool-agents/summary.ts';
import { loadTaskFile, type Task } from '../../../src/toolenv/tasks.ts';
import { dataPath } from '../../helpers/repoData.ts';
import { scripted } from './scripted.ts';

const TASKS: Task[] = ['tasks_base.json', 'tasks_hallucination.json', 'tasks_disambiguation.json'].flatMap((f) => loadTaskFile(dataPath(`carbench/${f}`)));
const byId = (id: string): Task => TASKS.find((t) => t.task_id === id)!;


/** A stored trial's shape with the fields the summary reads set by hand (family, task, trial, R). */
function trialLike(template: TrialResult, family: TrialResult['family'], taskId: string, trial: number, pass: boolean): TrialResult {
  return { ...template, family, taskType: family === 'hallucination' ? 'hallucination_missing_tool' : family === 'disambiguation' ? 'disambiguation_user' : 'base', taskId, trial, reward: pass ? 1 : 0 };
}

describe('CAR-bench additions', () => {
  it("macro Pass^3 as the leaderboard computes it: the mean of the three families' first-three-trials Pass^3 (worked example)", async () => {
    const template = await runToolTaskTrial(byId('base_0'), new ReplayAgent(), { judge: confirmationRuleJudge });
    const trials = (family: TrialResult['family'], taskId: string, outcomes: boolean[]) => outcomes.map((pass, trial) => trialLike(template, family, taskId, trial, pass));
    // base: A passes 3/3, B fails its third trial → Pass^3 = 1/2; hallucination: 3/3 → 1; disambiguation: C fails its first trial → 1/2
    const results = [
      ...trials('base', 'A', [true, true, true]),
      ...trials('base', 'B', [true, true, false]),
      ...trials('hallucination', 'H', [true, true, true]),
      ...trials('disambiguation', 'C', [false, true, true]),
      ...trials('disambiguation', 'D', [true, true, true]),
    ];
    const summary = summarizeTrials(results);
    expect(summary.competition.byFamily).toEqual({ base: 0.5, hallucination: 1, disambiguation: 0.5 });
    expect(summary.competition.macroPassHat3).toBeCloseTo(2 / 3, 12);
    // a family without three trials per task gives no leaderboard figure
    expect(summarizeTrials(results.filter((r) => r.trial < 2)).competition.macroPassHat3).toBeNull();
    expect(summarizeTrials(results.filter((r) => r.family !== 'hallucination')).competition.macroPassHat3).toBeNull();
  });

  it('reports R with its scope: over the judged components when an LLM-judged policy had no judge, complete when every one was judged', async () => {
    const partly = await runToolTaskTrial(byId('base_0'), new ReplayAgent(), { judge: confirmationRuleJudge });
    expect(partly.score!.scope).toBe('llm_policies_not_judged');
    const everyRule: PolicyJudge = { name: 'follows-all', judge: async () => ({ followed: true, reasoning: 'checked' }) };
    const full = await runToolTaskTrial(byId('base_2'), new ReplayAgent(), { judge: everyRule });
    expect(full.score!.scope).toBe('full');
    const summary = summarizeTrials([partly, full]);
    expect(summary.reward.overJudged).toEqual({ trials: 2, successes: 2 });
    expect(summary.reward.complete).toEqual({ trials: 1, successes: 1 });
    expect(summary.reward.statement).toMatch(/^R over the judged components: 2\/2; 1 trial\(s\) had LLM-judged policies not judged .* R complete covers the other 1: 1\/1$/);
    expect(summarizeTrials([full]).reward.statement).toBe('R complete: 1/1 (every applicable component judged)');
  });

  it("the planning/think switch: think and planning_tool are offered by default (CAR-bench's run.py) and withheld when switched off", async () => {
    const offered = (input: AgentTurnInput) => input.tools.map((t) => t.function.name);
    const withTools: AgentTurnInput[] = [];
    await runToolTaskTrial(byId('base_0'), scripted('on', [{ content: 'Done.', toolCalls: [] }], withTools));
    expect(offered(withTools[0])).toEqual(expect.arrayContaining(['think', 'planning_tool']));
    const without: AgentTurnInput[] = [];
    await runToolTaskTrial(byId('base_0'), scripted('off', [{ content: 'Done.', toolCalls: [] }], without), { planningAndThinking: false });
    expect(offered(without[0])).not.toContain('think');
    expect(offered(without[0])).not.toContain('planning_tool');
    expect(offered(without[0])).toHaveLength(offered(withTools[0]).length - 2);
  });
});
