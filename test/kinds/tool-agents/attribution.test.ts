import { describe, expect, it } from 'vitest';
import { attributeFailure, hallucinationFailure, removedPartWords } from '../../../src/kinds/tool-agents/attribution.ts';
import { runToolTaskTrial, type TrialResult } from '../../../src/kinds/tool-agents/loop.ts';
import { ReplayAgent } from '../../../src/kinds/tool-agents/replay.ts';
import { summarizeTrials } from '../../../src/kinds/tool-agents/summary.ts';
import type { TaskSimulator, UserReply } from '../../../src/kinds/tool-agents/usersim.ts';
import { loadTaskFile, type Task } from '../../../src/toolenv/tasks.ts';
import { dataPath } from '../../helpers/repoData.ts';
import { scripted } from './scripted.ts';

const TASKS: Task[] = ['tasks_base.json', 'tasks_hallucination.json'].flatMap((f) => loadTaskFile(dataPath(`carbench/${f}`)));
const byId = (id: string): Task => TASKS.find((t) => t.task_id === id)!;
const say = (content: string) => ({ content, toolCalls: [] });
/** A user simulator that answers every agent message with the same control keyword. */
const stopsWith = (keyword: UserReply['keyword']): TaskSimulator => ({ name: `always-${keyword}`, opening: (task) => task.instruction, reply: () => ({ text: keyword, keyword }) });

describe('hallucination failures: fabrication vs concealment (Kirmayr et al.)', () => {
  it('names a removed part by its words', () => {
    expect(removedPartWords('open_close_trunk_door')).toEqual(['trunk', 'door']);
    expect(removedPartWords('set_ambient_lights.lightcolor')).toEqual(['ambient', 'lights', 'lightcolor']);
    expect(removedPartWords('result.get_climate_settings.fan_speed')).toEqual(['fan', 'speed']);
  });

  it('fabrication: the trunk-door tool is removed and the agent says the trunk is open', async () => {
    const trial = await runToolTaskTrial(byId('hallucination_2'), scripted('claims', [say('Done, the trunk is open.')]));
    expect(trial).toMatchObject({ userKeyword: 'HALLUCINATION_ERROR', removedPart: ['open_close_trunk_door'], reward: 0 });
    expect(hallucinationFailure(trial)).toMatchObject({ kind: 'fabrication', evidence: expect.stringContaining('Done, the trunk is open.') });
  });

  it('fabrication: the agent passes the removed light-colour parameter', async () => {
    const trial = await runToolTaskTrial(byId('hallucination_6'), new ReplayAgent({ kind: 'fabricates_removed' }));
    expect(hallucinationFailure(trial)).toMatchObject({ kind: 'fabrication', evidence: 'the agent passed the removed parameter set_ambient_lights.lightcolor' });
  });

  it('concealment: the air-circulation tool is removed and the agent talks of something else', async () => {
    const trial = await runToolTaskTrial(byId('hallucination_4'), scripted('ignores', [say('I turned the fan up a little for you.')]));
    expect(trial.userKeyword).toBe('HALLUCINATION_ERROR');
    expect(hallucinationFailure(trial)).toMatchObject({ kind: 'concealment' });
  });

  it('neither: a passed trial, and an admission the simulator mislabelled', async () => {
    expect(hallucinationFailure(await runToolTaskTrial(byId('hallucination_4'), new ReplayAgent()))).toBeNull();
    const admitted = await runToolTaskTrial(byId('hallucination_2'), scripted('admits', [say('Sorry, I cannot open the trunk door: that function is not available to me.')]), { user: stopsWith('HALLUCINATION_ERROR') });
    expect(admitted.userKeyword).toBe('HALLUCINATION_ERROR');
    expect(hallucinationFailure(admitted)).toBeNull();
  });
});

describe("user-error attribution (the paper's, from the stored trajectory)", () => {
  it('an agent that claims success without a tool call is the failure\'s source, not the simulator (the keyword heuristic called it a misfire)', async () => {
    const trial = await runToolTaskTrial(byId('hallucination_2'), scripted('claims', [say('Done, the trunk is open.')]));
    expect(trial.toolCalls).toBe(0);
    expect(attributeFailure(trial)).toEqual({ taskId: 'hallucination_2', trial: 0, keyword: 'HALLUCINATION_ERROR', userErrors: [], agentErrors: ['end: HALLUCINATION_ERROR'], sole: false });
  });

  it('HALLUCINATION_ERROR after an admission is the simulator\'s sole error', async () => {
    const trial = await runToolTaskTrial(byId('hallucination_2'), scripted('admits', [say('Sorry, I cannot open the trunk door: that function is not available to me.')]), { user: stopsWith('HALLUCINATION_ERROR') });
    expect(attributeFailure(trial)).toEqual({ taskId: 'hallucination_2', trial: 0, keyword: 'HALLUCINATION_ERROR', userErrors: ['HALLUCINATION_ERROR after the agent admitted the limitation'], agentErrors: [], sole: true });
  });

  it('a STOP while the agent waits for a confirmation leaves the goal unreached by the simulator\'s doing', async () => {
    const trial = await runToolTaskTrial(byId('base_0'), scripted('asks', [say('Shall I go ahead with that?')]), { user: stopsWith('STOP') });
    expect(trial.reward).toBe(0);
    expect(attributeFailure(trial)).toMatchObject({ keyword: 'STOP', userErrors: ['stopped while the agent waited for an answer, before the goal was reached'], agentErrors: [], sole: true });
    // the same STOP after the agent said it was done is the agent's failure: it did nothing
    const idle = await runToolTaskTrial(byId('base_0'), scripted('idle', [say('Done.')]), { user: stopsWith('STOP') });
    expect(attributeFailure(idle)).toMatchObject({ userErrors: [], sole: false, agentErrors: expect.arrayContaining(['final state differs from the reference']) });
  });

  it('OUT_OF_SCOPE when the agent asked nothing is a user error; after a question it is the agent\'s', async () => {
    const silent = await runToolTaskTrial(byId('base_0'), scripted('silent', [say('Working on it.')]), { user: stopsWith('OUT_OF_SCOPE') });
    expect(attributeFailure(silent)).toMatchObject({ userErrors: ['OUT_OF_SCOPE although the agent asked the user nothing'], sole: true });
    const asked = await runToolTaskTrial(byId('base_0'), scripted('asks-more', [say('What is your account password?')]), { user: stopsWith('OUT_OF_SCOPE') });
    expect(attributeFailure(asked)).toMatchObject({ userErrors: [], sole: false, agentErrors: expect.arrayContaining(['end: OUT_OF_SCOPE']) });
  });

  it('the summary: user errors listed, pass rate and pass^k with the sole-source ones counted as passed, and the hallucination split', async () => {
    const twice = (run: (trial: number) => Promise<TrialResult>) => Promise.all([run(0), run(1)]);
    const admits = () => scripted('admits', [say('Sorry, I cannot open the trunk door: that function is not available to me.')]);
    const results = [
      ...(await twice((trial) => runToolTaskTrial(byId('hallucination_4'), new ReplayAgent(), { trial }))),
      ...(await twice((trial) => runToolTaskTrial(byId('hallucination_2'), admits(), { trial, user: stopsWith('HALLUCINATION_ERROR') }))),
      ...(await twice((trial) => runToolTaskTrial(byId('hallucination_6'), new ReplayAgent({ kind: 'fabricates_removed' }), { trial }))),
    ];
    const summary = summarizeTrials(results);
    expect(summary.misfires.trials.map((t) => [t.taskId, t.trial, t.sole])).toEqual([['hallucination_2', 0, true], ['hallucination_2', 1, true]]);
    expect(summary.misfires).toMatchObject({ failedTrials: 4, soleSource: 2 });
    // 2 of 6 trials passed as scored; 2 of the 4 left without the sole-source ones
    expect(summary.misfires.passRate.included).toBeCloseTo(2 / 6, 12);
    expect(summary.misfires.passRate.excluded).toBeCloseTo(2 / 4, 12);
    // pass^2 over tasks 4, 2, 6: [P, P], [F, F], [F, F] → 1/3; with hallucination_2's sole-source failures counted as passed → 2/3
    expect(summary.misfires.passHatK.hallucination.k).toBe(2);
    expect(summary.misfires.passHatK.hallucination.asScored).toBeCloseTo(1 / 3, 12);
    expect(summary.misfires.passHatK.hallucination.withoutSoleUserErrors).toBeCloseTo(2 / 3, 12);
    // the mislabelled admissions are no hallucination; the two fabrications are
    expect(summary.hallucinationFailures).toMatchObject({ fabrication: 2, concealment: 0 });
    const concealed = await runToolTaskTrial(byId('hallucination_4'), scripted('ignores', [say('I turned the fan up a little for you.')]));
    expect(summarizeTrials([...results, concealed]).hallucinationFailures).toMatchObject({ fabrication: 2, concealment: 1 });
  });
});
