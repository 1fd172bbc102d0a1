import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadToolAgentsConfig } from '../../../src/kinds/tool-agents/config.ts';
import { loadToolAgentsRun, TOOL_AGENTS_KIND, ToolAgentsRunSummarySchema } from '../../../src/kinds/tool-agents/results.ts';
import { TrialResultSchema } from '../../../src/kinds/tool-agents/loop.ts';
import { planReplay } from '../../../src/kinds/tool-agents/replay.ts';
import { parseTasksLenient } from '../../../src/toolenv/tasks.ts';
import { readCampaignKind } from '../../../src/kinds/registry.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { workspaceStorePath } from '../../../src/store/workspace.ts';
import { runCli } from '../../helpers/cli.ts';
import { dataPath, REPO_ROOT } from '../../helpers/repoData.ts';
import { runToolAgentsCampaign } from '../../helpers/run-kinds.ts';

/**
 * A small tool-agents campaign end to end through `icabench run`: three good base tasks, one whose ground truth names
 * an unknown tool (not runnable), one with a bad task type (not loaded), a missing task file, two disambiguation
 * tasks; two trials each.
 */
function fixture(extra = ''): { dir: string; config: string; workspace: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tool-agents-run-'));
  const base = JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 5);
  base[3].actions[0].name = 'open_the_moon_roof';
  base[4].task_type = 'sightseeing';
  writeFileSync(join(dir, 'base.json'), JSON.stringify(base));
  writeFileSync(join(dir, 'dis.json'), JSON.stringify(JSON.parse(readFileSync(dataPath('carbench/tasks_disambiguation.json'), 'utf8')).slice(0, 2)));
  const config = join(dir, 'small.yaml');
  writeFileSync(config, `kind: tool-agents\nname: small\ntasks: [base.json, dis.json, missing.json]\nrepeats: 2\n${extra}`);
  return { dir, config, workspace: join(dir, 'ws') };
}

const readSummary = (out: string) => ToolAgentsRunSummarySchema.parse(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')));

describe('kind: tool-agents campaigns through icabench run', () => {
  it('the shipped carbench-train.yaml is a tool-agents campaign whose task paths are relative to it', () => {
    const path = join(REPO_ROOT, 'bench-configs/carbench-train.yaml');
    expect(readCampaignKind(path)).toBe('tool-agents');
    const loaded = loadToolAgentsConfig(path);
    expect(loaded.config).toMatchObject({ repeats: 3, agent: { type: 'replay', fault: { kind: 'none' } } });
    expect(loaded.taskFiles).toEqual(['tasks_base.json', 'tasks_hallucination.json', 'tasks_disambiguation.json'].map((f) => dataPath(`carbench/${f}`)));
  });

  it('icabench run bench-configs/carbench-train.yaml: 129 tasks × 3 trials, R = 1 on all, runnable counts per family printed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tool-agents-train-'));
    const run = await runCli(['run', join(REPO_ROOT, 'bench-configs/carbench-train.yaml'), '--workspace', join(dir, 'ws'), '--out', join(dir, 'out')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('completed: 387/387 task trials, R = 1 in 387; 0 tasks not runnable, 0 not loaded');
    for (const [family, n] of [['base', 50], ['hallucination', 48], ['disambiguation', 31]] as const) expect(run.stdout).toContain(`${family}: ${n}/${n} tasks runnable; pass^1 1.000, pass^3 1.000 (first-k 1.000), pass@3 1.000`);
    expect(readSummary(join(dir, 'out')).trials).toBe(387);
  }, 180_000);

  it('the paper preset bench-configs/carbench-paper.yaml runs offline: its summary states the preset, Avg Pass^3, R with its scope and the misfires', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tool-agents-paper-'));
    const run = await runCli(['run', join(REPO_ROOT, 'bench-configs/carbench-paper.yaml'), '--workspace', join(dir, 'ws'), '--out', join(dir, 'out')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Avg Pass^3 (CAR-bench leaderboard): 1.000');
    expect(run.stdout).toMatch(/R over the judged components: 387\/387; \d+ trial\(s\) had LLM-judged policies not judged/);
    const summary = readSummary(join(dir, 'out'));
    expect(summary.preset).toEqual({ method: 'paper', statement: expect.stringMatching(/^paper preset: Kirmayr et al\., CAR-bench/) });
    expect(summary.competition).toEqual({ macroPassHat3: 1, byFamily: { base: 1, hallucination: 1, disambiguation: 1 } });
    expect(summary.misfires).toMatchObject({ trials: [], failedTrials: 0, soleSource: 0, passRate: { included: 1, excluded: 1 } });
    for (const family of ['base', 'hallucination', 'disambiguation']) expect(summary.misfires.passHatK[family]).toEqual({ k: 3, asScored: 1, withoutSoleUserErrors: 1 });
    expect(summary.hallucinationFailures).toEqual({ fabrication: 0, concealment: 0, trials: [] });
    const report = readFileSync(join(dir, 'out', 'report.html'), 'utf8');
    expect(report).toContain('paper preset: Kirmayr et al.');
    // the hallucination split and the user-error attribution as report figures
    expect(report).toContain('<h3>Hallucinations: fabrication vs concealment</h3><p>fabrication 0 <br>concealment 0 </p>');
    expect(report).toContain('<h3>User-simulator errors</h3>');
    writeFileSync(join(dir, 'two.yaml'), 'kind: tool-agents\nname: p\nmethod: paper\ntasks: [x.json]\nrepeats: 2\n');
    expect(() => loadToolAgentsConfig(join(dir, 'two.yaml'))).toThrow(/repeats.*Pass\^3/s);
  }, 180_000);

  it('the replay agent: R = 1 and pass^k = 1 on every runnable task; not runnable = skipped, bad file recorded; everything from the store', async () => {
    const { dir, config, workspace } = fixture();
    const out = join(dir, 'out');
    const run = await runCli(['run', config, '--workspace', workspace, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/completed: 12\/12 task trials, R = 1 in 10; 1 tasks not runnable, 2 not loaded/);
    // #35: the report's first screen and the CLI's last line say what was tested and the verdict in plain words
    // a replay tested no agent: said before the verdict, from the stored trials' agent
    const replay = "This run is a replay of the reference trajectories, not an agent under test: the replay agent performs each task's reference actions, so the figures are 100 % by construction and check the bench itself. Set `agent:` to a real agent to measure one (docs/tool-agents.md).";
    expect(run.stdout.trim().split('\n').at(-1)).toBe(
      `${replay} Verdict: 0 of 10 task trials failed (R = 0), 10 passed on the replay agent (a replay of the reference trajectories, not an agent). Every scored trial passed every component. The report's first screen says more.`,
    );
    const firstScreen = /<section class="first"[\s\S]*?<\/section>/.exec(readFileSync(join(out, 'report.html'), 'utf8'))![0];
    expect(firstScreen).toContain(`<div class="verdict t-inconclusive" data-testid="caveat"><b>Read this first:</b> ${replay.replace(/'/g, '&#39;')}</div>`);
    expect(firstScreen).toContain('<th>kind</th><td>tool-agents: 12 task trials, 1 tasks not runnable here</td>');
    expect(firstScreen).toContain('<th>faults</th><td>none injected</td>');
    expect(run.stderr).toMatch(/task not loaded: .*missing\.json \(file\): .*missing\.json: cannot read the task file \(no such file\)/);
    const summary = readSummary(out);
    expect(summary).toMatchObject({ kind: 'tool-agents', planned: 12, trials: 12, agent: expect.stringContaining('replay'), prematureActionRate: 0 });
    expect(summary.families.base).toMatchObject({ tasks: 4, runnableTasks: 3, trials: 8, successes: 6 });
    expect(summary.families.disambiguation).toMatchObject({ tasks: 2, runnableTasks: 2, trials: 4, successes: 4 });
    for (const f of Object.values(summary.families)) {
      expect(f.reliability.byK.map((p) => [p.k, p.passHatK.unbiased, p.passHatK.firstK, p.passAtK.unbiased, p.passAtK.firstK])).toEqual([
        [1, 1, 1, 1, 1],
        [2, 1, 1, 1, 1],
      ]);
      expect(f.reliability.rdi).toBe(0);
    }
    // per CAR-bench task type too: base (4 tasks, 3 runnable), and the two disambiguation types
    expect(Object.fromEntries(Object.entries(summary.taskTypes).map(([type, t]) => [type, [t.runnableTasks, t.tasks, t.successes]]))).toEqual({
      base: [3, 4, 6],
      disambiguation_internal: [1, 1, 2],
      disambiguation_user: [1, 1, 2],
    });
    expect(summary.notRunnable).toEqual([{ taskId: 'base_6', reason: expect.stringContaining('open_the_moon_roof') }]);
    expect(summary.invalidTasks.map((t) => t.taskId)).toEqual(['base_8', '(file)']);
    expect(summary.policyViolations).toEqual({});
    // junit: one case per trial, the unrunnable task's trials skipped with the reason
    const junit = readFileSync(join(out, 'junit.xml'), 'utf8');
    expect(junit.match(/<testcase /g)).toHaveLength(12);
    expect(junit).toContain('tests="12" failures="0" errors="0" skipped="2"');
    expect(junit).toMatch(/<testcase name="base_6 trial 1"[^>]*>\s*<skipped message="not runnable: [^"]*open_the_moon_roof/);
    // the report: per task its trials with the trajectory (tool calls with arguments and results), components and policies
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('tool-agents run');
    expect(html).toContain('pass^k first k');
    const store = ResultStore.open(workspaceStorePath(workspace));
    try {
      const [stored] = store.listRuns();
      expect(stored).toMatchObject({ kind: TOOL_AGENTS_KIND, mode: 'items', status: 'completed', planned: 12, stored: 12 });
      const rows = store.itemResults(stored.id);
      expect(rows.map((r) => r.key).slice(0, 6)).toEqual(['base_0#0', 'base_2#0', 'base_4#0', 'base_6#0', 'disambiguation_0#0', 'disambiguation_2#0']);
      expect(rows.map((r) => r.outcome).filter((o) => o !== 'pass')).toEqual(['not_runnable', 'not_runnable']);
      const first = TrialResultSchema.parse(rows[0].result);
      const call = first.messages.find((m) => m.role === 'assistant' && m.toolCalls.length)!;
      expect(call.role === 'assistant' && html.includes(`<b>${call.toolCalls[0].name}</b>`)).toBe(true);
      const toolResult = first.messages.find((m) => m.role === 'tool')!;
      expect(html).toContain(toolResult.content.slice(0, 30).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'));
      // `icabench report` rewrites the same files from the store alone
      const again = join(dir, 'again');
      const report = await runCli(['report', stored.id, '--workspace', workspace, '--out', again]);
      expect(report.code, report.stderr).toBe(0);
      expect(readFileSync(join(again, 'summary.json'), 'utf8')).toBe(readFileSync(join(out, 'summary.json'), 'utf8'));
      expect(existsSync(join(again, 'junit.xml'))).toBe(true);
      // export: one stored task trial per line
      const exported = await runCli(['export', stored.id, '--workspace', workspace, '--out', join(dir, 'trials.jsonl')]);
      expect(exported.stderr).toContain('12 items written');
      const lines = readFileSync(join(dir, 'trials.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.map((l) => l.key)).toEqual(rows.map((r) => r.key));
      expect(TrialResultSchema.parse(lines[0].result).taskId).toBe('base_0');
    } finally {
      store.close();
    }
  }, 120_000);

  it('a fault profile fails the right component and compare shows the drop against the clean run', async () => {
    const clean = fixture();
    const cleanRun = await runCli(['run', clean.config, '--workspace', clean.workspace, '--out', join(clean.dir, 'out')]);
    expect(cleanRun.code, cleanRun.stderr).toBe(0);
    // the same workspace, same tasks, the half_done fault: the last state-changing call is left out
    writeFileSync(join(clean.dir, 'half.yaml'), 'kind: tool-agents\nname: half\ntasks: [base.json, dis.json]\nrepeats: 2\nagent: { type: replay, fault: { kind: half_done } }\n');
    const faulty = await runCli(['run', join(clean.dir, 'half.yaml'), '--workspace', clean.workspace, '--out', join(clean.dir, 'half')]);
    expect(faulty.code, faulty.stderr).toBe(0);
    const summary = readSummary(join(clean.dir, 'half'));
    const store = ResultStore.open(workspaceStorePath(clean.workspace));
    let ids: string[];
    try {
      ids = store.listRuns().map((r) => r.id).reverse();
      const { results } = loadToolAgentsRun(store, ids[1]);
      const failed = results.filter((r) => r.reward === 0);
      expect(failed.length).toBeGreaterThan(0);
      // exactly the tasks where the fault changes the replay fail, in every trial; the others still score R = 1
      // (base_6 names an unknown tool: not runnable, so never scored)
      const tasks = ['base.json', 'dis.json'].flatMap((f) => parseTasksLenient(readFileSync(join(clean.dir, f), 'utf8'), f).tasks).filter((t) => t.task_id !== 'base_6');
      expect(tasks.length).toBe(5);
      const fires = tasks.filter((t) => planReplay(t, { kind: 'half_done' }).faultFired).map((t) => t.task_id);
      expect(fires.length).toBeGreaterThan(0);
      expect([...new Set(failed.map((r) => r.taskId))].sort()).toEqual(fires.sort());
      expect(failed).toHaveLength(2 * fires.length);
      // every failure is the state component's (leaving the last call out may also leave its tool out: subset); no policy, execution or end alarm
      for (const r of failed) expect(r.score?.state.passed, r.taskId).toBe(false);
      expect(summary.failedComponents.state).toBe(failed.length);
      expect(Object.keys(summary.failedComponents).filter((c) => c !== 'state' && c !== 'subset')).toEqual([]);
      expect(summary.policyViolations).toEqual({});
      const junit = readFileSync(join(clean.dir, 'half', 'junit.xml'), 'utf8');
      expect(junit).toContain(`failures="${failed.length}"`);
      expect(junit).toMatch(/<failure type="state[,"]/);
    } finally {
      store.close();
    }
    const compared = await runCli(['compare', ids[0], ids[1], '--workspace', clean.workspace, '--json']);
    expect(compared.code, compared.stderr).toBe(0);
    const comparison = JSON.parse(compared.stdout);
    const base = comparison.families.find((f: { family: string }) => f.family === 'base');
    expect(base).toMatchObject({ k: 2, a: 1 });
    expect(base.b).toBeLessThan(1);
    expect(base.delta).toBeCloseTo(base.b - 1, 12);
    expect(comparison.changed.length).toBeGreaterThan(0);
    expect(comparison.changed.every((c: { a: number; b: number }) => c.a === 1 && c.b < 1)).toBe(true);
    // by run directory too (the summary names the run; the trials come from the store)
    const text = await runCli(['compare', join(clean.dir, 'out'), join(clean.dir, 'half'), '--workspace', clean.workspace]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/base: pass\^2 \(unbiased\) A 100\.0%, B \d+\.\d%/);
    // a tool-agents run does not compare with a dialogue run
    const mixed = await runCli(['compare', ids[0], join(REPO_ROOT, 'nothing-here'), '--workspace', clean.workspace]);
    expect(mixed.code).not.toBe(0);
    expect(mixed.stderr).toMatch(/a tool-agents run compares with another tool-agents run/);
  }, 180_000);

  it('an interrupted run resumes with the remaining trials only, from the tasks as planned', async () => {
    const { dir, config, workspace } = fixture();
    const store = ResultStore.open(workspaceStorePath(workspace));
    let runId: string;
    try {
      const controller = new AbortController();
      let seen = 0;
      const first = await runToolAgentsCampaign(loadToolAgentsConfig(config), {
        store,
        signal: controller.signal,
        onTrial: () => {
          if (++seen === 5) controller.abort();
        },
      });
      expect(first.status).toBe('interrupted');
      expect(first.results).toHaveLength(5);
      runId = first.runId!;
      expect(store.getRun(runId)).toMatchObject({ status: 'interrupted', planned: 12, stored: 5 });
    } finally {
      store.close();
    }
    // the task files change after planning: the resumed run still runs the tasks it planned
    writeFileSync(join(dir, 'dis.json'), '[]');
    const out = join(dir, 'out');
    const resumed = await runCli(['run', config, '--workspace', workspace, '--out', out, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`run ${runId} completed: 12/12 task trials`);
    const summary = readSummary(out);
    expect(summary.run.id).toBe(runId);
    expect(summary.families.disambiguation.successes).toBe(4);
    expect(summary.invalidTasks).toHaveLength(2);
    const again = ResultStore.open(workspaceStorePath(workspace));
    try {
      expect(again.listRuns()).toHaveLength(1);
      expect(again.itemResults(runId).every((r) => r.result !== null)).toBe(true);
    } finally {
      again.close();
    }
  }, 120_000);
});
