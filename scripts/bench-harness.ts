/**
 * The speed-and-footprint matrix of issue #26, every figure printed with its goal beside it.
 *
 *   npm run bench:harness [-- --quick] [--conversations 50] [--repeats 3] [--big 10000] [--two-tier] [--model-only] [--deterministic-only] [--pipeline off]
 *                         [--host-only | --no-host] [--host-conversations N] [--host-concurrency 1,8,32] [--time-scale 1]
 *                         [--cache-hints llama.cpp|off] [--baseline-ref 40155a3 | --no-baseline]
 *
 * Scenarios (each measured in a fresh child process, scripts/bench-scenario.ts, so its peak RSS is its own):
 * - model host (issue #37): the model-driven campaign against the fake server modelling a local GPU host (slots with
 *   prompt-prefix caches, prefill and decode time per token: test/helpers/modelHost.ts) at 1, 8 and 32 conversations
 *   at once; per role the prompt tokens, cached share, request bytes and modelled GPU-seconds per turn; at 8 at once
 *   beside the same campaign with the prompts of an earlier commit (hostStage).
 * - model-driven: the model simulator (Ollama client) and the model judge (OpenAI client) against the fake
 *   model server (test/helpers/fakeLlmServer.ts, benchModelResponder), 8 conversations and 8 server slots at
 *   once, at 0, 50 and 500 ms model latency. The server runs in its own process, as a real one would; its CPU
 *   is not counted. Its request log gives the share of each call's prompt tokens that is a prefix shared with
 *   the previous call of the same role.
 * - deterministic: the template simulator and the oracle judge (bench-configs/quickstart.yaml), store on disk,
 *   8 at once, the reference head unit over its loopback bridge as `icabench run` has it, then called in-process
 *   (what the bridge costs per turn); and a large run of the same (--big conversations) followed by
 *   `icabench report` on its store. --deterministic-only skips the model-driven scenarios.
 * - the CLI as a user starts it (`icabench run` of the deterministic scenario, `icabench --version`): its peak RSS,
 *   from the compiled JavaScript when dist/ is a fresh build (`npm run build`), else from the sources through tsx.
 * Bench CPU is the child's user+system CPU during the run (start-up excluded); turns/s is wall-clock and
 * depends on the machine's load, which is printed with every figure.
 */
import { fork, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freshBuildEntry } from '../bin/build-state.js';
import { benchModelResponder, startFakeLlmServer, type RecordedRequest } from '../test/helpers/fakeLlmServer.ts';
import { LOCAL_GPU_HOST } from '../test/helpers/modelHost.ts';
import { describeRoleCost, hostFigures, roleOf, totalCost, type HostFigures } from './model-host-figures.ts';
import { baselineTree, ISSUE_37_BASELINE_REF, type BaselineTree } from './bench-baseline.ts';
import type { ScenarioFigures } from './bench-scenario.ts';
import { arg, flag, text } from './bench-args.ts';


const AT_ONCE = 8;
const scriptPath = new URL(import.meta.url).pathname;
/** each scenario runs in a child process of its own (its peak RSS is its own) */
const scenarioScript = 'scripts/bench-scenario.ts';


// ---------------------------------------------------------------- fake model server (its own process)

async function serve(): Promise<void> {
  // --host: the modelled local GPU host (8 slots with prompt-prefix caches) instead of a fixed latency
  const host = flag('host') ? { host: { ...LOCAL_GPU_HOST, timeScale: arg('time-scale', 1) } } : {};
  const server = await startFakeLlmServer({ latencyMs: arg('latency', 0), respond: benchModelResponder(), ...host });
  process.send?.({ url: server.url });
  process.on('message', async (message) => {
    if (message === 'prefix') process.send?.(prefixShares(server.chatRequests()));
    if (message === 'host') process.send?.(hostFigures(server.chatRequests()));
    if (message === 'stop') {
      await server.close();
      process.exit(0);
    }
  });
}

/** The prompt as the server's tokenizer sees it: the messages in order. */
function promptText(request: RecordedRequest): string {
  const messages: Array<{ role: string; content: string }> = request.body?.messages ?? [];
  return messages.map((m) => `<|${m.role}|>${m.content}`).join('');
}

/** A stand-in tokenizer (words and single punctuation marks); the share is what matters, not the count. */
const tokenCount = (s: string) => s.match(/\w+|[^\w\s]/g)?.length ?? 0;

/** The conversation a call belongs to: both clients send the conversation's seed (its rngSeed), unique per conversation in the bench. */
function conversationOf(request: RecordedRequest): string {
  return String(request.body?.seed ?? request.body?.options?.seed ?? '?');
}

interface PrefixShare {
  calls: number;
  share: number;
}

/**
 * Per role, the share of prompt tokens (over every call that had a previous call to compare with) that are a
 * prefix shared with that previous call: what a server's KV cache could reuse. Two figures: against the previous
 * call of the role overall (one cache for every conversation in flight), and against the previous call of the role
 * in the same conversation (a per-slot cache that keeps one conversation's prompt, as llama.cpp and Ollama slots do).
 */
function prefixShares(requests: RecordedRequest[]): { overall: number; sameConversation: number; byRole: Record<string, { overall: PrefixShare; sameConversation: PrefixShare }> } {
  const tally = () => {
    const previous = new Map<string, string>();
    const totals = new Map<string, { calls: number; shared: number; tokens: number }>();
    return {
      totals,
      add(role: string, key: string, prompt: string) {
        const before = previous.get(key);
        previous.set(key, prompt);
        if (before === undefined) return;
        let common = 0;
        while (common < prompt.length && common < before.length && prompt.charCodeAt(common) === before.charCodeAt(common)) common++;
        const total = totals.get(role) ?? { calls: 0, shared: 0, tokens: 0 };
        total.calls++;
        total.shared += tokenCount(prompt.slice(0, common));
        total.tokens += tokenCount(prompt);
        totals.set(role, total);
      },
    };
  };
  const overall = tally();
  const sameConversation = tally();
  for (const request of requests) {
    const role = roleOf(request);
    const prompt = promptText(request);
    overall.add(role, role, prompt);
    sameConversation.add(role, `${role}\u0000${conversationOf(request)}`, prompt);
  }
  const share = (totals: Map<string, { calls: number; shared: number; tokens: number }>, role?: string): PrefixShare => {
    const rows = role === undefined ? [...totals.values()] : [totals.get(role) ?? { calls: 0, shared: 0, tokens: 0 }];
    const tokens = rows.reduce((sum, r) => sum + r.tokens, 0);
    return { calls: rows.reduce((sum, r) => sum + r.calls, 0), share: tokens ? rows.reduce((sum, r) => sum + r.shared, 0) / tokens : 0 };
  };
  const roles = [...new Set([...overall.totals.keys(), ...sameConversation.totals.keys()])].sort();
  return {
    overall: share(overall.totals).share,
    sameConversation: share(sameConversation.totals).share,
    byRole: Object.fromEntries(roles.map((role) => [role, { overall: share(overall.totals, role), sameConversation: share(sameConversation.totals, role) }])),
  };
}

// ---------------------------------------------------------------- the matrix

/** A scenario child, from this checkout or (`tree`) from a checkout of an earlier commit. */
function child<T>(args: string[], tree?: BaselineTree): Promise<T> {
  return new Promise((resolvePromise, reject) => {
    const cwd = tree?.dir ?? process.cwd();
    const proc = fork(join(cwd, scenarioScript), args, { cwd, execArgv: ['--import', 'tsx', ...(process.env.BENCH_CHILD_EXEC_ARGV?.split(' ').filter(Boolean) ?? [])] });
    proc.once('message', (message) => resolvePromise(message as T));
    proc.once('exit', (code) => code !== 0 && reject(new Error(`bench child ${args.join(' ')} exited with ${code}`)));
  });
}

/** A fake model server in its own process: at `latencyMs`, or (`hostTimeScale` given) as the modelled GPU host. */
async function withServer<T>(latencyMs: number, use: (url: string) => Promise<T>, hostTimeScale?: number): Promise<{ value: T; prefix: ReturnType<typeof prefixShares>; host: HostFigures }> {
  const hostArgs = hostTimeScale === undefined ? [] : ['--host', '--time-scale', String(hostTimeScale)];
  const proc = fork(scriptPath, ['--serve', '--latency', String(latencyMs), ...hostArgs], { execArgv: ['--import', 'tsx'] });
  const next = <M>() => new Promise<M>((r) => proc.once('message', (m) => r(m as M)));
  const { url } = await next<{ url: string }>();
  try {
    const value = await use(url);
    const answer = next<ReturnType<typeof prefixShares>>();
    proc.send('prefix');
    const prefix = await answer;
    const hostAnswer = next<HostFigures>();
    proc.send('host');
    return { value, prefix, host: await hostAnswer };
  } finally {
    proc.send('stop');
  }
}

async function runScenario(name: 'model' | 'deterministic' | 'in-process', conversations: number, url?: string, concurrency = AT_ONCE, extra: string[] = [], tree?: BaselineTree): Promise<ScenarioFigures> {
  const workspace = mkdtempSync(join(tmpdir(), 'icabench-bench-harness-'));
  try {
    return await child<ScenarioFigures>(['--scenario', name, '--workspace', workspace, '--conversations', String(conversations), '--concurrency', String(concurrency), ...extra, ...(url ? ['--url', url] : []), ...(flag('two-tier') ? ['--two-tier'] : []), ...(text('pipeline') ? ['--pipeline', text('pipeline')!] : [])], tree);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * `icabench ARGS` as a user runs it (start-up included), under /usr/bin/time: wall seconds, user + system CPU seconds,
 * peak RSS, and which code ran: the compiled JavaScript when dist/ is a build of the current sources at that moment
 * (bin/build-state.js), else the sources through tsx.
 */
function cli(args: string[]): { seconds: number; cpuSeconds: number; peakMiB: number; build: string } {
  const build = freshBuildEntry() ? 'compiled dist/' : 'sources through tsx';
  const started = performance.now();
  const result = spawnSync('/usr/bin/time', ['-f', 'BENCH_TIME %U %S %M', process.execPath, resolve('bin/icabench.js'), ...args], { encoding: 'utf8' });
  const seconds = (performance.now() - started) / 1000;
  if (result.status !== 0) throw new Error(`icabench ${args[0]} exited with ${result.status}: ${result.stderr}`);
  const [user, system, peakKiB] = (/BENCH_TIME (\S+) (\S+) (\d+)/.exec(result.stderr) ?? []).slice(1).map(Number);
  return { seconds, cpuSeconds: user + system, peakMiB: peakKiB / 1024, build };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (value: number, digits = 1) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

type Row = (figure: string, value: string, goal: string, load: number) => void;

/** One campaign on the modelled host: its figures and the host's charges per role. */
interface HostRun {
  f: ScenarioFigures;
  host: HostFigures;
  turnsPerSecond: number;
}

async function hostRun(concurrency: number, count: number, timeScale: number, tree?: BaselineTree): Promise<HostRun> {
  // the current prompts with the slot hints of a llama-server (each conversation on its own slot) unless --cache-hints off
  const hints = tree ? [] : ['--cache-hints', text('cache-hints') ?? 'llama.cpp'];
  const { value: f, host } = await withServer(0, (url) => runScenario('model', count, url, concurrency, ['--one-model', ...hints], tree), timeScale);
  return { f, host, turnsPerSecond: f.turns / (f.wallSeconds / timeScale) };
}

function hostRows(row: Row, label: string, { f, host, turnsPerSecond }: HostRun, goals: { turnsPerSecond: string }): void {
  const total = totalCost(host);
  const at = `${label} (${f.conversations} conversations, ${f.turns} turns)`;
  row(`model host, ${at}: turns/s`, fmt(turnsPerSecond, 2), goals.turnsPerSecond, f.load1m);
  row(`model host, ${at}: prompt tokens per turn`, fmt(total.promptTokens / f.turns, 0), '≤ 1,350', f.load1m);
  row(`model host, ${at}: completion tokens per turn`, fmt(total.completionTokens / f.turns, 1), '—', f.load1m);
  row(`model host, ${at}: share of prompt tokens from a slot's cache`, `${fmt((100 * total.cachedTokens) / total.promptTokens)}%`, '—', f.load1m);
  row(`model host, ${at}: request bytes per turn`, `${fmt(total.bytes / f.turns / 1024)} KiB`, '—', f.load1m);
  const gpu = total.modelMs / f.turns / 1000;
  const withoutReuse = total.modelMsWithoutReuse / f.turns / 1000;
  row(`model host, ${at}: modelled GPU-s per judged turn (without prefix reuse)`, `${fmt(gpu, 3)} (${fmt(withoutReuse, 3)}: ${fmt((100 * gpu) / withoutReuse, 0)}%)`, '≤ 50% of the figure without reuse', f.load1m);
  for (const [role, cost] of Object.entries(host).sort()) row(`  ${role}`, describeRoleCost(cost, f.turns), '—', f.load1m);
}

/**
 * Issue #37: the model-driven campaign on the modelled local GPU host (LOCAL_GPU_HOST: 8 slots with prompt-prefix
 * caches, 0.25 ms per uncached prompt token, 15 ms per completion token) at 1, 8 and 32 conversations at once; the
 * bench's limiter has the host's 8 slots. Per role and overall: prompt and completion tokens per turn, cached share,
 * request bytes per turn, modelled GPU-seconds per judged turn (with and without prefix reuse), and turns/s. At 8 at
 * once the same campaign also runs with the prompts of `--baseline-ref` (default: before issue #37; `--no-baseline`
 * skips it) against the same host, one after the other on the same machine: the 2× goal is against it.
 * `--time-scale S` runs the modelled times S times as fast (turns/s is then given in model time: a trial, the bench's
 * own time counts 1/S times too much).
 */
async function hostStage(row: Row): Promise<void> {
  const timeScale = arg('time-scale', 1);
  const levels = (text('host-concurrency') ?? '1,8,32').split(',').map(Number);
  for (const concurrency of levels) {
    // enough conversations that every place is filled most of the run: 6 one after another, 20 at 8, twice the places beyond
    const count = text('host-conversations') ? Math.max(arg('host-conversations', 20), concurrency) : concurrency === 1 ? 6 : Math.max(20, 2 * concurrency);
    const now = await hostRun(concurrency, count, timeScale);
    if (concurrency !== AT_ONCE || flag('no-baseline')) {
      hostRows(row, `${concurrency} at once`, now, { turnsPerSecond: '—' });
      continue;
    }
    const tree = baselineTree(text('baseline-ref') ?? ISSUE_37_BASELINE_REF);
    try {
      const before = await hostRun(concurrency, count, timeScale, tree);
      const ratio = now.turnsPerSecond / before.turnsPerSecond;
      hostRows(row, `${concurrency} at once`, now, { turnsPerSecond: `≥ 2× ${fmt(before.turnsPerSecond, 2)}: ${fmt(ratio, 2)}×` });
      hostRows(row, `${concurrency} at once, prompts of ${tree.ref}`, before, { turnsPerSecond: 'the baseline' });
    } finally {
      tree.remove();
    }
  }
}

async function orchestrate(): Promise<void> {
  const quick = flag('quick');
  const conversations = arg('conversations', quick ? 16 : 50);
  const repeats = arg('repeats', quick ? 1 : 3);
  const big = arg('big', quick ? 500 : 10_000);
  const slowConversations = arg('slow-conversations', quick ? 8 : conversations);
  const rows: Array<[string, string, string, string]> = [];
  const row: Row = (figure, value, goal, load) => {
    rows.push([figure, value, goal, fmt(load, 1)]);
    console.error(`  ${figure}: ${value} (goal ${goal}, load ${fmt(load, 1)})`);
  };
  console.error(`bench:harness — ${conversations} conversations × ${repeats} fresh processes, ${AT_ONCE} at once, big run ${big}`);

  // --host-only: the modelled GPU host alone (issue #37); --no-host: everything else
  if (!flag('no-host') && !flag('deterministic-only')) await hostStage(row);
  const hostOnly = flag('host-only');

  // model-driven at 0 ms: medians of `repeats` fresh processes, each against a fresh server
  const zero: ScenarioFigures[] = [];
  let prefix: ReturnType<typeof prefixShares> | undefined;
  // --deterministic-only: the deterministic figures alone (per-turn CPU of the bench's own path)
  const modelDriven = !flag('deterministic-only') && !hostOnly;
  for (let i = 0; modelDriven && i < repeats; i++) {
    const { value, prefix: shares } = await withServer(0, (url) => runScenario('model', conversations, url));
    zero.push(value);
    prefix ??= shares;
  }
  const m = (pick: (f: ScenarioFigures) => number, of: ScenarioFigures[]) => median(of.map(pick));
  const zeroLoad = m((f) => f.load1m, zero);
  if (modelDriven) {
    row('model-driven, 0 ms, turns/s', fmt(m((f) => f.turns / f.wallSeconds, zero)), '≥ 700', zeroLoad);
    row('model-driven, bench CPU per model call', `${fmt(m((f) => f.cpuMs / f.calls, zero), 2)} ms`, '≤ 1.0 ms', zeroLoad);
    row('model-driven, bench CPU per turn', `${fmt(m((f) => f.cpuMs / f.turns, zero), 2)} ms`, '≤ 2.5 ms', zeroLoad);
    row('model-driven, model calls per turn', fmt(m((f) => f.calls / f.turns, zero), 2), '—', zeroLoad);
    row('model-driven, peak RSS', `${fmt(m((f) => f.peakRssMiB, zero), 0)} MiB`, '≤ 110 MB', zeroLoad);

    // share of the latency bound: with AT_ONCE slots and L ms per call, at most AT_ONCE / L calls per ms
    for (const latencyMs of [50, 500]) {
      const { value: f } = await withServer(latencyMs, (url) => runScenario('model', slowConversations, url));
      const bound = AT_ONCE / (latencyMs / 1000);
      row(`model-driven, share of the latency bound, ${latencyMs} ms × ${AT_ONCE}`, `${fmt((100 * f.calls) / f.wallSeconds / bound)}%`, latencyMs === 50 ? '≥ 95%' : '≥ 98%', f.load1m);
    // the host kept busy: how much of the time the limiter's slots were held, and how long a call held one (latency + overhead)
    if (f.slots) row(`  limiter slots held, ${latencyMs} ms × ${AT_ONCE}; mean hold per call`, `${fmt(100 * f.slots.busy)}%; ${fmt(f.slots.holdMs, 0)} ms`, '—', f.load1m);
    }
  }

  // --model-only: the model-driven figures alone (pipelining and prompt layout measurements)
  if (!flag('model-only') && !hostOnly) {
    const deterministic: ScenarioFigures[] = [];
    for (let i = 0; i < repeats; i++) deterministic.push(await runScenario('deterministic', conversations));
    const detLoad = m((f) => f.load1m, deterministic);
    row('deterministic, turns/s with the store', fmt(m((f) => f.turns / f.wallSeconds, deterministic)), '≥ 2,000', detLoad);
    row('deterministic, CPU per turn', `${fmt(m((f) => f.cpuMs / f.turns, deterministic), 2)} ms`, '≤ 0.5 ms', detLoad);
    row('deterministic, peak RSS', `${fmt(m((f) => f.peakRssMiB, deterministic), 0)} MiB`, '≤ 110 MB', detLoad);
    const direct: ScenarioFigures[] = [];
    for (let i = 0; i < repeats; i++) direct.push(await runScenario('in-process', conversations));
    const directLoad = m((f) => f.load1m, direct);
    row('deterministic, reference unit in-process (no bridge), turns/s', fmt(m((f) => f.turns / f.wallSeconds, direct)), '—', directLoad);
    row('deterministic, reference unit in-process (no bridge), CPU per turn', `${fmt(m((f) => f.cpuMs / f.turns, direct), 2)} ms`, '—', directLoad);

    // the large run keeps its workspace for `icabench report`
    const workspace = mkdtempSync(join(tmpdir(), 'icabench-bench-harness-big-'));
    try {
      const f = await child<ScenarioFigures>(['--scenario', 'deterministic', '--workspace', workspace, '--conversations', String(big)]);
      row(`deterministic ${fmt(big, 0)} conversations, peak RSS`, `${fmt(f.peakRssMiB, 0)} MiB (${fmt(f.turns, 0)} turns, ${fmt(f.turns / f.wallSeconds)} turns/s)`, '≤ 200 MB', f.load1m);
      const report = cli(['report', f.runId, '--workspace', workspace, '--out', join(workspace, 'report')]);
      row(`icabench report on it (${report.build})`, `${fmt(report.seconds, 2)} s (CPU ${fmt(report.cpuSeconds, 2)} s)`, '≤ 3 s', loadavg()[0]);
      row(`icabench report on it (${report.build}), peak RSS`, `${fmt(report.peakMiB, 0)} MiB`, '≤ 200 MB', loadavg()[0]);
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }

    // the deterministic run as a user starts it: `icabench run` (start-up and the report at its end included)
    const cliWorkspace = mkdtempSync(join(tmpdir(), 'icabench-bench-harness-cli-'));
    try {
      const config = join(cliWorkspace, 'campaign.yaml');
      const quickstart = readFileSync('bench-configs/quickstart.yaml', 'utf8');
      writeFileSync(
        config,
        quickstart
          .replace(/^conversations: \d+$/m, `conversations: ${conversations}`)
          .replace(/^concurrency: \d+$/m, `concurrency: ${AT_ONCE}`)
          .replace(/^seeds: (.*)$/m, (_, seeds: string) => `seeds: ${resolve('bench-configs', seeds)}`),
      );
      const run = cli(['run', config, '--workspace', cliWorkspace, '--out', join(cliWorkspace, 'out'), '--no-progress']);
      row(`icabench run, deterministic, ${conversations} conversations (${run.build}), peak RSS`, `${fmt(run.peakMiB, 0)} MiB (${fmt(run.seconds, 2)} s, CPU ${fmt(run.cpuSeconds, 2)} s)`, '≤ 110 MB', loadavg()[0]);
      const version = cli(['--version']);
      row(`icabench --version (${version.build})`, `${fmt(version.peakMiB, 0)} MiB, ${fmt(version.seconds, 2)} s (CPU ${fmt(version.cpuSeconds, 2)} s)`, '—', loadavg()[0]);
    } finally {
      rmSync(cliWorkspace, { recursive: true, force: true });
    }
  }

  if (prefix) {
    row('prompt tokens shared as a prefix with the previous call of the same role', `${fmt(100 * prefix.overall)}%`, '≥ 90%', zeroLoad);
    row('  … with the previous call of the same role in the same conversation', `${fmt(100 * prefix.sameConversation)}%`, '≥ 90%', zeroLoad);
    for (const [role, { overall, sameConversation }] of Object.entries(prefix.byRole)) {
      const same = sameConversation.calls > 0 ? `${fmt(100 * sameConversation.share)}% (${sameConversation.calls} calls)` : 'no second call in a conversation';
      row(`  ${role}: overall / same conversation`, `${fmt(100 * overall.share)}% (${overall.calls} calls) / ${same}`, '≥ 90%', zeroLoad);
    }
  }

  console.log(`\nicabench bench:harness — node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), ${new Date().toISOString()}`);
  console.log(`${conversations} conversations per run, ${AT_ONCE} at once, medians of ${repeats} fresh processes; load = 1-minute load average at the figure\n`);
  console.log('| figure | measured | goal | load |\n|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

// dispatched last: the helpers above are initialised by then
if (flag('serve')) await serve();
else await orchestrate();
