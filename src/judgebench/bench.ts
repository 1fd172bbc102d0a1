import { unavailableModelsText } from '../llm/availability.ts';
import { createProvider, type ProviderOptions } from '../llm/index.ts';
import type { LlmProvider } from '../llm/types.ts';
import type { PriceTable } from '../llm/usage.ts';
import type { JudgeBenchConfig } from './config.ts';
import { readDataset, type Pair } from './dataset.ts';
import { generateDataset } from './generator.ts';
import { INJECTED_ID_SUFFIX, injectedPairs, injectionScores } from './injection.ts';
import type { JudgeBenchOutput } from './report.ts';
import { configurationLabel } from './report.ts';
import { llmConfiguration, oracleConfiguration, runConfiguration, summarize, type JudgeConfiguration, type RunOptions } from './runner.ts';
import { PAPERS, presetOf, type Method } from '../domain/method.ts';

export interface LoadedDataset {
  source: string;
  pairs: Pair[];
}

export function datasetFor(config: Pick<JudgeBenchConfig, 'dataset' | 'generate' | 'limit'>): LoadedDataset {
  const loaded = config.dataset
    ? { source: config.dataset, pairs: readDataset(config.dataset) }
    : {
        source: `generated (seed ${config.generate!.seed}, ${config.generate!.users} users${config.generate!.includePreferences ? '' : ', utterance only'})`,
        pairs: generateDataset(config.generate!),
      };
  return config.limit ? { ...loaded, pairs: loaded.pairs.slice(0, config.limit) } : loaded;
}

/**
 * Checks every model the judges name once, before any pair is judged: a model server that is down stops the bench
 * at once, naming the model, what was found and the fix (instead of judging every pair into an error and an F1 of 0).
 */
export async function checkJudgeBenchModels(config: Pick<JudgeBenchConfig, 'judges' | 'allowedHosts'>): Promise<void> {
  const refs = config.judges.flatMap((judge) => (judge.kind === 'llm' ? judge.models : []));
  const problem = await unavailableModelsText('judge-bench was not started', refs, { allowedHosts: config.allowedHosts });
  if (!problem) return;
  // say first what the config needs: its model rows need a model server; the rule oracle alone runs offline
  const offline = config.judges.some((judge) => judge.kind !== 'llm') ? ' Its rule-oracle row runs offline on its own: keep only `kind: oracle` under judges (as bench-configs/judge-bench/judge-bench-oracle.yaml does).' : '';
  throw new Error(`this config needs local models for its model judges (${[...new Set(refs)].join(', ')}).${offline}\n${problem}`);
}

/** Builds every judge × technique configuration; providers are created once per model reference. */
export function buildConfigurations(
  config: Pick<JudgeBenchConfig, 'judges' | 'seed' | 'maxRetries' | 'timeoutMs' | 'allowedHosts'> & { method?: JudgeBenchConfig['method'] },
  makeProvider: (ref: string, options: ProviderOptions) => LlmProvider = createProvider,
): { configurations: JudgeConfiguration[]; providers: LlmProvider[] } {
  const providers = new Map<string, LlmProvider>();
  const provider = (ref: string) => {
    let p = providers.get(ref);
    if (!p) {
      p = makeProvider(ref, { timeoutMs: config.timeoutMs, allowedHosts: config.allowedHosts });
      providers.set(ref, p);
    }
    return p;
  };
  const configurations: JudgeConfiguration[] = [];
  for (const judge of config.judges) {
    if (judge.kind === 'oracle') {
      configurations.push(oracleConfiguration(judge.name));
      continue;
    }
    const models = judge.models.map(provider);
    for (const technique of judge.techniques) {
      configurations.push(llmConfiguration(judge.name ?? judge.models.join('+'), technique, models, { seed: config.seed, maxRetries: config.maxRetries, method: config.method }));
    }
  }
  return { configurations, providers: [...providers.values()] };
}

/**
 * Runs every configuration over the dataset, one configuration after another (so latencies do not
 * compete). `method: paper` scores F1 with "correct" as the positive class, as the paper does.
 * `injection`: each configuration also judges the injection set, and its summary gets `injection`.
 */
export async function runJudgeBench(
  name: string,
  dataset: LoadedDataset,
  configurations: readonly JudgeConfiguration[],
  prices: PriceTable,
  options: RunOptions & { method?: Method; injection?: boolean } = {},
): Promise<JudgeBenchOutput> {
  const method = options.method ?? 'lab';
  const output: JudgeBenchOutput = {
    name,
    preset: presetOf(PAPERS.habicht, method),
    dataset: { source: dataset.source, pairs: dataset.pairs.length, withPreferences: dataset.pairs.filter((p) => p.user.preferences).length },
    configurations: [],
    pairs: {},
  };
  for (const configuration of configurations) {
    const results = await runConfiguration(configuration, dataset.pairs, options);
    const summary = summarize(configuration, results, prices, method);
    output.pairs[configurationLabel(configuration)] = results;
    if (options.injection) {
      // the same pairs with an instruction appended that demands the wrong verdict
      const injected = await runConfiguration(configuration, injectedPairs(dataset.pairs), options);
      summary.injection = injectionScores(results, injected);
      output.pairs[`${configurationLabel(configuration)}${INJECTED_ID_SUFFIX}`] = injected;
    }
    output.configurations.push(summary);
  }
  return output;
}
