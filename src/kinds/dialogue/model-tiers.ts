import { createLlmJudge } from '../../judge/llm.ts';
import { createTechniqueJudge } from '../../judge/technique-judge.ts';
import { isTechniqueRef } from '../../llm/modelRef.ts';
import type { Scoring } from '../../judge/score.ts';
import type { Judge } from '../../judge/types.ts';
import type { Strategy } from '../../domain/taxonomy.ts';
import type { Method } from '../../domain/method.ts';
import { createLlmSimulator } from '../../simulator/llm.ts';
import type { UserSimulator } from '../../simulator/types.ts';
import type { LlmSettings } from '../../llm/settings.ts';
import type { ProviderOptions } from '../../llm/index.ts';
import type { LlmUsageTracker } from '../../llm/usage.ts';
import { dialogueWorkedExamples } from './technique-examples.ts';

/** The dialogue kind's model tiers: the LLM simulator and the LLM and technique judges, built with the config's `llm:` settings. */

export interface ModelTierContext {
  settings: LlmSettings;
  /** one per run; its summary(turns) is the `llm` section of summary.json */
  tracker: LlmUsageTracker;
  /** the run's one set of provider options (src/run/model-tiers.ts ModelStack): one request cache, one endpoint policy */
  providerOptions: ProviderOptions;
  consecutiveLimits?: Partial<Record<Strategy, number>>;
  scoring?: Scoring;
  /** the config's `method:`; a technique judge takes the paper's parameters under `paper` (src/llm/technique.ts) */
  method?: Method;
}

/** The model-driven simulator of a run (src/kinds/dialogue/tiers.ts checks the model first). */
export function createModelSimulator(ref: string, context: ModelTierContext): UserSimulator {
  const { settings } = context;
  return createLlmSimulator(ref, {
    tracker: context.tracker,
    temperature: settings.temperature,
    seed: settings.seed,
    maxRetries: settings.maxRetries,
    consecutiveLimits: context.consecutiveLimits,
    provider: context.providerOptions,
  });
}

/** A model-driven judge of a run, a plain LLM judge or a technique judge (`sc-5:…`); src/kinds/dialogue/tiers.ts checks the models first. */
export function createModelJudge(ref: string, context: ModelTierContext): Judge {
  const { settings } = context;
  if (isTechniqueRef(ref)) {
    return createTechniqueJudge(ref, { workedExamples: dialogueWorkedExamples, tracker: context.tracker, seed: settings.seed, maxRetries: settings.maxRetries, scoring: context.scoring, provider: context.providerOptions, method: context.method });
  }
  return createLlmJudge(ref, {
    tracker: context.tracker,
    temperature: settings.temperature,
    seed: settings.seed,
    maxRetries: settings.maxRetries,
    scoring: context.scoring,
    provider: context.providerOptions,
  });
}
