/**
 * Bounded-inputs benchmark (docs/configuration.md, "Limits"): how fast oversized inputs are refused
 * and what a large seed pool costs. Each case runs in its own process, so its peak RSS is its own:
 *   1. a plan of conversations: 100000 × repeats: 100 (10 million): time until the refusal;
 *   2. /dev/zero as the campaign config: time until the refusal;
 *   3. a 10-conversation campaign (template simulator, oracle judge, reference head unit, outputs
 *      written) on a generated 100,000-seed pool, and the same campaign on the 18-seed in-car pool:
 *      wall time and peak RSS;
 *   4. an invalid 100,000-seed pool (every seed misspelled): time and the number of error lines.
 *   5. a Markdown list nested 3,000 levels deep: time until the refusal.
 *   6. input size caps (#34 item 7, scripts/bench-input-caps.ts): for every reader of a user file, the peak RSS over
 *      the process's own (after its modules are loaded and a small valid file read) when it refuses a file of its
 *      cap + 1 byte, when it refuses /dev/zero (a stream, read up to the cap), and when it reads a valid file just
 *      under the cap; each as a multiple of the cap.
 * Cases 1, 2 and 5 are also timed through the CLI (`icabench run`, `icabench manual index`), next to the
 * CLI's own start-up (`icabench --help`). Usage:
 *   npm run bench:inputs -- [--seeds 100000] [--caps-only] [--only NAME,…  (cap cases whose name contains one)]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { CAP_CASES, capMiB, writeCapFiles } from './bench-input-caps.ts';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'bin/icabench.js');
const IN_CAR = join(ROOT, 'bench-configs/seeds/in-car.yaml');

interface CaseResult {
  ms: number;
  maxRssMiB: number;
  detail: string;
}

/** One case, in this (child) process. */
async function runCase(name: string, dir: string): Promise<CaseResult> {
  const { loadCampaignConfig } = await import('../src/kinds/dialogue/config.ts');
  const started = performance.now();
  let detail = '';
  const refusal = (config: string) => {
    try {
      loadCampaignConfig(config);
      return 'NOT refused';
    } catch (error) {
      return (error as Error).message;
    }
  };
  if (name === 'plan') detail = refusal(join(dir, 'huge-plan.yaml'));
  else if (name === 'dev-zero') detail = refusal('/dev/zero');
  else if (name === 'invalid-pool') detail = `${refusal(join(dir, 'invalid.yaml')).split('\n').length} error lines`;
  else if (name === 'manual-deep') {
    const { readManualFile } = await import('../src/manual/ingest/read.ts');
    detail = await readManualFile(join(dir, 'deep-list.md')).then(
      () => 'NOT refused',
      (error: Error) => error.message,
    );
  }
  else {
    const { runCampaign } = await import('../test/helpers/run-kinds.ts');
    const { buildTiers } = await import('../src/kinds/dialogue/tiers.ts');
    const { ResultStore } = await import('../src/store/store.ts');
    const { writeRunOutputs } = await import('../src/report/write.ts');
    const campaign = loadCampaignConfig(join(dir, `${name}.yaml`));
    const tiers = await buildTiers(campaign.config, {}, () => undefined);
    const store = ResultStore.open(join(dir, `ws-${name}`, 'icabench.db'));
    try {
      const result = await runCampaign(campaign, { store, tiers, log: () => undefined });
      const { summary } = await writeRunOutputs(store, result.runId, join(dir, `out-${name}`), { unit: 'the built-in reference head unit', faults: null });
      detail = `${summary.conversations} conversations, ${result.status}`;
    } finally {
      store.close();
    }
  }
  return { ms: performance.now() - started, maxRssMiB: process.resourceUsage().maxRSS / 1024, detail };
}

/** A pool of `count` seeds: the in-car seeds repeated with unique ids (`misspell` renames every "text:" key). */
function writePool(path: string, count: number, misspell: boolean): number {
  const items = readFileSync(IN_CAR, 'utf8').split(/\n(?=  - id: )/).slice(1).map((item) => item.replace(/\n*$/, '\n'));
  const parts = ['seeds:\n'];
  for (let n = 0; n < count; n++) {
    let item = items[n % items.length].replace(/- id: (\S+)/, `- id: $1-${n}`);
    if (misspell) item = item.replace(/^    text:/m, '    txt:');
    parts.push(item);
  }
  const text = parts.join('');
  writeFileSync(path, text);
  return Buffer.byteLength(text);
}

/**
 * One cap case in this (child) process: `which` is valid, over or stream. The reader's modules are loaded, a small
 * valid file of its kind read and a missing one refused first, so the figure is what the file itself costs: the growth
 * of the peak RSS.
 */
async function runCapCase(index: number, which: string, dir: string): Promise<CaseResult & { overMiB: number }> {
  const testCase = CAP_CASES[index];
  const caseDir = join(dir, testCase.name.replace(/\W+/g, '-'));
  await testCase.read(join(caseDir, 'tiny', testCase.file), caseDir);
  // and its error path (the refusal of a file that is not there), so neither the code nor the error path counts
  await testCase.read(join(caseDir, 'tiny', `missing-${testCase.file}`), caseDir).catch(() => undefined);
  const before = process.resourceUsage().maxRSS / 1024;
  const started = performance.now();
  const detail = await testCase.read(join(caseDir, which, testCase.file), caseDir).then(
    (read) => read,
    (error: Error) => `refused: ${error.message}`,
  );
  const maxRssMiB = process.resourceUsage().maxRSS / 1024;
  return { ms: performance.now() - started, maxRssMiB, overMiB: maxRssMiB - before, detail };
}

/** The cap table: every reader's three files, each read in a process of its own. */
async function capTable(dir: string, self: string, only: string[]): Promise<void> {
  console.log('\ninput size caps: peak RSS over the process\'s own (MiB) and as a multiple of the cap');
  console.log('reader                            cap MiB | cap+1 refused  | /dev/zero refused | valid file at the cap');
  for (const [index, testCase] of CAP_CASES.entries()) {
    if (only.length && !only.some((o) => testCase.name.toLowerCase().includes(o.toLowerCase()))) continue;
    const files = await writeCapFiles(testCase, dir);
    await testCase.writeValid(join(dir, testCase.name.replace(/\W+/g, '-'), 'tiny', testCase.file), 8 * 1024, join(dir, testCase.name.replace(/\W+/g, '-')));
    const cap = capMiB(testCase);
    const run = (which: string) =>
      JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', self, '--case', `cap:${index}:${which}`, '--dir', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim().split('\n').at(-1)!) as CaseResult & { overMiB: number };
    const cell = (r: CaseResult & { overMiB: number }) => `${r.overMiB.toFixed(1).padStart(6)} (${(r.overMiB / cap).toFixed(2)}×)`;
    const [over, stream, valid] = ['over', 'stream', 'valid'].map(run);
    const refusedOk = over.detail.startsWith('refused: ') && stream.detail.startsWith('refused: ');
    console.log(
      `${testCase.name.padEnd(33)} ${String(cap).padStart(7)} | ${cell(over)} | ${cell(stream).padEnd(17)} | ${(files.validBytes / 2 ** 20).toFixed(1)} MiB in ${(valid.ms / 1000).toFixed(1)} s: ${cell(valid)}, ${valid.detail.slice(0, valid.detail.startsWith("refused") ? 300 : 60)}${refusedOk ? '' : `  (NOT refused: ${over.detail.slice(0, 60)} / ${stream.detail.slice(0, 60)})`}`,
    );
  }
}

function timeCli(args: string[]): { wallMs: number; exit: number | null; stderr: string } {
  const started = performance.now();
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { wallMs: performance.now() - started, exit: result.status, stderr: result.stderr.trim().split('\n')[0] };
}

async function main(): Promise<void> {
  const program = new Command()
    .option('--seeds <n>', 'seeds in the generated pool', '100000')
    .option('--caps-only', 'run only the input size caps table')
    .option('--only <names>', 'cap cases whose name contains one of these (comma-separated)', '')
    .option('--case <name>', '(internal) run one case in this process')
    .option('--dir <dir>', '(internal) the working folder');
  program.parse(process.argv);
  const options = program.opts<{ seeds: string; capsOnly?: boolean; only: string; case?: string; dir?: string }>();
  if (options.case) {
    const [kind, index, which] = options.case.split(':');
    console.log(JSON.stringify(kind === 'cap' ? await runCapCase(Number(index), which, options.dir!) : await runCase(options.case, options.dir!)));
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'icabench-bench-inputs-'));
  const self = fileURLToPath(import.meta.url);
  const os = await import('node:os');
  console.log(`machine: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (options.capsOnly) {
    await capTable(dir, self, options.only.split(',').filter(Boolean));
    return;
  }
  const seeds = Number(options.seeds);
  const poolBytes = writePool(join(dir, 'big-pool.yaml'), seeds, false);
  writePool(join(dir, 'invalid-pool.yaml'), seeds, true);
  const campaign = (pool: string) => `name: bench-inputs\nseeds: ${pool}\nconversations: 10\nmaxTurns: [8]\nconcurrency: 2\n`;
  writeFileSync(join(dir, 'big.yaml'), campaign('big-pool.yaml'));
  writeFileSync(join(dir, 'small.yaml'), campaign(IN_CAR));
  writeFileSync(join(dir, 'huge-plan.yaml'), `name: huge\nseeds: ${IN_CAR}\nconversations: 100000\nrepeats: 100\n`);
  writeFileSync(join(dir, 'invalid.yaml'), campaign('invalid-pool.yaml'));
  writeFileSync(join(dir, 'deep-list.md'), Array.from({ length: 3000 }, (_, depth) => `${'  '.repeat(depth)}- item\n`).join(''));

  const child = (name: string): CaseResult =>
    JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', self, '--case', name, '--dir', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim().split('\n').at(-1)!);
  console.log(`generated pool: ${seeds.toLocaleString('en')} seeds, ${(poolBytes / 2 ** 20).toFixed(1)} MiB`);
  console.log('generated manual: a Markdown list nested 3,000 levels deep');
  for (const name of ['plan', 'dev-zero', 'invalid-pool', 'small', 'big', 'manual-deep']) {
    const result = child(name);
    console.log(`${name.padEnd(13)} ${result.ms.toFixed(0).padStart(6)} ms  peak RSS ${result.maxRssMiB.toFixed(0).padStart(4)} MiB  ${result.detail.split('\n')[0].slice(0, 160)}`);
  }
  const help = timeCli(['--help']);
  const plan = timeCli(['run', join(dir, 'huge-plan.yaml'), '--workspace', join(dir, 'ws-cli')]);
  const zero = timeCli(['run', '/dev/zero', '--workspace', join(dir, 'ws-cli')]);
  const deepList = timeCli(['manual', 'index', join(dir, 'deep-list.md'), '--out', join(dir, 'deep-index.json')]);
  console.log(`CLI start-up (icabench --help): ${help.wallMs.toFixed(0)} ms`);
  console.log(`CLI icabench manual index deep-list.md: ${deepList.wallMs.toFixed(0)} ms, exit ${deepList.exit}: ${deepList.stderr.slice(0, 120)}`);
  console.log(`CLI icabench run huge-plan.yaml: ${plan.wallMs.toFixed(0)} ms, exit ${plan.exit}: ${plan.stderr.slice(0, 120)}`);
  console.log(`CLI icabench run /dev/zero: ${zero.wallMs.toFixed(0)} ms, exit ${zero.exit}: ${zero.stderr.slice(0, 120)}`);
  await capTable(dir, self, options.only.split(',').filter(Boolean));
}

await main();
