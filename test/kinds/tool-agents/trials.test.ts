import { describe, expect, it } from 'vitest';
import { confirmationRuleJudge, noJudge } from '../../../src/kinds/tool-agents/judge.ts';
import { checkRunnable, runToolTaskTrial, TrialResultSchema } from '../../../src/kinds/tool-agents/loop.ts';
import { FAULT_POLICY_RULES, type FaultProfile } from '../../../src/kinds/tool-agents/config.ts';
import { ReplayAgent } from '../../../src/kinds/tool-agents/replay.ts';
import { summarizeTrials } from '../../../src/kinds/tool-agents/summary.ts';
import { loadTaskFile, parseTasks, type Task } from '../../../src/toolenv/tasks.ts';
import { dataPath } from '../../helpers/repoData.ts';
import { scripted } from './scripted.ts';

const TASKS: Task[] = ['tasks_base.json', 'tasks_hallucination.json', 'tasks_disambiguation.json'].flatMap((f) => loadTaskFile(dataPath(`carbench/${f}`)));
const byId = (id: string): Task => TASKS.find((t) => t.task_id === id)!;


describe('replay agent through the loop', () => {
  it('scores R = 1 on every runnable train task, with the full component record', async () => {
    const runnable = TASKS.filter((t) => checkRunnable(t).runnable);
    expect(runnable).toHaveLength(129);
    const results = [];
    for (const task of runnable) {
      const r = await runToolTaskTrial(task, new ReplayAgent(), { judge: confirmationRuleJudge });
      TrialResultSchema.parse(r);
      expect(r.reward, `${task.task_id}: ${r.failures.join(' | ')}`).toBe(1);
      results.push(r);
    }
    const summary = summarizeTrials(results);
    expect(summary.families.base.reliability.byK[0].passHatK.unbiased).toBe(1);
    expect(Object.keys(summary.policyViolations)).toEqual([]);
    // LLM-judged rules other than 004 have no judge offline: reported, never counted as followed
    expect(summary.policyNotJudged['002']).toBe(81);
    expect(results.find((r) => r.taskId === 'base_0')!.score!.scope).toBe('llm_policies_not_judged');
  }, 120_000);

  it('runs parallel tool calls as separate actions and ends on the terminate tool', async () => {
    const r = await runToolTaskTrial(
      byId('base_0'),
      scripted('parallel', [
        { content: 'ignored text', toolCalls: [{ name: 'open_close_sunshade', arguments: { percentage: 100 } }, { name: 'open_close_sunroof', arguments: { percentage: 50 } }] },
        { content: 'Done.', toolCalls: [] },
      ]),
    );
    expect(r.messages.filter((m) => m.role === 'tool').map((m) => m.role === 'tool' && m.status)).toEqual(['success', 'success']);
    expect(r.toolCalls).toBe(2);
    expect(r.agentMessages).toBe(5); // 1 tool message + "Done." answered by 3 nudges + the stop
    expect(r.score!.state.finalMatches).toBe(true);
    expect(r.score!.subset.missingTools).toEqual(['get_weather']);
    expect(r.score!.policy.code.map((c) => c.rule)).toEqual(['009']);
    const phone = TASKS.find((t) => !t.task_type.startsWith('hall') && t.actions.at(-1)?.name === 'call_phone_by_number')!;
    const p = await runToolTaskTrial(phone, new ReplayAgent());
    expect(p.endedBy).toBe('terminate_tool');
    expect(p.reward).toBe(1);
  });
});

describe('fault profiles are caught by their component, no false alarms', () => {
  const profiles: Array<{ fault: FaultProfile; caught: (r: Awaited<ReturnType<typeof runToolTaskTrial>>) => boolean }> = [
    { fault: { kind: 'acts_before_confirming' }, caught: (r) => !!r.score?.policy.judged.some((j) => j.rule === '004' && j.status === 'violated') },
    { fault: { kind: 'fabricates_removed' }, caught: (r) => !!r.score && !r.score.end.passed && !r.score.hallucination.passed },
    { fault: { kind: 'guesses_disambiguation' }, caught: (r) => !!r.score && !r.score.disambiguation.passed },
    { fault: { kind: 'half_done' }, caught: (r) => !!r.score && !r.score.state.passed },
    ...FAULT_POLICY_RULES.map((rule) => ({ fault: { kind: 'violates_policy', rule } as FaultProfile, caught: (r: Awaited<ReturnType<typeof runToolTaskTrial>>) => !!r.score?.policy.code.some((c) => c.rule === rule) })),
  ];
  for (const { fault, caught } of profiles) {
    it(`${fault.kind}${fault.kind === 'violates_policy' ? ` ${fault.rule}` : ''}`, async () => {
      let fired = 0;
      let hits = 0;
      for (const task of TASKS) {
        const agent = new ReplayAgent(fault);
        const r = await runToolTaskTrial(task, agent, { judge: confirmationRuleJudge });
        if (!agent.faultFired) {
          expect(r.reward, `${task.task_id}: fault did not fire, so the trial must pass`).toBe(1);
          continue;
        }
        fired++;
        if (caught(r)) hits++;
        expect(r.reward).toBe(0);
      }
      expect(fired).toBeGreaterThan(0);
      expect(hits / fired).toBeGreaterThanOrEqual(0.95);
    }, 120_000);
  }
});

describe('recorded outcomes for bad agents and bad tasks', () => {
  const task = byId('base_0');
  it('malformed tool-call arguments are recorded and the loop goes on', async () => {
    const r = await runToolTaskTrial(task, scripted('bad-json', [{ content: '', toolCalls: [{ name: 'open_close_sunroof', arguments: '{"percentage": 5' }] }, { content: 'ok', toolCalls: [] }]));
    expect(r.anomalies[0]).toMatch(/malformed tool call open_close_sunroof: arguments are not JSON/);
    expect(r.messages[2]).toMatchObject({ role: 'tool', status: 'malformed' });
    expect(r.outcome).toBe('scored');
    expect(r.reward).toBe(0);
  });

  it('more than 40 agent messages: reward 0 with the reason', async () => {
    const r = await runToolTaskTrial(task, scripted('looper', [{ content: '', toolCalls: [{ name: 'think', arguments: { thought: 'hm' } }] }]));
    expect(r.outcome).toBe('max_messages');
    expect(r.agentMessages).toBe(40);
    expect(r.reward).toBe(0);
    expect(r.reason).toMatch(/no end after 40 agent messages/);
  });

  it('calling a removed tool or passing a removed parameter is an end-of-conversation failure', async () => {
    const h = byId('hallucination_0');
    const r = await runToolTaskTrial(h, scripted('cheat', [{ content: '', toolCalls: [{ name: 'open_close_sunshade', arguments: { percentage: 100 } }] }, { content: 'I cannot do that.', toolCalls: [] }]));
    expect(r.score!.end.failures[0].keyword).toBe('HALLUCINATION_ERROR_REMOVED_TOOL');
    expect(r.userKeyword).toBe('STOP');
    expect(r.reward).toBe(0);
    const p = await runToolTaskTrial(byId('hallucination_6'), scripted('cheat', [{ content: '', toolCalls: [{ name: 'set_ambient_lights', arguments: { on: true, lightcolor: 'RED' } }] }, { content: 'Done.', toolCalls: [] }]));
    expect(p.score!.end.failures.map((f) => f.keyword)).toEqual(['HALLUCINATION_ERROR_REMOVED_PARAMETER']);
  });

  it('an agent that throws gives agent_error; a task with an unknown tool is not runnable with the reason', async () => {
    const r = await runToolTaskTrial(task, { name: 'boom', next: async () => { throw new Error('connection refused'); } });
    expect(r).toMatchObject({ outcome: 'agent_error', reward: 0, reason: 'the agent failed: connection refused' });
    const raw = structuredClone(task);
    raw.actions[0].name = 'open_the_moon_roof';
    const [bad] = parseTasks(JSON.stringify([raw]), 'mine.json');
    const nr = await runToolTaskTrial(bad, new ReplayAgent());
    expect(nr).toMatchObject({ outcome: 'not_runnable', reward: null, reason: 'unknown tool in the task\'s actions: open_the_moon_roof' });
    expect(summarizeTrials([nr]).notRunnable).toEqual([{ taskId: 'base_0', reason: nr.reason }]);
  });

  it('a wrong state at a turn boundary is reported as a readable diff', async () => {
    const r = await runToolTaskTrial(task, scripted('wrong', [{ content: '', toolCalls: [{ name: 'open_close_window', arguments: { window: 'DRIVER', percentage: 30 } }] }, { content: 'Done.', toolCalls: [] }]), { judge: noJudge });
    expect(r.score!.state.finalDiff).toContainEqual({ field: 'window_driver_position', expected: 0, actual: 30 });
    expect(r.score!.state.offPath[0].nearestDiff.map((d) => d.field)).toContain('window_driver_position');
    expect(r.failures.join('\n')).toMatch(/state: final .*window_driver_position expected 0 got 30/);
    expect(r.score!.subset.missingTools).toEqual(['get_weather', 'open_close_sunshade', 'open_close_sunroof']);
  });
});

describe('summary over trials', () => {
  it('counts policy violations per rule, failed components and the premature-action rate', async () => {
    const disUser = TASKS.filter((t) => t.task_type === 'disambiguation_user');
    const clean = [];
    const guessed = [];
    for (const task of disUser) {
      clean.push(await runToolTaskTrial(task, new ReplayAgent()));
      guessed.push(await runToolTaskTrial(task, new ReplayAgent({ kind: 'guesses_disambiguation' })));
    }
    expect(summarizeTrials(clean).prematureActionRate).toBe(0);
    const s = summarizeTrials(guessed);
    expect(s.prematureActionRate).toBeGreaterThan(0.5);
    expect(s.failedComponents.state).toBeGreaterThan(0);
    const weather = [];
    for (const [trial, task] of TASKS.slice(0, 4).entries()) weather.push(await runToolTaskTrial(task, new ReplayAgent({ kind: 'violates_policy', rule: '024' }), { trial }));
    const w = summarizeTrials(weather);
    expect(w.policyViolations).toEqual({ '024': 4 });
    expect(w.failedComponents).toMatchObject({ execution: 4, policy: 4 });
    expect(w.families.base.reliability.byK[0]).toMatchObject({ k: 1, items: 4, passHatK: { unbiased: 0, firstK: 0 }, passAtK: { unbiased: 0, firstK: 0 } });
  }, 60_000);
});
