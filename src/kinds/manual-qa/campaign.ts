import { ConfigError } from '../../config/yaml.ts';
import type { ContextVector } from '../../domain/context.ts';
import { connectConfiguredHeadUnit } from '../../run/headunit.ts';
import type { ConnectedHeadUnit } from '../../run/connect.ts';
import { MANUAL_QA_FACTS, runPlannedQuestion, type ManualQaJudge, type ManualQaResult, type ManualQaSetup } from './item.ts';
import { loadManualCorpus, manualSkillFor, planManualQa, type LoadedManualQa, type ManualQaConfig } from './config.ts';
import type { GenerationRecord } from '../../manual/generate.ts';
import type { ManualCorpus } from '../../manual/corpus.ts';
import { DeterministicManualEvaluator } from '../../manual/evaluate.ts';
import { searchWarningOmissions, type OmissionSearchResult } from '../../manual/omission.ts';
import type { TestItem } from '../../manual/testset.ts';
import type { LlmUsageTracker } from '../../llm/usage.ts';
import { buildModelTiers } from '../../run/model-tiers.ts';
import type { TiersRecord } from '../../domain/tiers.ts';
import type { InvocationFact, RecordedFact } from '../../run/run-facts.ts';
import { ItemAborted, type KindRig, type OpenOptions } from '../../run/kind.ts';

/**
 * The context every manual question is asked in: manual questions do not depend on where the car
 * is, but the bridge protocol sends a context with every turn.
 */
export const MANUAL_QA_CONTEXT: ContextVector = {
  location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.1642, lon: 11.5786 } },
  date: '2026-05-12',
  time: '12:00',
};

/**
 * The judge tiers a config names, in order (the first decides an item's outcome), built on the run floor's one
 * tier builder (src/run/model-tiers.ts): "oracle" is the deterministic tier; anything else a model reference,
 * checked before the run starts (an unavailable model stops it here with the reason and the fix). The run's
 * `tiers.resolved` fact: the judges, and the test set's questions as the (scripted) user.
 */
export async function buildManualTiers(config: ManualQaConfig, corpus: ManualCorpus, log: (line: string) => void = () => undefined): Promise<{ tiers: ManualQaJudge[]; tracker: LlmUsageTracker | null; record: TiersRecord; modelHosts: InvocationFact['modelHosts'] }> {
  const oracle = new DeterministicManualEvaluator(corpus, config.method);
  const built = await buildModelTiers(
    {
      judges: {
        role: 'judge',
        refs: config.judges,
        deterministic: { oracle: { kind: 'oracle', build: (): ManualQaJudge => ({ tier: 'oracle', evaluate: (item, answer) => oracle.evaluate(item, answer) }) } },
        model: async (ref, models): Promise<ManualQaJudge> => {
          const { LlmManualEvaluator } = await import('../../manual/llm.ts');
          const { settings } = models;
          return new LlmManualEvaluator(ref, corpus, { tracker: models.tracker, temperature: settings.temperature, seed: settings.seed, maxRetries: settings.maxRetries, provider: models.providerOptions, method: config.method });
        },
      },
    },
    config.llm,
    log,
  );
  // the user's turns are the test set's questions: scripted, as a suite's are
  const record: TiersRecord = { simulator: { ref: 'script', kind: 'script', prompts: [] }, judges: built.judges.uses, fallbacks: built.fallbacks };
  return { tiers: built.judges.tiers, tracker: built.tracker, record, modelHosts: built.modelHosts };
}

/** One answered and evaluated question as the store takes it. */
export interface FinishedQuestion {
  result: ManualQaResult;
  /** the question's model calls (llm.calls), stored in its transaction */
  facts: RecordedFact[];
}

/** The manual of a loaded config, read once: the plan and the rig (the evaluators) share it; a resumed run reads it without planning again. */
const corpora = new WeakMap<LoadedManualQa, Promise<ManualCorpus>>();
const corpusOf = (loaded: LoadedManualQa): Promise<ManualCorpus> => {
  const corpus = corpora.get(loaded) ?? loadManualCorpus(loaded);
  corpora.set(loaded, corpus);
  return corpus;
};

/** What generated the planned questions, by loaded config (recorded with the run's setup; none on a resume). */
const generations = new WeakMap<LoadedManualQa, GenerationRecord>();

/** The questions of a new run (generated with the config's model when it asks for that), made once per loaded config. */
export async function plannedQuestions(loaded: LoadedManualQa, log: (line: string) => void = () => undefined): Promise<TestItem[]> {
  const { items, generation } = await planManualQa(loaded, await corpusOf(loaded), log);
  if (generation) generations.set(loaded, generation);
  return items;
}

/**
 * Opens what the questions of a manual-QA run are asked on: the evaluator tiers (models checked first) and the
 * head unit (the reference unit with its manual skill and fault profiles, or the config's unit, or `headUnit`
 * given by a test); after the planned questions, the warning-omission search on the stored questions (the kind's afterItems).
 */
export async function openManualQaRig(loaded: LoadedManualQa, options: OpenOptions & { headUnit?: ConnectedHeadUnit } = {}): Promise<KindRig<TestItem, FinishedQuestion, TestItem[], OmissionSearchResult>> {
  const config = options.overrides?.judges ? { ...loaded.config, judges: options.overrides.judges } : loaded.config;
  if (options.overrides?.simulator) throw new ConfigError(`--simulator: a manual-qa campaign asks the questions of its test set; it has no user simulator`);
  const log = options.log ?? (() => undefined);
  const corpus = await corpusOf(loaded);
  const { tiers, tracker, record: tiersRecord, modelHosts: hosts } = await buildManualTiers(config, corpus, log);
  // the reference unit answers from the manual with its skill; any other head unit answers on its own
  const skill = !options.headUnit && config.headUnit.type === 'reference' ? await manualSkillFor(config, corpus, log) : null;
  let headUnit: ConnectedHeadUnit;
  try {
    headUnit = options.headUnit ?? (await connectConfiguredHeadUnit(config.headUnit, log, skill ? { manual: { skill: skill.skill, faults: config.manualFaults } } : {}));
  } catch (error) {
    await skill?.close();
    throw error;
  }
  const retrieval = skill ? skill.retrieval : options.headUnit ? 'the head unit given to the run' : `the head unit's own (${config.headUnit.type})`;
  let closing: Promise<void> | null = null;
  log(`judges ${tiers.map((t) => t.tier).join(', ')}; retrieval ${retrieval}`);
  return {
    concurrency: config.concurrency,
    meta: { judges: tiers.map((t) => t.tier) },
    envelope: { config, modelHosts: hosts, prices: config.llm.prices, tiers: tiersRecord, tracker, headUnit },
    record(runStore, runId) {
      const generation = generations.get(loaded);
      const testSet = config.testSet ?? (config.generate ? `llm:${config.generate.model}` : 'deterministic');
      runStore.addRunFact(runId, MANUAL_QA_FACTS.setup, { retrieval, judges: tiers.map((t) => t.tier), manual: loaded.files, testSet, ...(generation ? { generation } : {}), assistantFamily: config.assistantFamily ?? null } satisfies ManualQaSetup);
    },
    async run(runId, { key, item }, signal) {
      if (signal.aborted) throw new ItemAborted(key);
      return { result: await runPlannedQuestion(headUnit.connection, item, tiers, `${runId}/${item.id}`, MANUAL_QA_CONTEXT), facts: [] };
    },
    async afterItems(runId, seeds, runLog) {
      if (!config.omissionSearch) throw new Error(`${loaded.path}: run ${runId}: the warning-omission search was asked for, but the config has no omissionSearch`);
      return omissionSearch(config.omissionSearch, seeds, corpus, headUnit, runId, runLog);
    },
    close: () =>
      (closing ??= (async () => {
        if (!options.headUnit) await headUnit.close();
        await skill?.close();
      })()),
  };
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
