import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TrialResult } from './loop.ts';
import { toolTrialsJunit } from './report.ts';
import { computeToolAgentsSummary, trialOutcomeWord, type ToolAgentsRunSummary } from './results.ts';
import type { ResultStore } from '../../store/store.ts';
import { escapeHtml as h } from '../../report/escape.ts';
import { page } from '../../report/html.ts';
import { reliabilityTableHtml } from '../../report/reliability-section.ts';
import { writeAtomically } from '../../report/write.ts';
import { DRILL_DOWN_LIMIT, firstScreenHtml, type FirstScreen } from '../../report/first-screen.ts';
import { taskAnchor, toolAgentsFirstScreen } from './first-screen.ts';

/**
 * The outputs of a tool-agents run (docs/tool-agents.md, "Campaign"), all read back from the store:
 * summary.json (pass^k / pass@k per task family in both conventions, per-policy violations, premature-action
 * rate, runnable and not-runnable counts, tasks that could not be loaded), report.html (those figures, then per
 * task its trials: the trajectory with tool calls and results, the state diff, the failed components, the
 * policies) and junit.xml (one test case per task trial; a task that is not runnable is a skipped case).
 * The figures come from src/kinds/tool-agents/results.ts.
 */

const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
const badge = (word: string) => `<span class="badge b-${h(word === 'pass' ? 'pass' : word === 'fail' ? 'fail' : word === 'not_runnable' ? 'inconclusive' : 'error')}">${h(word)}</span>`;
const json = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
const COMPONENTS = ['state', 'subset', 'execution', 'end', 'policy', 'manipulation', 'hallucination', 'disambiguation'] as const;

function trajectoryHtml(r: TrialResult): string {
  const rows = r.messages.flatMap((m) => {
    if (m.role === 'user') return [`<tr><td>user</td><td colspan="2">${h(m.content)}</td></tr>`];
    if (m.role === 'tool') return [`<tr><td class="muted">← ${h(m.name)}</td><td>${h(m.status)}</td><td><code>${h(m.content)}</code></td></tr>`];
    const calls = m.toolCalls.map((c) => `<tr><td>agent → tool</td><td><b>${h(c.name)}</b>${c.malformed ? ' <span class="err">malformed</span>' : ''}</td><td><code>${h(json(c.arguments))}</code></td></tr>`);
    return m.content ? [`<tr><td>agent</td><td colspan="2">${h(m.content)}</td></tr>`, ...calls] : calls;
  });
  return `<table class="traj"><thead><tr><th>who</th><th>tool / status</th><th>content, arguments or result</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function diffTable(title: string, diff: readonly { field: string; expected: unknown; actual: unknown }[]): string {
  if (!diff.length) return '';
  return `<h4>${h(title)}</h4><table><thead><tr><th>field</th><th>expected</th><th>got</th></tr></thead><tbody>${diff.map((d) => `<tr><td>${h(d.field)}</td><td><code>${h(JSON.stringify(d.expected))}</code></td><td><code>${h(JSON.stringify(d.actual))}</code></td></tr>`).join('')}</tbody></table>`;
}

function trialHtml(r: TrialResult): string {
  const head = `<p><b>trial ${r.trial}</b> ${badge(trialOutcomeWord(r))} R = ${r.reward ?? 'n/a'} · ${h(r.reason)} · ended by ${h(r.endedBy)} · ${r.agentMessages} agent messages, ${r.toolCalls} tool calls</p>`;
  if (!r.score) return `${head}${r.anomalies.length ? `<ul>${r.anomalies.map((a) => `<li class="err">${h(a)}</li>`).join('')}</ul>` : ''}${r.messages.length ? trajectoryHtml(r) : ''}`;
  const s = r.score;
  const flag = (c: { applies: boolean; passed: boolean }) => (!c.applies ? '<span class="muted">n/a</span>' : c.passed ? 'pass' : '<b class="err">FAIL</b>');
  const components = `<table><thead><tr>${COMPONENTS.map((c) => `<th>${c}</th>`).join('')}</tr></thead><tbody><tr>${COMPONENTS.map((c) => `<td>${flag(s[c])}</td>`).join('')}</tr></tbody></table>`;
  const policies = [
    ...s.policy.code.map((c) => `<li class="err">${h(c.rule)} violated (code-checked): ${h(c.message)}</li>`),
    ...s.policy.judged.map((j) => `<li${j.status === 'violated' ? ' class="err"' : ''}>${h(j.rule)} ${h(j.status)} (${h(j.judge)})${j.reasoning ? `: ${h(j.reasoning)}` : ''}</li>`),
  ];
  const details = [
    ...s.subset.missingTools.map((t) => `missing tool: ${t}`),
    ...s.execution.errors.map((e) => `tool error: ${e}`),
    ...s.end.failures.map((f) => `${f.keyword}: ${f.reason}`),
    ...r.failures,
    ...r.anomalies.map((a) => `anomaly: ${a}`),
  ];
  return `${head}
<h4>components</h4>${components}
${diffTable('final state diff (expected = the ground-truth replay)', s.state.finalDiff)}
${s.state.offPath.map((o) => diffTable(`intermediate state after step ${o.boundary} is off the reference path; diff to the nearest reference state`, o.nearestDiff)).join('')}
${policies.length ? `<h4>policies</h4><ul>${policies.join('')}</ul>` : '<p class="muted">no policy applied or was violated</p>'}
${details.length ? `<h4>why</h4><ul>${details.map((d) => `<li>${h(d)}</li>`).join('')}</ul>` : ''}
<h4>trajectory</h4>${trajectoryHtml(r)}`;
}

/** Trials grouped by task, tasks in first-trial order. */
function byTask(results: readonly TrialResult[]): TrialResult[][] {
  const tasks = new Map<string, TrialResult[]>();
  for (const r of results) tasks.set(r.taskId, [...(tasks.get(r.taskId) ?? []), r]);
  return [...tasks.values()].map((trials) => [...trials].sort((a, b) => a.trial - b.trial));
}

const TASK_CSS = `<style>.conv.t summary,.conv.t .row,.head.t{grid-template-columns:minmax(200px,1.6fr) 1.4fr 100px 3fr}.traj td{vertical-align:top}.traj code,.conv.t code{white-space:pre-wrap;word-break:break-word}</style>`;

function taskHtml(trials: readonly TrialResult[], detailed: boolean): string {
  const first = trials[0];
  const words = trials.map(trialOutcomeWord);
  // all trials pass → pass; any R = 0 → fail; otherwise the first other outcome (not_runnable, agent_error, …)
  const overall = words.every((w) => w === 'pass') ? 'pass' : words.includes('fail') ? 'fail' : words.find((w) => w !== 'pass')!;
  const perTrial = trials.map((t) => `R${t.trial}=${t.reward ?? '–'}`).join(' ');
  const cells = `<span><b>${h(first.taskId)}</b></span><span class="muted">${h(first.taskType)}</span><span>${badge(overall)}</span><span>${h(perTrial)}${first.outcome === 'not_runnable' ? ` · ${h(first.reason)}` : ''}</span>`;
  const attrs = `class="conv t" id="${h(taskAnchor(first.taskId))}" data-outcome="${h(overall)}" data-search="${h(`${first.taskId} ${first.taskType}`.toLowerCase())}"`;
  if (!detailed) return `<div ${attrs}><div class="row">${cells}</div></div>`;
  return `<details ${attrs}><summary>${cells}</summary><div class="body">${trials.map(trialHtml).join('<hr>')}</div></details>`;
}

/** The failed trials the user simulator caused, with the agent's own errors beside them (CAR-bench's user-error attribution). */
function userErrorPanel(misfires: ToolAgentsRunSummary['misfires']): string {
  const rows = misfires.trials.map((m) => `<tr><td>${h(m.taskId)}</td><td class="n">${m.trial}</td><td>${h(m.keyword ?? '–')}</td><td>${h(m.userErrors.join('; '))}</td><td>${m.sole ? 'sole source' : h(m.agentErrors.join('; '))}</td></tr>`).join('');
  const table = misfires.trials.length ? `<table><thead><tr><th>task</th><th class="n">trial</th><th>stop</th><th>user error</th><th>agent errors</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">none</p>';
  const passHatK = Object.entries(misfires.passHatK).map(([family, p]) => `${h(family)} pass^${p.k} ${pct(p.asScored)} → ${pct(p.withoutSoleUserErrors)}`).join(', ');
  return `<div class="panel"><h3>User-simulator errors</h3>${table}<p class="note">${misfires.trials.length} of ${misfires.failedTrials} failed trial(s) carry a user-simulator error, ${misfires.soleSource} with no agent error (sole source). Pass rate as scored: ${pct(misfires.passRate.included)}; without the sole-source ones: ${pct(misfires.passRate.excluded)}. With them counted as passed: ${passHatK || 'n/a'}.</p></div>`;
}

/** Failed hallucination trials: fabrication (the removed part used or spoken of as if there) vs concealment (ignored). */
function hallucinationPanel(split: ToolAgentsRunSummary['hallucinationFailures']): string {
  const total = split.fabrication + split.concealment;
  const bar = (n: number, colour: string) => (total ? `<span style="display:inline-block;height:12px;width:${(200 * n) / total}px;background:${colour}"></span>` : '');
  const rows = split.trials.map((t) => `<tr><td>${h(t.taskId)}</td><td class="n">${t.trial}</td><td>${h(t.kind)}</td><td>${h(t.evidence)}</td></tr>`).join('');
  const table = total ? `<table><thead><tr><th>task</th><th class="n">trial</th><th>kind</th><th>evidence</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">no failed hallucination trial</p>';
  return `<div class="panel"><h3>Hallucinations: fabrication vs concealment</h3><p>fabrication ${split.fabrication} ${bar(split.fabrication, '#c53030')}<br>concealment ${split.concealment} ${bar(split.concealment, '#d69e2e')}</p>${table}</div>`;
}

export function toolAgentsReportHtml(summary: ToolAgentsRunSummary, results: readonly TrialResult[], drillDownLimit = DRILL_DOWN_LIMIT, firstScreen?: FirstScreen): string {
  const { run } = summary;
  const card = (value: string, key: string) => `<div class="card"><div class="v">${value}</div><div class="k">${h(key)}</div></div>`;
  const families = Object.entries(summary.families);
  const cards = [
    card(`${summary.trials}/${summary.planned}`, 'task trials run'),
    card(String(summary.outcomes.scored ?? 0), 'scored'),
    card(String(results.filter((r) => r.reward === 1).length), 'R = 1'),
    card(String(summary.notRunnable.length), 'tasks not runnable here'),
    card(String(summary.invalidTasks.length), 'tasks not loaded'),
    card(pct(summary.prematureActionRate), 'premature actions (disambiguation_user)'),
    card(pct(summary.competition.macroPassHat3), 'Avg Pass^3 (CAR-bench leaderboard)'),
    card(`${summary.misfires.soleSource} / ${summary.misfires.trials.length}`, 'user-simulator errors (sole source / all)'),
    card(`${summary.hallucinationFailures.fabrication} / ${summary.hallucinationFailures.concealment}`, 'hallucinations: fabrication / concealment'),
  ].join('');
  const scopeHtml = `<h2>R, its scope, user-simulator errors and hallucinations</h2><div class="grid"><div class="panel"><h3>R and its scope</h3><p>${h(summary.reward.statement)}.</p></div>
${userErrorPanel(summary.misfires)}${hallucinationPanel(summary.hallucinationFailures)}
<div class="panel"><h3>Avg Pass^3 (CAR-bench leaderboard)</h3><p>${pct(summary.competition.macroPassHat3)}: the unweighted mean of ${Object.entries(summary.competition.byFamily).map(([f, v]) => `${h(f)} ${pct(v)}`).join(', ')} (Pass^3 of the first three trials of each task).</p></div></div>`;
  const familyRows = families.map(([family, f]) => `<tr><td>${h(family)}</td><td class="n">${f.tasks}</td><td class="n">${f.runnableTasks}</td><td class="n">${f.trials}</td><td class="n">${f.successes}</td><td class="n">${f.reliability.rdi === null ? '–' : f.reliability.rdi.toFixed(3)}</td></tr>`).join('');
  const typeRows = Object.entries(summary.taskTypes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, t]) => {
      const last = t.reliability.byK.at(-1);
      const cell = (x: number | undefined) => `<td class="n">${x === undefined ? '–' : pct(x)}</td>`;
      return `<tr><td>${h(type)}</td><td class="n">${t.runnableTasks}/${t.tasks}</td><td class="n">${t.successes}/${t.trials}</td><td class="n">${last?.k ?? '–'}</td>${cell(last?.passHatK.unbiased)}${cell(last?.passHatK.firstK)}${cell(last?.passAtK.unbiased)}${cell(last?.passAtK.firstK)}</tr>`;
    })
    .join('');
  const reliability = families.map(([family, f]) => `<div class="panel"><h3>${h(family)}</h3>${reliabilityTableHtml(f.reliability, 'task')}</div>`).join('');
  const countTable = (title: string, counts: Record<string, number>) =>
    Object.keys(counts).length ? `<div class="panel"><h3>${h(title)}</h3><table><tbody>${Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `<tr><td>${h(k)}</td><td class="n">${v}</td></tr>`).join('')}</tbody></table></div>` : `<div class="panel"><h3>${h(title)}</h3><p class="muted">none</p></div>`;
  const notLoaded = summary.invalidTasks.length ? `<h2>Tasks not loaded</h2><div class="panel"><table><thead><tr><th>where</th><th>task</th><th>reason</th></tr></thead><tbody>${summary.invalidTasks.map((t) => `<tr><td>${h(t.where)}</td><td>${h(t.taskId)}</td><td>${h(t.reason)}</td></tr>`).join('')}</tbody></table></div>` : '';
  const notRunnable = summary.notRunnable.length ? `<h2>Tasks not runnable here</h2><div class="panel"><table><thead><tr><th>task</th><th>reason</th></tr></thead><tbody>${summary.notRunnable.map((t) => `<tr><td>${h(t.taskId)}</td><td>${h(t.reason)}</td></tr>`).join('')}</tbody></table></div>` : '';
  const tasks = byTask(results);
  const capped = tasks.length > drillDownLimit ? `<p class="muted">Trial detail is included for the first ${drillDownLimit} of ${tasks.length} tasks; the store holds all of them (icabench export).</p>` : '';
  const body = `${TASK_CSS}${firstScreen ? firstScreenHtml(firstScreen) : ''}
<div class="cards">${cards}</div><p class="muted">agent: ${h(summary.agent ?? 'none ran')} · method: ${h(summary.preset.statement)}</p>
<h2>Task families</h2><div class="panel"><table><thead><tr><th>family</th><th class="n">tasks</th><th class="n">runnable</th><th class="n">trials</th><th class="n">R = 1</th><th class="n">RDI</th></tr></thead><tbody>${familyRows}</tbody></table>
<p class="note">pass^k / pass@k are over the runnable tasks of a family. RDI: mean of pass@k − pass^k (first k) over k.</p></div>
<h2>Task types</h2><div class="panel"><table><thead><tr><th>task type</th><th class="n">runnable / tasks</th><th class="n">R = 1 / trials</th><th class="n">k</th><th class="n">pass^k unbiased</th><th class="n">pass^k first k</th><th class="n">pass@k unbiased</th><th class="n">pass@k first k</th></tr></thead><tbody>${typeRows}</tbody></table>
<p class="note">At the largest k (the run's trials per task); every k per family below, and per type in summary.json (<code>taskTypes</code>).</p></div>
<h2>Reliability per family (pass^k / pass@k)</h2><div class="grid">${reliability}</div>
${scopeHtml}
<h2>Policies and components</h2><div class="grid">${countTable('policy violations (trials)', summary.policyViolations)}${countTable('LLM-judged policies not judged (trials; never counted as followed)', summary.policyNotJudged)}${countTable('failed components (trials)', summary.failedComponents)}${countTable('trial outcomes', summary.outcomes)}</div>
${notLoaded}${notRunnable}
<h2 id="tasks">Tasks</h2>
<p class="muted">Click a task to open its trials: components, state diff against the ground-truth replay, policies, and the trajectory with every tool call and result.</p>
${capped}
<div class="toolbar"><input id="conv-filter" placeholder="filter by task id or type…" size="40">
<select id="conv-outcome"><option value="">all outcomes</option><option>pass</option><option>fail</option><option>not_runnable</option><option>agent_error</option><option>max_messages</option><option>simulator_error</option></select></div>
<div class="head t"><span>task</span><span>type</span><span>outcome</span><span>R per trial</span></div>
${tasks.map((trials, i) => taskHtml(trials, i < drillDownLimit)).join('\n')}`;
  const subtitle = `${h(run.name)} · tool-agents run ${h(run.id)} · ${h(run.status)} · started ${h(run.createdAt)}${run.finishedAt ? ` · finished ${h(run.finishedAt)}` : ''}`;
  return page(`icabench tool-agents report: ${run.name}`, subtitle, body, { charts: {} });
}

/** summary.json's text: the same bytes from `icabench run`, `icabench report` and the bench app. */
export function toolAgentsSummaryJson(summary: ToolAgentsRunSummary): string {
  return `${JSON.stringify(summary, null, 2)}\n`;
}

export interface ToolAgentsFiles {
  summary: string;
  html: string;
  junit: string;
}

/** Writes summary.json, report.html and junit.xml of a stored tool-agents run into `outDir`. */
export function writeToolAgentsOutputs(store: ResultStore, runId: string, outDir: string): { summary: ToolAgentsRunSummary; files: ToolAgentsFiles; firstScreen: FirstScreen } {
  const { summary, results } = computeToolAgentsSummary(store, runId);
  const firstScreen = toolAgentsFirstScreen(store, store.getRun(runId)!, summary, results);
  mkdirSync(outDir, { recursive: true });
  const files = { summary: join(outDir, 'summary.json'), html: join(outDir, 'report.html'), junit: join(outDir, 'junit.xml') };
  writeAtomically(files.summary, toolAgentsSummaryJson(summary));
  writeAtomically(files.junit, toolTrialsJunit(results, `icabench tool-agents ${summary.run.name}`));
  writeAtomically(files.html, toolAgentsReportHtml(summary, results, DRILL_DOWN_LIMIT, firstScreen));
  return { summary, files, firstScreen };
}
