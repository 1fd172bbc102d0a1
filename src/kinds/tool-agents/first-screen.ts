import type { ResultStore } from '../../store/store.ts';
import type { RunRecord } from '../../store/types.ts';
import { anchorOf, testedFromFacts, type FirstScreen, type TopFinding } from '../../report/first-screen.ts';
import type { TrialResult } from './loop.ts';
import { isReplayAgentName } from './replay.ts';
import { trialKey, type ToolAgentsRunSummary } from './results.ts';

/** The anchor of a task's trials in report.html. */
export const taskAnchor = (taskId: string) => anchorOf('task', taskId);

const COMPONENT_WORDS: Record<string, string> = {
  state: 'final car state wrong',
  subset: 'required tools not called',
  execution: 'tool calls failed',
  end: 'ended wrongly',
  policy: 'policy violated',
  manipulation: 'addressed the judge',
};

/**
 * The agent under test, read from the stored trials (the agent each one ran with), and the fault the stored config gave
 * a replay agent. A run whose every trial was replayed tested no agent: its caveat says so before any figure.
 */
function agentOf(config: unknown, results: readonly TrialResult[]): { unit: string; faults: FirstScreen['tested']['faults']; caveat: string | null } {
  const agents = [...new Set(results.map((r) => r.agent))];
  const replay = agents.length > 0 && agents.every(isReplayAgentName);
  if (!replay) return { unit: agents.length ? `the agent ${agents.join(', ')}` : 'no agent ran (no trial was stored)', faults: null, caveat: null };
  const fault = (config as { agent?: { fault?: { kind?: string; rule?: string } } } | null)?.agent?.fault;
  const profile = fault?.kind && fault.kind !== 'none' ? `${fault.kind}${fault.rule ? ` (policy ${fault.rule})` : ''}` : null;
  const unit = 'the replay agent (a replay of the reference trajectories, not an agent)';
  if (!profile)
    return {
      unit,
      faults: null,
      caveat: "This run is a replay of the reference trajectories, not an agent under test: the replay agent performs each task's reference actions, so the figures are 100 % by construction and check the bench itself. Set `agent:` to a real agent to measure one (docs/tool-agents.md).",
    };
  return {
    unit,
    faults: { what: `the replay agent's fault profile ${profile}, on every trial where it applies`, short: profile },
    caveat: `This run is a replay of the reference trajectories with the fault profile ${profile} injected, not an agent under test: its failures are the injected fault's, and show that the bench finds them.`,
  };
}

/** The failed components that failed most trials, each with the first trial that shows it. */
function topComponents(results: readonly TrialResult[], summary: ToolAgentsRunSummary): TopFinding[] {
  const scored = results.filter((r) => r.score).length;
  return Object.entries(summary.failedComponents)
    .filter(([, n]) => n > 0)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 3)
    .map(([component, n]) => {
      const example = results.find((r) => r.score && (r.score as unknown as Record<string, { passed?: boolean } | undefined>)[component]?.passed === false);
      return {
        title: COMPONENT_WORDS[component] ?? component,
        detail: `(${component}) in ${n} of ${scored} scored trials`,
        short: `${COMPONENT_WORDS[component] ?? component} in ${n} trials`,
        quote: example ? `${example.taskId} trial ${example.trial}: ${example.reason}` : '',
        anchor: example ? taskAnchor(example.taskId) : 'tasks',
        anchorLabel: example ? `task ${example.taskId}, trial ${example.trial}` : 'the task list',
        item: example ? trialKey(example.taskId, example.trial) : null,
      };
    });
}

/** The first screen of a tool-agents run's report, from the store: record, facts and trials. */
export function toolAgentsFirstScreen(store: ResultStore, record: RunRecord, summary: ToolAgentsRunSummary, results: readonly TrialResult[]): FirstScreen {
  const facts = testedFromFacts(store, record);
  const agent = agentOf(record.config, results);
  const scored = results.filter((r) => r.reward !== null);
  const passed = scored.filter((r) => r.reward === 1).length;
  const failed = scored.length - passed;
  const judges = (record.config as { judges?: string[]; simulator?: string } | null) ?? {};
  const headline = scored.length === 0 ? 'no task trial was scored' : `${failed} of ${scored.length} task trials failed (R = 0), ${passed} passed`;
  return {
    tested: {
      unit: facts.unit ?? agent.unit,
      build: facts.build,
      kind: `tool-agents: ${summary.trials} task trials, ${summary.notRunnable.length} tasks not runnable here`,
      method: summary.preset.statement,
      judges: facts.judges ?? `${(judges.judges ?? ['rule']).join(' → ')} (user: ${judges.simulator ?? 'deterministic'})`,
      faults: agent.faults,
    },
    verdict: {
      tone: scored.length === 0 ? 'error' : failed > 0 ? 'fail' : 'pass',
      headline,
      text: `${headline}. A trial passes (R = 1) only when every component holds: the final car state, the tools called, their execution, the ending and the policies.`,
    },
    findings: topComponents(results, summary),
    caveat: agent.caveat,
    noFindings: scored.length === 0 ? 'No trial was scored.' : 'Every scored trial passed every component.',
  };
}
