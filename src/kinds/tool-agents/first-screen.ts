import type { ResultStore } from '../../store/store.ts';
import type { RunRecord } from '../../store/types.ts';
import { anchorOf, testedFromFacts, type FirstScreen, type TopFinding } from '../../report/first-screen.ts';
import type { TrialResult } from './loop.ts';
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

/** The agent under test and its injected fault, from the stored config (`agent:`). */
function agentOf(config: unknown, summary: ToolAgentsRunSummary): { unit: string; faults: FirstScreen['tested']['faults'] } {
  const agent = (config as { agent?: { type?: string; fault?: { kind?: string; rule?: string } } } | null)?.agent;
  const replay = agent?.type === 'replay' || agent === undefined;
  const unit = replay ? "the replay agent (it replays each task's reference actions: the figures test the bench, not an agent)" : `the agent ${summary.agent ?? agent?.type ?? 'not recorded'}`;
  const fault = replay && agent?.fault?.kind && agent.fault.kind !== 'none' ? `${agent.fault.kind}${agent.fault.rule ? ` (policy ${agent.fault.rule})` : ''}` : null;
  return { unit, faults: fault ? { what: `the replay agent's fault profile ${fault}, on every trial where it applies`, short: fault } : null };
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
  const agent = agentOf(record.config, summary);
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
    noFindings: scored.length === 0 ? 'No trial was scored.' : 'Every scored trial passed every component.',
  };
}
