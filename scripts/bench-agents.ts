/**
 * Benchmark of the tool-agent harness (docs/tool-agents.md): every vendored CAR-bench train task run with the
 * deterministic replay agent in-process (3 trials each) and once over a loopback bridge head unit
 * (icabench-tools/1). Prints runnable tasks per type, tasks/s, bench CPU ms per tool call (environment, reference
 * replay and scoring; and the whole process's CPU per tool call), pass^k and peak RSS.
 * Usage: npm run bench:agents -- [trials=3]
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { bridgeToolAgent } from '../src/kinds/tool-agents/bridge-agent.ts';
import { toolAgentFactory } from '../src/kinds/tool-agents/bridge-unit.ts';
import { confirmationRuleJudge } from '../src/kinds/tool-agents/judge.ts';
import { checkRunnable, runToolTaskTrial, type ToolAgent, type TrialResult } from '../src/kinds/tool-agents/loop.ts';
import { ReplayAgent } from '../src/kinds/tool-agents/replay.ts';
import { summarizeTrials } from '../src/kinds/tool-agents/summary.ts';
import { loadVendoredTasks } from '../src/toolenv/tasks.ts';
import { connectHeadUnit, toolsExtension } from '../src/bridge/client.ts';
import { startBridgeServer } from '../src/bridge/server.ts';

const trials = process.argv[2] ? Number(process.argv[2]) : 3;
const tasks = loadVendoredTasks();

const runnable: Record<string, { runnable: number; total: number }> = {};
for (const task of tasks) {
  const r = (runnable[task.task_type] ??= { runnable: 0, total: 0 });
  r.total++;
  if (checkRunnable(task).runnable) r.runnable++;
}

async function pass(label: string, agentFor: () => ToolAgent, n: number) {
  const results: TrialResult[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let trial = 0; trial < n; trial++) for (const task of tasks) results.push(await runToolTaskTrial(task, agentFor(), { trial, judge: confirmationRuleJudge }));
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const toolCalls = results.reduce((s, r) => s + r.toolCalls, 0);
  const benchMs = results.reduce((s, r) => s + r.benchMs, 0);
  const summary = summarizeTrials(results);
  console.log(`\n${label}: ${results.length} trials, ${toolCalls} tool calls in ${wallS.toFixed(2)} s`);
  console.log(`  tasks/s (trials/s): ${(results.length / wallS).toFixed(1)}`);
  console.log(`  bench CPU ms per tool call (environment + reference replay + scoring): ${(benchMs / toolCalls).toFixed(3)}`);
  console.log(`  process CPU ms per tool call (user+system, everything incl. the loop): ${((cpu.user + cpu.system) / 1000 / toolCalls).toFixed(3)}`);
  console.log(`  R = 1: ${results.filter((r) => r.reward === 1).length}/${results.length}`);
  for (const [family, f] of Object.entries(summary.families))
    console.log(`  ${family}: pass^1 ${f.reliability.byK[0]?.passHatK.unbiased.toFixed(3)}, pass^${n} ${f.reliability.byK.at(-1)?.passHatK.unbiased.toFixed(3)} (${f.runnableTasks}/${f.tasks} runnable)`);
}

console.log(`tasks: ${tasks.length}; runnable per type:`);
for (const [type, r] of Object.entries(runnable)) console.log(`  ${type}: ${r.runnable}/${r.total}`);

await pass('in-process replay agent', () => new ReplayAgent(), trials);

const token = randomBytes(8).toString('hex');
const bridge = await startBridgeServer({ token });
const client = await connectHeadUnit({ url: bridge.url, token, handler: { unit: { name: 'bench-tools', version: '1' }, capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: false }, startSession() {}, async handleTurn() { return { text: '', actions: [] }; }, endSession() {} }, extensions: toolsExtension(toolAgentFactory('replay')) });
const connection = await bridge.waitForHeadUnit(10_000, 'bench-tools');
const agent = bridgeToolAgent(connection);
await pass('bridge head unit (replay agent, loopback icabench-tools/1)', () => agent, 1);
await client.close();
await bridge.close();

console.log(`\npeak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB; load average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
