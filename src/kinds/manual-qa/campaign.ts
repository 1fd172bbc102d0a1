import { z } from 'zod';
import { ConfigError } from '../dialogue/config.ts';
import type { ContextVector } from '../../domain/context.ts';
import { parseOrThrow } from '../../domain/validation.ts';
import { runPool } from '../../domain/pool.ts';
import { connectConfiguredHeadUnit } from '../../run/headunit.ts';
import type { ConnectedHeadUnit } from '../../run/connect.ts';
import type { ResultStore } from '../../store/store.ts';
import { MANUAL_QA_KIND, runPlannedQuestion, type ManualEvaluatorTier, type ManualQaResult } from './item.ts';
import { manualSkillFor, planManualQa, type LoadedManualQa, type ManualQaConfig } from './config.ts';
import type { ManualCorpus } from '../../manual/corpus.ts';
import { DeterministicManualEvaluator } from '../../manual/evaluate.ts';
import { metricFails, MANUAL_METRICS } from '../../manual/model.ts';
import { searchWarningOmissions, type OmissionSearchResult } from '../../manual/omission.ts';
import { TestItemSchema, type TestItem } from '../../manual/testset.ts';
import type { LlmUsageTracker } from '../../llm/usage.ts';
import { arch, platform } from 'node:os';
import { modelHostsOf } from '../../run/rig.ts';
import { icabenchVersion, LlmCallRecorder, recordRunFact, RUN_FACTS } from '../../run/run-facts.ts';
import { resumedRun, runEndStatus, type RunEndStatus } from '../../run/resume.ts';

/** Run facts a manual-QA run records besides its item results. */
export const MANUAL_QA_FACTS = {
  /** what ran: retrieval, evaluator tiers, manual files (one per invocation) */
  setup: 'manual_qa_setup',
  /** the warning-omission search's result (once, after the planned questions) */
  omission: 'manual_omission_search',
} as const;

export const ManualQaSetupSchema = z.object({ retrieval: z.string(), evaluators: z.array(z.string()), manual: z.array(z.string()), testSet: z.string() });
export type ManualQaSetup = z.infer<typeof ManualQaSetupSchema>;

/**
 * The context every manual question is asked in: manual questions do not depend on where the car
 * is, but the bridge protocol sends a context with every turn.
 */
export const MANUAL_QA_CONTEXT: ContextVector = {
  location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.1642, lon: 11.5786 } },
  date: '2026-05-12',
  time: '12:00',
};

/** An item's one-word verdict by the first evaluator tier: pass (judged, nothing flagged), fail (a metric judged below 1), inconclusive (nothing judged, or the tier failed), error (the head unit failed). */
export type ManualItemOutcome = 'pass' | 'fail' | 'inconclusive' | 'error';

export function manualItemOutcome(result: ManualQaResult): ManualItemOutcome {
  if (result.status === 'sut_error') return 'error';
  const deciding = result.evaluations[0];
  if (!deciding || deciding.outcome === 'judge_error') return 'inconclusive';
  const values = MANUAL_METRICS.map((m) => deciding.metrics[m]);
  if (values.some(metricFails)) return 'fail';
  return values.some((v) => v?.status === 'judged') ? 'pass' : 'inconclusive';
}

/**
 * The evaluator tiers a config names, in order (the first decides an item's outcome): "oracle" is
 * the deterministic tier; anything else a model reference, checked before the run starts (an
 * unavailable model stops it here with the reason and the fix).
 */
export async function buildManualTiers(config: ManualQaConfig, corpus: ManualCorpus, log: (line: string) => void = () => undefined): Promise<{ tiers: ManualEvaluatorTier[]; tracker: LlmUsageTracker | null }> {
  const refs = config.evaluators;
  if (new Set(refs).size !== refs.length) throw new ConfigError(`evaluators: ${refs.join(', ')}: list each evaluator once`);
  const modelRefs = refs.filter((r) => r !== 'oracle');
  let tracker: LlmUsageTracker | null = null;
  const models = new Map<string, ManualEvaluatorTier>();
  if (modelRefs.length) {
    const { checkTierModel } = await import('../../run/model-tiers.ts');
    const { providerOptionsFrom } = await import('../../llm/settings.ts');
    const { LlmUsageTracker } = await import('../../llm/usage.ts');
    const { LlmManualEvaluator } = await import('../../manual/llm.ts');
    const problems: string[] = [];
    for (const ref of modelRefs) {
      const found = await checkTierModel(ref, config.llm);
      if (!found.available) problems.push(`  evaluator ${ref}: ${found.detail}${found.fix ? `\n    fix: ${found.fix}` : ''}`);
      else log(`evaluator: ${ref} (${found.detail})`);
    }
    if (problems.length) throw new ConfigError(`the run was not started, nothing was recorded: evaluator models are not available\n${problems.join('\n')}`);
    tracker = new LlmUsageTracker({ prices: config.llm.prices });
    for (const ref of modelRefs) {
      models.set(ref, new LlmManualEvaluator(ref, corpus, { tracker, temperature: config.llm.temperature, seed: config.llm.seed, maxRetries: config.llm.maxRetries, provider: providerOptionsFrom(config.llm), method: config.method }));
    }
  }
  const oracle = new DeterministicManualEvaluator(corpus);
  const tiers = refs.map((ref): ManualEvaluatorTier => (ref === 'oracle' ? { tier: 'oracle', evaluate: (item, answer) => oracle.evaluate(item, answer) } : models.get(ref)!));
  return { tiers, tracker };
}

export interface RunManualQaOptions {
  store: ResultStore;
  /** continue this run instead of starting a new one */
  resumeRunId?: string;
  /** abort = graceful stop: no new question is asked; unanswered ones are asked on resume */
  signal?: AbortSignal;
  log?: (line: string) => void;
  onProgress?: (done: number, planned: number) => void;
  /** an already connected system under test (tests); default: the config's headUnit with the manual skill */
  headUnit?: ConnectedHeadUnit;
}

export interface RunManualQaResult {
  runId: string;
  status: RunEndStatus;
  /** why the run stopped by itself before its end (the head unit left and did not come back); null otherwise */
  stopReason: string | null;
  done: number;
  planned: number;
  omission: OmissionSearchResult | null;
}

/**
 * Runs a manual-QA campaign: plans the questions (or, on resume, reloads the unanswered ones),
 * brings up the head unit (the reference unit with its manual skill and fault profiles), asks every
 * question as an ordinary user turn of its own session, evaluates each answer with every tier and
 * stores it as one item result; then, once all questions are answered, the warning-omission search.
 */
export async function runManualQa(loaded: LoadedManualQa, options: RunManualQaOptions): Promise<RunManualQaResult> {
  const { store } = options;
  const { config } = loaded;
  const log = options.log ?? (() => undefined);
  const resumed = resumedRun(store, options.resumeRunId, MANUAL_QA_KIND);

  // everything that can fail comes up before the run is recorded
  const { corpus, items } = await planManualQa(loaded);
  const { tiers, tracker } = await buildManualTiers(config, corpus, log);
  // the reference unit answers from the manual with its skill; any other head unit answers on its own
  const skill = !options.headUnit && config.headUnit.type === 'reference' ? await manualSkillFor(config, corpus, log) : null;
  let headUnit: ConnectedHeadUnit;
  try {
    headUnit = options.headUnit ?? (await connectConfiguredHeadUnit(config.headUnit, log, skill ? { manual: { skill: skill.skill, faults: config.manualFaults } } : {}));
  } catch (error) {
    await skill?.close();
    throw error;
  }
  const close = async () => {
    if (!options.headUnit) await headUnit.close();
    await skill?.close();
  };
  const retrieval = skill ? skill.retrieval : options.headUnit ? 'the head unit given to the run' : `the head unit's own (${config.headUnit.type})`;

  let runId: string;
  try {
    if (resumed) {
      runId = resumed.id;
      store.setRunStatus(runId, 'running');
    } else {
      runId = store.createItemRun({ name: config.name, kind: MANUAL_QA_KIND, config, plan: items.map((item) => ({ key: item.id, item })) });
    }
    recordRunFact(store, runId, RUN_FACTS.invocation, {
      icabench: icabenchVersion(),
      node: process.version,
      platform: platform(),
      arch: arch(),
      modelHosts: await modelHostsOf(config.evaluators, config.llm.ollamaHost),
      llmPrices: config.llm.prices,
      config,
    });
    store.addRunFact(runId, MANUAL_QA_FACTS.setup, {
      retrieval,
      evaluators: tiers.map((t) => t.tier),
      manual: loaded.files,
      testSet: config.testSet ?? 'deterministic',
    } satisfies ManualQaSetup);
  } catch (error) {
    await close();
    throw error;
  }
  // every model call is stored with the run (llm.calls facts), after each question and at the end
  const calls = tracker ? new LlmCallRecorder(() => tracker.records) : null;
  const plan = store.itemResults(runId).map((row, i) => parseOrThrow(TestItemSchema, row.item, `${store.path}: run ${runId} item ${i + 1}`));
  const remaining = store.remainingItems(runId).map((row) => parseOrThrow(TestItemSchema, row.item, `${store.path}: run ${runId} item "${row.key}"`));
  const planned = plan.length;
  let done = planned - remaining.length;
  const budgetMs = config.budgetMinutes ? config.budgetMinutes * 60_000 : null;
  const started = Date.now();
  let budgetHit = false;
  let stopReason: string | null = null;
  log(`run ${runId}: ${planned} questions planned, ${remaining.length} to ask; evaluators ${tiers.map((t) => t.tier).join(', ')}; retrieval ${retrieval}`);

  const beforeTake = async (): Promise<boolean> => {
    if (options.signal?.aborted || stopReason) return false;
    if (budgetMs !== null && Date.now() - started >= budgetMs) {
      budgetHit = true;
      return false;
    }
    // no question is asked while the head unit is away: one that does not come back stops the run (resumable)
    try {
      await headUnit.ensureReady();
    } catch (error) {
      stopReason ??= (error as Error).message;
      return false;
    }
    return !options.signal?.aborted && !stopReason;
  };

  const work = async (item: TestItem): Promise<void> => {
    const result = await runPlannedQuestion(headUnit.connection, item, tiers, `${runId}/${item.id}`, MANUAL_QA_CONTEXT);
    store.saveItemResult(runId, item.id, manualItemOutcome(result), result);
    calls?.flush(store, runId, item.id);
    done++;
    options.onProgress?.(done, planned);
  };

  let omission: OmissionSearchResult | null = null;
  try {
    await runPool(remaining, work, { concurrency: config.concurrency, beforeTake });
    const finished = !options.signal?.aborted && !stopReason && !budgetHit && done === planned;
    if (finished && config.omissionSearch && store.runFacts(runId, MANUAL_QA_FACTS.omission).length === 0) {
      omission = await omissionSearch(config.omissionSearch, plan, corpus, headUnit, runId, log);
      store.addRunFact(runId, MANUAL_QA_FACTS.omission, omission);
    }
  } finally {
    calls?.flush(store, runId, null, true);
    await close();
  }
  const status = runEndStatus({ aborted: options.signal?.aborted === true, stopReason, budgetHit, done, planned });
  store.setRunStatus(runId, status);
  if (stopReason) log(`run ${runId} stopped: ${stopReason}`);
  return { runId, status, stopReason, done, planned, omission };
}

async function omissionSearch(
  settings: NonNullable<ManualQaConfig['omissionSearch']>,
  seeds: readonly TestItem[],
  corpus: ManualCorpus,
  headUnit: ConnectedHeadUnit,
  runId: string,
  log: (line: string) => void,
): Promise<OmissionSearchResult> {
  let n = 0;
  const ask = async (question: string) => {
    await headUnit.ensureReady();
    const session = await headUnit.connection.openSession(`${runId}/omission-${n++}`, MANUAL_QA_CONTEXT);
    try {
      return (await session.send(0, question, MANUAL_QA_CONTEXT)).text;
    } finally {
      await session.close().catch(() => undefined);
    }
  };
  const result = await searchWarningOmissions(seeds, ask, new DeterministicManualEvaluator(corpus), settings);
  log(`warning-omission search: ${result.asked} phrasings asked, ${result.omissions} left a warning out (${(result.omissionRate * 100).toFixed(1)}%), ${result.findings.length} distinct failing questions`);
  return result;
}
