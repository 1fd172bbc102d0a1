import { precisionRecallF1 } from '../domain/stats.ts';
import type { PriceTable } from '../llm/usage.ts';
import type { LlmProvider } from '../llm/types.ts';
import { ERROR_CATEGORIES, RULE_CATEGORIES, type ErrorCategory, type Pair } from './dataset.ts';
import { oracleVerdict } from './oracle.ts';
import { judgePair, type PairJudgment, type Technique, type TechniqueOptions } from './techniques.ts';
import { runPool } from '../domain/pool.ts';
import { PAPERS, presetOf, type Method, type Preset } from '../domain/method.ts';

/**
 * Runs judge configurations (a judge with one technique) over a dataset and scores them.
 * Precision/recall/F1 are about one positive class: "wrong" (lab default: the judge's job is to
 * catch mismatches, so the scores are about detecting them) or "correct" (Habicht et al.'s
 * convention: their precision/recall tables are only consistent with the fitting recommendations
 * as the positive class).
 */
export const POSITIVE_CLASSES = ['wrong', 'correct'] as const;
export type PositiveClass = (typeof POSITIVE_CLASSES)[number];

export interface JudgeConfiguration {
  judge: string;
  technique: Technique | 'rules';
  models: string[];
  judgePair(pair: Pair, signal?: AbortSignal): Promise<PairJudgment>;
}

export function oracleConfiguration(name = 'oracle'): JudgeConfiguration {
  return {
    judge: name,
    technique: 'rules',
    models: [],
    judgePair: async (pair) => ({ fits: oracleVerdict(pair).fits, calls: 0, tokensIn: 0, tokensOut: 0 }),
  };
}

export function llmConfiguration(judge: string, technique: Technique, providers: readonly LlmProvider[], options: Omit<TechniqueOptions, 'signal'> = {}): JudgeConfiguration {
  return {
    judge,
    technique,
    models: providers.map((p) => p.ref),
    judgePair: (pair, signal) => judgePair(technique, providers, pair, { ...options, signal }),
  };
}

export interface InjectionScores {
  pairs: number;
  /** pairs the judge got right without the instruction */
  rightWithout: number;
  /** of those, pairs it judged as the instruction demanded once the instruction was there */
  flipped: number;
  /** flipped ÷ rightWithout: how often an appended instruction turned a right verdict into the one it asked for; null when nothing was right */
  susceptibility: number | null;
}

export interface PairResult {
  id: string;
  label: boolean;
  errorCategory: ErrorCategory;
  fits: boolean | null;
  correct: boolean;
  latencyMs: number;
  calls: number;
  tokensIn: number;
  tokensOut: number;
  byModel?: Record<string, { tokensIn: number; tokensOut: number }>;
  votes?: boolean[];
  error?: string;
}

export interface CategoryScores {
  pairs: number;
  /** share of this category's pairs judged right */
  accuracy: number | null;
  /** detection of this error kind among the correct pairs and this kind's pairs (null for "none") */
  precision: number | null;
  recall: number | null;
  f1: number | null;
}

export interface ConfigurationSummary {
  /** lab defaults or the paper preset, in one line */
  preset: Preset;
  judge: string;
  /** the class precision, recall and F1 are about: wrong (lab) or correct (paper) */
  positiveClass: PositiveClass;
  technique: Technique | 'rules';
  models: string[];
  pairs: number;
  precision: number;
  recall: number;
  f1: number;
  accuracy: number;
  perCategoryAccuracy: Record<ErrorCategory, number | null>;
  perCategory: Record<ErrorCategory, CategoryScores>;
  meanLatencyMs: number;
  /** total tokens over the dataset */
  tokensIn: number;
  tokensOut: number;
  /** USD per judged pair from the price table (0 for local models) */
  costPerRequest: number;
  /** model calls in total (retries included) */
  calls: number;
  callsPerRequest: number;
  /** pairs on which the judge produced no verdict (all calls failed); counted as wrong */
  errors: number;
  /** with the injection set (`injection: true`): how often an appended instruction flipped a right verdict (src/judgebench/injection.ts) */
  injection?: InjectionScores;
}

export interface RunOptions {
  concurrency?: number;
  signal?: AbortSignal;
  onPair?: (configuration: JudgeConfiguration, done: number, total: number) => void;
}

export async function runConfiguration(configuration: JudgeConfiguration, pairs: readonly Pair[], options: RunOptions = {}): Promise<PairResult[]> {
  const results = new Array<PairResult>(pairs.length);
  let done = 0;
  const work = async (pair: Pair, index: number): Promise<void> => {
    if (options.signal?.aborted) throw new Error('judge-bench: aborted');
    const started = performance.now();
    let judgment: PairJudgment;
    try {
      judgment = await configuration.judgePair(pair, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      judgment = { fits: null, calls: 0, tokensIn: 0, tokensOut: 0, error: (error as Error).message };
    }
    const latencyMs = performance.now() - started;
    results[index] = {
      id: pair.id,
      label: pair.label,
      errorCategory: pair.error_category,
      fits: judgment.fits,
      correct: judgment.fits === pair.label,
      latencyMs,
      calls: judgment.calls,
      tokensIn: judgment.tokensIn,
      tokensOut: judgment.tokensOut,
      ...(judgment.byModel ? { byModel: judgment.byModel } : {}),
      ...(judgment.votes ? { votes: judgment.votes } : {}),
      ...(judgment.error ? { error: judgment.error } : {}),
    };
    options.onPair?.(configuration, ++done, pairs.length);
  };
  await runPool(pairs, work, { concurrency: options.concurrency ?? 4 });
  return results;
}

/** The judge's call on the positive class; a missing verdict counts as the wrong answer, so errors lower the scores instead of vanishing. */
function predictedPositive(r: PairResult, positive: PositiveClass): boolean {
  const fits = r.fits === null ? !r.label : r.fits;
  return positive === 'correct' ? fits : !fits;
}
const actuallyPositive = (r: PairResult, positive: PositiveClass): boolean => (positive === 'correct' ? r.label : !r.label);

function costOf(results: readonly PairResult[], prices: PriceTable): number {
  let usd = 0;
  for (const r of results) {
    for (const [ref, t] of Object.entries(r.byModel ?? {})) {
      const price = prices[ref];
      if (price) usd += (t.tokensIn * price.inputPerMTokUsd + t.tokensOut * price.outputPerMTokUsd) / 1e6;
    }
  }
  return usd;
}

export function summarize(configuration: JudgeConfiguration, results: readonly PairResult[], prices: PriceTable = {}, method: Method = 'lab'): ConfigurationSummary {
  const positive: PositiveClass = method === 'paper' ? 'correct' : 'wrong';
  const scores = (subset: readonly PairResult[]) => precisionRecallF1(subset.map((r) => predictedPositive(r, positive)), subset.map((r) => actuallyPositive(r, positive)));
  const overall = scores(results);
  const perCategory = {} as Record<ErrorCategory, CategoryScores>;
  const perCategoryAccuracy = {} as Record<ErrorCategory, number | null>;
  for (const category of ERROR_CATEGORIES) {
    const own = results.filter((r) => r.errorCategory === category);
    const accuracy = own.length ? own.filter((r) => r.correct).length / own.length : null;
    let detection: { precision: number; recall: number; f1: number } | null = null;
    if ((RULE_CATEGORIES as readonly string[]).includes(category) && own.length) {
      const subset = results.filter((r) => r.errorCategory === category || r.errorCategory === 'none');
      detection = scores(subset);
    }
    perCategory[category] = { pairs: own.length, accuracy, precision: detection?.precision ?? null, recall: detection?.recall ?? null, f1: detection?.f1 ?? null };
    perCategoryAccuracy[category] = accuracy;
  }
  const n = results.length;
  const calls = results.reduce((s, r) => s + r.calls, 0);
  return {
    preset: presetOf(PAPERS.habicht, method),
    judge: configuration.judge,
    positiveClass: positive,
    technique: configuration.technique,
    models: configuration.models,
    pairs: n,
    precision: overall.precision,
    recall: overall.recall,
    f1: overall.f1,
    accuracy: overall.accuracy,
    perCategoryAccuracy,
    perCategory,
    meanLatencyMs: n ? results.reduce((s, r) => s + r.latencyMs, 0) / n : 0,
    tokensIn: results.reduce((s, r) => s + r.tokensIn, 0),
    tokensOut: results.reduce((s, r) => s + r.tokensOut, 0),
    costPerRequest: n ? costOf(results, prices) / n : 0,
    calls,
    callsPerRequest: n ? calls / n : 0,
    errors: results.filter((r) => r.fits === null).length,
  };
}
