import { useState } from 'react';
import type { TrialResult } from '../../kinds/tool-agents/loop.ts';
import type { ToolAgentsRunSummary } from '../../kinds/tool-agents/results.ts';
import { DataTable, ErrorBox, Loading, Pill, Stat, pct, RunHeader } from '../components/common.tsx';
import { ReliabilityTable } from '../components/ReliabilityTable.tsx';
import { ResumeButton } from '../components/CampaignButtons.tsx';
import { useApi } from '../hooks.ts';
import { RunDownloads } from '../components/RunDownloads.tsx';
import { FirstScreenPanel } from '../components/FirstScreenPanel.tsx';
import type { FirstScreen } from '../../report/first-screen.ts';
import { pageItemHref, type KindPage } from '../kind-page.ts';

/** One task of a tool-agents run as GET /api/runs/:id/tool-agents lists it (src/server/tool-runs.ts). */
export interface ToolTaskRow {
  taskId: string;
  taskType: string;
  family: string;
  trials: { key: string; trial: number; outcome: string; reward: 0 | 1 | null; reason: string }[];
}

const outcomePill = (outcome: string) => <Pill kind={outcome === 'pass' ? 'ok' : outcome === 'fail' ? 'fail' : outcome === 'not_runnable' ? 'muted' : 'warn'}>{outcome}</Pill>;
const trialHref = (runId: string, key: string) => `#/runs/${encodeURIComponent(runId)}/tool-agents/${encodeURIComponent(key)}`;

/** A tool-agents run: pass^k / pass@k per task family, policies, and every task with R per trial. */
export function ToolRunView({ runId }: { runId: string }) {
  const data = useApi<{ summary: ToolAgentsRunSummary; tasks: ToolTaskRow[]; firstScreen: FirstScreen }>(`/api/runs/${encodeURIComponent(runId)}/tool-agents`);
  if (data.error) return <ErrorBox message={data.error} />;
  if (!data.data) return <Loading what="tool-agents run" />;
  return <ToolRunPanel runId={runId} summary={data.data.summary} tasks={data.data.tasks} firstScreen={data.data.firstScreen} />;
}

export function ToolRunPanel({ runId, summary, tasks, firstScreen }: { runId: string; summary: ToolAgentsRunSummary; tasks: readonly ToolTaskRow[]; firstScreen: FirstScreen }) {
  const [filter, setFilter] = useState('');
  const shown = tasks.filter((t) => !filter || `${t.taskId} ${t.taskType} ${t.trials.map((x) => x.outcome).join(' ')}`.toLowerCase().includes(filter.toLowerCase()));
  const successes = Object.values(summary.families).reduce((n, f) => n + f.successes, 0);
  const maxTrials = Math.max(0, ...tasks.map((t) => t.trials.length));
  return (
    <section data-testid="tool-run">
      <RunHeader
        title={`Tool-agents run ${summary.run.name}`}
        actions={
          <>
            <a href={`#/compare/${encodeURIComponent(runId)}`}>Compare with… →</a>
            <ResumeButton run={summary.run} />
          </>
        }
      >
        {summary.run.id} · {summary.run.status} · agent {summary.agent ?? 'none ran'} · {summary.preset.statement}
      </RunHeader>
      <RunDownloads runId={runId} />
      <FirstScreenPanel screen={firstScreen} itemHref={(key) => pageItemHref(TOOL_AGENTS_PAGE, runId, key)} />
      <div className="stats">
        <Stat label="task trials" value={`${summary.trials} / ${summary.planned}`} />
        <Stat label="R = 1" value={successes} testId="tool-successes" />
        <Stat label="tasks not runnable" value={summary.notRunnable.length} />
        <Stat label="tasks not loaded" value={summary.invalidTasks.length} />
        <Stat label="premature actions" value={pct(summary.prematureActionRate)} />
        <Stat label="Avg Pass^3 (leaderboard)" value={pct(summary.competition.macroPassHat3)} testId="tool-macro-pass3" />
        <Stat label="user-simulator errors (sole source)" value={summary.misfires.soleSource} testId="tool-misfires" />
        <Stat label="hallucinations: fabrication / concealment" value={`${summary.hallucinationFailures.fabrication} / ${summary.hallucinationFailures.concealment}`} testId="tool-hallucination-split" />
      </div>
      <p className="muted" data-testid="tool-reward-scope">
        {summary.reward.statement}. User-simulator errors: in {summary.misfires.trials.length} of {summary.misfires.failedTrials} failed trials, the sole source in{' '}
        {summary.misfires.soleSource}; pass rate {pct(summary.misfires.passRate.included)} as scored, {pct(summary.misfires.passRate.excluded)} without the sole-source ones.
      </p>
      <ReliabilityTable item="task" runs={Object.entries(summary.families).map(([family, f]) => ({ name: `${family} (${f.runnableTasks}/${f.tasks} runnable)`, reliability: f.reliability }))} />
      <h2>Task types (pass^k / pass@k at the largest k)</h2>
      <DataTable headers={['Task type', 'Runnable / tasks', 'R = 1 / trials', 'pass^k (unbiased · first k)', 'pass@k (unbiased · first k)']} testId="tool-task-types">
        {Object.entries(summary.taskTypes).map(([type, t]) => {
          const last = t.reliability.byK.at(-1);
          return (
            <tr key={type}>
              <td>{type}</td>
              <td>{`${t.runnableTasks} / ${t.tasks}`}</td>
              <td>{`${t.successes} / ${t.trials}`}</td>
              <td>{last ? `k=${last.k}: ${pct(last.passHatK.unbiased)} · ${pct(last.passHatK.firstK)}` : '–'}</td>
              <td>{last ? `${pct(last.passAtK.unbiased)} · ${pct(last.passAtK.firstK)}` : '–'}</td>
            </tr>
          );
        })}
      </DataTable>
      <h2>Policies and components</h2>
      <DataTable headers={['What', 'Trials']} testId="tool-counts">
        {[
          ...Object.entries(summary.policyViolations).map(([rule, n]) => [`policy ${rule} violated`, n] as const),
          ...Object.entries(summary.policyNotJudged).map(([rule, n]) => [`policy ${rule} not judged`, n] as const),
          ...Object.entries(summary.failedComponents).map(([c, n]) => [`component ${c} failed`, n] as const),
        ].map(([what, n]) => (
          <tr key={what}>
            <td>{what}</td>
            <td>{n}</td>
          </tr>
        ))}
      </DataTable>
      {summary.invalidTasks.length > 0 && (
        <>
          <h2>Tasks not loaded</h2>
          <ul>
            {summary.invalidTasks.map((t) => (
              <li key={`${t.where}-${t.taskId}-${t.position}`}>
                {t.where} {t.taskId}: {t.reason}
              </li>
            ))}
          </ul>
        </>
      )}
      <h2>Tasks</h2>
      <input placeholder="filter by task id, type, outcome…" value={filter} onChange={(e) => setFilter(e.target.value)} />
      <DataTable headers={['Task', 'Type', ...Array.from({ length: maxTrials }, (_, i) => `R trial ${i}`)]} testId="tool-tasks">
        {shown.map((t) => (
          <tr key={t.taskId}>
            <td>{t.taskId}</td>
            <td>{t.taskType}</td>
            {t.trials.map((x) => (
              <td key={x.key} title={x.reason}>
                <a href={trialHref(runId, x.key)}>{x.reward ?? '–'}</a> {x.outcome !== 'pass' && outcomePill(x.outcome)}
              </td>
            ))}
          </tr>
        ))}
      </DataTable>
    </section>
  );
}

/** One task trial: components, state diff, policies and the trajectory with every tool call and result. */
export function ToolTrialView({ runId, trialKey }: { runId: string; trialKey: string }) {
  const data = useApi<{ key: string; outcome: string; result: TrialResult }>(`/api/runs/${encodeURIComponent(runId)}/tool-agents/trials/${encodeURIComponent(trialKey)}`);
  if (data.error) return <ErrorBox message={data.error} />;
  if (!data.data) return <Loading what="task trial" />;
  return <ToolTrialPanel runId={runId} outcome={data.data.outcome} result={data.data.result} />;
}

const COMPONENTS = ['state', 'subset', 'execution', 'end', 'policy', 'manipulation', 'hallucination', 'disambiguation'] as const;
const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

export function ToolTrialPanel({ runId, outcome, result: r }: { runId: string; outcome: string; result: TrialResult }) {
  const s = r.score;
  return (
    <section data-testid="tool-trial">
      <div className="title-row">
        <h1>
          {r.taskId} trial {r.trial}
        </h1>
        <a href={`#/runs/${encodeURIComponent(runId)}/tool-agents`}>← run</a>
      </div>
      <p>
        {outcomePill(outcome)} R = {r.reward ?? 'n/a'} · {r.taskType} · {r.reason} · ended by {r.endedBy} · agent {r.agent} · user {r.userSimulator}
      </p>
      {s && (
        <>
          <h2>Components</h2>
          <DataTable headers={COMPONENTS} testId="trial-components">
            <tr>
              {COMPONENTS.map((c) => (
                <td key={c}>{!s[c].applies ? 'n/a' : s[c].passed ? <Pill kind="ok">pass</Pill> : <Pill kind="fail">FAIL</Pill>}</td>
              ))}
            </tr>
          </DataTable>
          <h2>State diff (expected = the ground-truth replay)</h2>
          {s.state.finalDiff.length === 0 ? (
            <p className="muted">the final state matches</p>
          ) : (
            <DataTable headers={['Field', 'Expected', 'Got']} testId="state-diff">
              {s.state.finalDiff.map((d) => (
                <tr key={d.field}>
                  <td>{d.field}</td>
                  <td>{JSON.stringify(d.expected)}</td>
                  <td>{JSON.stringify(d.actual)}</td>
                </tr>
              ))}
            </DataTable>
          )}
          {s.state.offPath.length > 0 && <p className="muted">{s.state.offPath.length} intermediate state(s) off the reference path</p>}
          <h2>Policies</h2>
          <ul data-testid="trial-policies">
            {s.policy.code.map((c) => (
              <li key={`code-${c.rule}-${c.message}`}>
                {c.rule} violated (code-checked): {c.message}
              </li>
            ))}
            {s.policy.judged.map((j) => (
              <li key={`judged-${j.rule}`}>
                {j.rule} {j.status} ({j.judge}){j.reasoning ? `: ${j.reasoning}` : ''}
              </li>
            ))}
            {s.policy.code.length + s.policy.judged.length === 0 && <li className="muted">no policy applied</li>}
          </ul>
        </>
      )}
      {[...r.failures, ...r.anomalies].length > 0 && (
        <ul>
          {[...r.failures, ...r.anomalies].map((f, i) => (
            <li key={i}>{f}</li>
          ))}
        </ul>
      )}
      <h2>Trajectory</h2>
      <table className="table" data-testid="trajectory">
        <tbody>
          {r.messages.flatMap((m, i) => {
            if (m.role === 'user') return [<tr key={i}><td>user</td><td colSpan={2}>{m.content}</td></tr>];
            if (m.role === 'tool') return [<tr key={i}><td>← {m.name}</td><td>{m.status}</td><td><code>{m.content}</code></td></tr>];
            return [
              ...(m.content ? [<tr key={`${i}-text`}><td>agent</td><td colSpan={2}>{m.content}</td></tr>] : []),
              ...m.toolCalls.map((c) => <tr key={`${i}-${c.id}`}><td>agent → tool</td><td><b>{c.name}</b></td><td><code>{show(c.arguments)}</code></td></tr>),
            ];
          })}
        </tbody>
      </table>
    </section>
  );
}

/** The tool-agents page (a kind's view names it `tool-agents`): the run at `#/runs/<id>/tool-agents`, a trial at `…/tool-agents/<key>`. */
export const TOOL_AGENTS_PAGE: KindPage = {
  name: 'tool-agents',
  run: 'tool-agents',
  items: 'tool-agents',
  RunView: ToolRunView,
  ItemView: ({ runId, itemKey }) => <ToolTrialView runId={runId} trialKey={itemKey} />,
};
