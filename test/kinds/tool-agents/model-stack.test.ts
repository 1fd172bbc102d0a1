import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadToolAgentsConfig } from '../../../src/kinds/tool-agents/config.ts';
import { loadToolAgentsRun } from '../../../src/kinds/tool-agents/results.ts';
import { readRunFacts, RUN_FACTS } from '../../../src/run/run-facts.ts';
import { TIERS_FACT, type TiersRecord } from '../../../src/domain/tiers.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../../helpers/fakeLlmServer.ts';
import { dataPath } from '../../helpers/repoData.ts';
import { DONE_TEXT, planReplay } from '../../../src/kinds/tool-agents/replay.ts';
import { loadTaskFile } from '../../../src/toolenv/tasks.ts';
import { runToolAgentsCampaign } from '../../helpers/run-kinds.ts';

/**
 * The tool-agents kind on the one model stack (#22): its LLM policy judge is built like every model tier — the
 * config's `llm:` settings, an availability check before the run, every call stored with its usage (`llm.calls`),
 * the judge that decided named on each verdict — and its runs honour a time budget like every kind's.
 */
describe('tool-agents on the one model stack', () => {
  let server: FakeLlmServer;
  let dir: string;
  beforeAll(async () => {
    server = await startFakeLlmServer({ models: ['judge-model', 'user-model'], respond: () => ({ content: JSON.stringify({ reasoning: 'the agent asked first', policy_followed: true }), promptTokens: 120, completionTokens: 9 }) });
    dir = mkdtempSync(join(tmpdir(), 'tool-agents-models-'));
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify(JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 4)));
  });
  afterAll(() => server?.close());

  it('stores every policy-judge call with its usage, and every verdict names the judge that decided', async () => {
    const ref = `openai-compat:${server.url}/v1#judge-model`;
    writeFileSync(join(dir, 'llm.yaml'), `kind: tool-agents\nname: llm-judged\ntasks: [tasks.json]\nrepeats: 1\njudges: ["${ref}", rule]\n`);
    const store = ResultStore.open(join(dir, 'llm.db'));
    try {
      const { runId } = await runToolAgentsCampaign(loadToolAgentsConfig(join(dir, 'llm.yaml')), { store });
      const calls = readRunFacts(store, runId, RUN_FACTS.llmCalls).flatMap((fact) => fact.calls);
      expect(server.chatRequests().length).toBeGreaterThan(0);
      expect(calls).toHaveLength(server.chatRequests().length);
      expect(calls.every((call) => call.ref === ref && call.kind === 'judge' && call.error === null)).toBe(true);
      expect(calls.every((call) => call.promptTokens === 120 && call.completionTokens === 9)).toBe(true);
      const verdicts = loadToolAgentsRun(store, runId).results.flatMap((r) => r.score?.policy.judged ?? []);
      const decided = verdicts.filter((v) => v.status !== 'not_judged');
      expect(decided.length).toBeGreaterThan(0);
      // the model answers every rule first, so it decided every verdict (not the joined chain name)
      expect(decided.every((v) => v.judge === ref)).toBe(true);
      expect(readRunFacts(store, runId, RUN_FACTS.invocation)).toHaveLength(1);
      expect((store.runFacts(runId, TIERS_FACT)[0].data as TiersRecord).judges.map((j) => j.ref)).toEqual([ref, 'rule']);
    } finally {
      store.close();
    }
  });

  it("an endpoint agent's own calls are stored with their usage (kind agent) beside the judge's, each trial's in its own transaction", async () => {
    const task = loadTaskFile(join(dir, 'tasks.json'))[0];
    const steps = planReplay(task).steps;
    const agentServer = await startFakeLlmServer({
      models: ['agent-model', 'judge-model'],
      respond: (request) => {
        if (request.body.model === 'judge-model') return { content: JSON.stringify({ reasoning: 'asked first', policy_followed: true }), promptTokens: 120, completionTokens: 9 };
        // the agent replays the task's ground truth, step by step
        const step = steps[(request.body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length];
        const usage = { promptTokens: 300, completionTokens: 21 };
        if (!step) return { content: DONE_TEXT, toolCalls: [], ...usage };
        if (step.kind === 'say') return { content: step.text, toolCalls: [], ...usage };
        return { toolCalls: step.calls.map((c) => ({ name: c.name, arguments: JSON.stringify(c.kwargs) })), ...usage };
      },
    });
    const agentRef = `openai-compat:${agentServer.url}/v1#agent-model`;
    const judgeRef = `openai-compat:${agentServer.url}/v1#judge-model`;
    writeFileSync(join(dir, 'agent.yaml'), `kind: tool-agents\nname: endpoint\ntasks: [tasks.json]\ntaskIds: [${task.task_id}]\nrepeats: 2\nagent: { type: endpoint, model: "${agentRef}" }\njudges: ["${judgeRef}", rule]\n`);
    const store = ResultStore.open(join(dir, 'agent.db'));
    try {
      const run = await runToolAgentsCampaign(loadToolAgentsConfig(join(dir, 'agent.yaml')), { store });
      expect(run.results.map((r) => r.reward)).toEqual([1, 1]);
      const facts = readRunFacts(store, run.runId, RUN_FACTS.llmCalls);
      const calls = facts.flatMap((fact) => fact.calls);
      const requests = agentServer.chatRequests();
      const agentRequests = requests.filter((r) => r.body.model === 'agent-model').length;
      expect(agentRequests).toBeGreaterThan(2);
      // every request the server saw is one recorded call, with the usage it reported and the role it served
      expect(calls).toHaveLength(requests.length);
      expect(calls.filter((c) => c.kind === 'agent')).toEqual(Array.from({ length: agentRequests }, () => expect.objectContaining({ ref: agentRef, promptTokens: 300, completionTokens: 21, error: null })));
      expect(calls.filter((c) => c.kind === 'judge').every((c) => c.ref === judgeRef && c.promptTokens === 120)).toBe(true);
      // each trial's calls are one fact named after it, stored with the trial (an empty end-of-invocation fact closes the run)
      expect(facts.map((f) => f.conversation)).toEqual([`${task.task_id}#0`, `${task.task_id}#1`, null]);
      const verdicts = run.results.flatMap((r) => r.score?.policy.judged ?? []).filter((v) => v.status !== 'not_judged');
      expect(verdicts.length).toBeGreaterThan(0);
      expect(verdicts.every((v) => v.judge === judgeRef)).toBe(true);
      expect(readRunFacts(store, run.runId, RUN_FACTS.invocation)[0].modelHosts.map((h) => h.ref)).toContain(agentRef);
    } finally {
      store.close();
      await agentServer.close();
    }
  });

  it('an unavailable judge model stops the run before anything is stored, naming the model', async () => {
    writeFileSync(join(dir, 'missing.yaml'), `kind: tool-agents\nname: missing\ntasks: [tasks.json]\njudges: ["openai-compat:${server.url}/v1#no-such-model"]\n`);
    const store = ResultStore.open(join(dir, 'missing.db'));
    try {
      await expect(runToolAgentsCampaign(loadToolAgentsConfig(join(dir, 'missing.yaml')), { store })).rejects.toThrow(/no-such-model/);
      expect(store.listRuns()).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('honours a time budget: no trial starts after it, the run is budget_exhausted and resumes to completion', async () => {
    // the run's clock is driven by the test (only Date is faked): the budget runs out right after the third trial,
    // however loaded the machine is, and stands still on resume
    writeFileSync(join(dir, 'budget.yaml'), `kind: tool-agents\nname: budget\ntasks: [${dataPath('carbench/tasks_base.json')}]\nrepeats: 2\nbudgetMinutes: 1\n`);
    const loaded = loadToolAgentsConfig(join(dir, 'budget.yaml'));
    const store = ResultStore.open(join(dir, 'budget.db'));
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      let trials = 0;
      const first = await runToolAgentsCampaign(loaded, { store, onTrial: () => { if (++trials === 3) vi.setSystemTime(Date.now() + 120_000); } });
      expect(first.status).toBe('budget_exhausted');
      const run = store.getRun(first.runId)!;
      // concurrency 1: the trial in flight when the budget ran out is stored, none starts after it
      expect(run.stored).toBe(3);
      expect(run.planned).toBeGreaterThan(3);
      const rest = await runToolAgentsCampaign(loaded, { store, resumeRunId: first.runId });
      expect(rest.status).toBe('completed');
      expect(store.getRun(first.runId)!.stored).toBe(run.planned);
    } finally {
      vi.useRealTimers();
      store.close();
    }
  });
});
