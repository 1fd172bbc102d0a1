import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { buildConfigurations, checkJudgeBenchModels, datasetFor, runJudgeBench } from '../../judgebench/bench.ts';
import { JudgeBenchConfigSchema, loadJudgeBenchConfig, type JudgeBenchConfig } from '../../judgebench/config.ts';
import { toJsonl } from '../../judgebench/dataset.ts';
import { generateDataset } from '../../judgebench/generator.ts';
import { humanAgreementStudy, readRatings } from '../../judgebench/human.ts';
import { configurationLabel, writeJudgeBenchOutputs } from '../../judgebench/report.ts';
import { TechniqueSchema } from '../../judgebench/techniques.ts';
import { describeZodError } from '../../domain/validation.ts';
import { agreementOverDimensions, type AgreementOverDimensions } from '../../domain/stats.ts';
import { isTechniqueRef } from '../../llm/modelRef.ts';

const list = (value: string) => value.split(',').map((s) => s.trim()).filter(Boolean);

/**
 * `--dataset FILE --judges oracle,ollama:qwen2.5:14b --techniques io,cot-3` as a config object. A
 * judge may also be a campaign judge reference `TECHNIQUE:MODEL_REF` (sc-5:ollama:qwen3:14b), so the
 * judge a lab deploys in `judges:` is the judge it measures here.
 */
function configFromFlags(options: { dataset?: string; judges?: string; techniques?: string; limit?: string; concurrency?: string }): JudgeBenchConfig {
  if (!options.dataset) throw new Error('judge-bench: give a CONFIG file, or --dataset FILE.jsonl with --judges');
  const techniques = list(options.techniques ?? 'io');
  // "oracle" and technique references (sc-5:ollama:…, measured with their own technique) as the config takes them; --techniques applies to plain model references
  const judges = list(options.judges ?? 'oracle').map((j) => (j === 'oracle' || isTechniqueRef(j) ? j : { kind: 'llm' as const, models: [j], techniques }));
  const parsed = JudgeBenchConfigSchema.safeParse({
    name: 'judge-bench',
    dataset: resolve(options.dataset),
    judges,
    ...(options.limit ? { limit: Number(options.limit) } : {}),
    ...(options.concurrency ? { concurrency: Number(options.concurrency) } : {}),
  });
  if (!parsed.success) throw new Error(`judge-bench options: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

export function registerJudgeBenchCommands(program: Command): void {
  registerJudgeBenchCommand(program);
  registerJudgeBenchDatasetCommand(program);
  registerJudgeBenchAgreementCommand(program);
}

function registerJudgeBenchCommand(program: Command): void {
  program
    .command('judge-bench')
    .description('benchmark judges on the contextual-understanding set: precision/recall/F1 overall and per error category, latency, tokens, cost (HTML + JSON)')
    .argument('[config]', 'judge-bench YAML config (see bench-configs/judge-bench/judge-bench.yaml)')
    .requiredOption('--out <dir>', 'output directory (summary.json, results.json, report.html)')
    .option('--dataset <file>', 'JSONL dataset, instead of a config')
    .option('--judges <list>', 'with --dataset: comma-separated "oracle", model references and/or campaign judge references TECHNIQUE:MODEL_REF (sc-5:ollama:qwen3:14b)', 'oracle')
    .option('--techniques <list>', `with --dataset: techniques for the model judges (${TechniqueSchema.options.join(', ')})`, 'io')
    .option('--limit <n>', 'judge only the first n pairs')
    .option('--concurrency <n>', 'pairs judged at once per configuration')
    .action(async (configPath: string | undefined, options: { out: string; dataset?: string; judges?: string; techniques?: string; limit?: string; concurrency?: string }) => {
      const config = configPath ? loadJudgeBenchConfig(configPath) : configFromFlags(options);
      if (configPath && options.limit) config.limit = Number(options.limit);
      const dataset = datasetFor(config);
      await checkJudgeBenchModels(config);
      const { configurations, providers } = buildConfigurations(config);
      const controller = new AbortController();
      const onInterrupt = () => controller.abort();
      process.once('SIGINT', onInterrupt);
      try {
        const output = await runJudgeBench(config.name, dataset, configurations, config.prices, {
          concurrency: config.concurrency,
          method: config.method,
          injection: config.injection,
          signal: controller.signal,
          onPair: (c, done, total) => {
            if (done === total || done % Math.max(50, Math.ceil(total / 4)) === 0) process.stderr.write(`${configurationLabel(c)}: ${done}/${total}\n`);
          },
        });
        const files = writeJudgeBenchOutputs(resolve(options.out), output);
        console.log(`${output.preset.statement}; F1 positive class: ${output.preset.method === 'paper' ? 'correct' : 'wrong'}`);
        for (const s of output.configurations) {
          console.log(
            `${configurationLabel(s).padEnd(36)} P ${s.precision.toFixed(3)}  R ${s.recall.toFixed(3)}  F1 ${s.f1.toFixed(3)}  ${s.meanLatencyMs.toFixed(1)} ms/req  ${s.callsPerRequest.toFixed(2)} calls/req  errors ${s.errors}` +
              (s.injection ? `  injection: ${s.injection.flipped}/${s.injection.rightWithout} flipped` : ''),
          );
        }
        console.log(`wrote ${files.summary}, ${files.results}, ${files.html}`);
        for (const s of output.configurations.filter((c) => c.errors > 0)) {
          const first = output.pairs[configurationLabel(s)].find((r) => r.error)?.error;
          console.error(`warning: ${configurationLabel(s)}: ${s.errors}/${s.pairs} pairs got no verdict (counted as wrong); first error: ${first}`);
          // a configuration that never produced a verdict is a setup problem, not a score
          if (s.errors === s.pairs) process.exitCode = 1;
        }
      } finally {
        process.off('SIGINT', onInterrupt);
        await Promise.all(providers.map((p) => p.close()));
      }
    });
}

function registerJudgeBenchDatasetCommand(program: Command): void {
  program
    .command('judge-bench-dataset')
    .description('generate the contextual-understanding dataset (deterministic from the seed) as JSONL')
    .requiredOption('--out <file>', 'JSONL file to write')
    .option('--seed <n>', 'seed', '1')
    .option('--users <n>', 'user blocks (6 pairs each)', '100')
    .option('--utterance-only', 'leave out the structured preferences')
    .action((options: { out: string; seed: string; users: string; utteranceOnly?: boolean }) => {
      const seed = Number(options.seed);
      const users = Number(options.users);
      if (!Number.isInteger(seed) || !Number.isInteger(users) || users < 1) throw new Error('judge-bench-dataset: --seed and --users must be integers (users ≥ 1)');
      const pairs = generateDataset({ seed, users, includePreferences: !options.utteranceOnly });
      mkdirSync(dirname(resolve(options.out)), { recursive: true });
      writeFileSync(options.out, toJsonl(pairs));
      console.log(`wrote ${pairs.length} pairs to ${options.out}`);
    });
}

function registerJudgeBenchAgreementCommand(program: Command): void {
  program
    .command('judge-bench-agreement')
    .description("judge vs human raters per dimension (Table III: weighted κ, Spearman ρ, pass/fail F1, exact %, within-one %) and the human baseline (Light's κ)")
    .requiredOption('--ratings <file>', 'human ratings, CSV or JSON: rater, conversation, dimension, score[, pass]')
    .requiredOption('--judge <file>', 'judge scores in the same format (rater optional)')
    .option('--weights <kind>', 'κ weights: none, linear, quadratic', 'quadratic')
    .option('--scale <list>', 'the full score scale, e.g. 0,1,2')
    .option('--method <method>', "lab: κ and exact against the raters' majority; paper: Negi et al.'s RQ0, the mean over the judge–rater pairs (needs the same raters on every conversation)", 'lab')
    .option('--json', 'print JSON')
    .action((options: { ratings: string; judge: string; weights: string; scale?: string; method: string; json?: boolean }) => {
      if (!['lab', 'paper'].includes(options.method)) throw new Error(`--method: expected lab or paper, got "${options.method}"`);
      if (!['none', 'linear', 'quadratic'].includes(options.weights)) throw new Error(`--weights: expected none, linear or quadratic, got "${options.weights}"`);
      const scale = options.scale ? list(options.scale).map(Number) : undefined;
      if (scale?.some((s) => !Number.isFinite(s))) throw new Error(`--scale: expected numbers, got "${options.scale}"`);
      const study = humanAgreementStudy(readRatings(options.ratings), readRatings(options.judge), { weights: options.weights as 'none' | 'linear' | 'quadratic', scale });
      if (options.json) {
        console.log(JSON.stringify(study, null, 2));
        return;
      }
      const f = (x: number | null) => (x === null || Number.isNaN(x) ? 'n/a' : x.toFixed(2));
      const paper = options.method === 'paper';
      console.log(
        paper
          ? "method: paper (Negi et al., RQ0): κ, ρ and exact are means over the judge–rater pairs; F1 against the raters' majority vote"
          : "method: lab: κ and exact against the raters' majority score, ρ against their mean; F1 against their majority vote",
      );
      console.log('dimension            items  κ      ρ      F1     exact  ±1     human Light κ');
      for (const d of study) {
        if (paper && !d.pairMean) throw new Error(`${d.dimension}: the paper's pair means need the same raters on every conversation; these ratings are uneven (use --method lab)`);
        const [kappa, rho, exact] = paper ? [d.pairMean!.kappa, d.pairMean!.spearman, d.pairMean!.exact] : [d.kappa, d.spearman, d.exact];
        console.log(
          `${d.dimension.padEnd(20)} ${String(d.items).padStart(5)}  ${f(kappa).padEnd(6)} ${f(rho).padEnd(6)} ${f(d.passFail.f1).padEnd(6)} ${(exact * 100).toFixed(0).padStart(4)}%  ${(d.withinOne * 100).toFixed(0).padStart(4)}%  ${f(d.humanLightsKappa)}`,
        );
      }
      console.log(describeOverDimensions(agreementOverDimensions(study)));
    });
}

/** The single RQ0 figures of Negi et al.'s Table III: the judge's and the raters' pair means, averaged over the dimensions. */
function describeOverDimensions(overall: AgreementOverDimensions): string {
  const f = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : x.toFixed(2));
  const pct = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)}%`);
  const judge = overall.judgePairMean;
  const human = overall.humanPairMean;
  return [
    `mean over ${overall.dimensions} dimension(s): judge–rater pairs κ ${f(judge?.kappa)}, ρ ${f(judge?.spearman)}, exact ${pct(judge?.exact)} (judge vs majority κ ${f(overall.judgeVsMajorityKappa)})`,
    `human–human: rater pairs κ (Light's) ${f(human?.kappa)}, ρ ${f(human?.spearman)}, exact ${pct(human?.exact)}; Fleiss' κ ${f(overall.humanFleissKappa)}`,
  ].join('\n');
}
