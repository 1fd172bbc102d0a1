import { createLlmJudge } from '../judge/llm.ts';
import type { Scoring } from '../judge/score.ts';
import type { Judge } from '../judge/types.ts';
import type { Strategy } from '../domain/taxonomy.ts';
import { createLlmSimulator } from '../simulator/llm.ts';
import type { UserSimulator } from '../simulator/types.ts';
import { checkModelAvailability, type ModelAvailability } from './availability.ts';
import { providerOptionsFrom, type LlmSettings } from './settings.ts';
import type { LlmUsageTracker } from './usage.ts';

export interface ModelTierContext {
  settings: LlmSettings;
  /** one per run; its summary(turns) is the `llm` section of summary.json */
  tracker: LlmUsageTracker;
  consecutiveLimits?: Partial<Record<Strategy, number>>;
  scoring?: Scoring;
}

/** Whether a model named for a run can serve calls, checked with the run's model settings (hosts, allowed endpoints). */
export function checkTierModel(ref: string, settings: LlmSettings): Promise<ModelAvailability> {
  return checkModelAvailability(ref, { allowedHosts: settings.allowedHosts, ollamaHost: settings.ollamaHost });
}

/** The model-driven simulator of a run (src/campaign/tiers.ts checks the model first). */
export function createModelSimulator(ref: string, context: ModelTierContext): UserSimulator {
  const { settings } = context;
  return createLlmSimulator(ref, {
    tracker: context.tracker,
    temperature: settings.temperature,
    seed: settings.seed,
    maxRetries: settings.maxRetries,
    consecutiveLimits: context.consecutiveLimits,
    provider: providerOptionsFrom(settings),
  });
}

/** A model-driven judge of a run (src/campaign/tiers.ts checks the model first). */
export function createModelJudge(ref: string, context: ModelTierContext): Judge {
  const { settings } = context;
  return createLlmJudge(ref, {
    tracker: context.tracker,
    temperature: settings.temperature,
    seed: settings.seed,
    maxRetries: settings.maxRetries,
    scoring: context.scoring,
    provider: providerOptionsFrom(settings),
  });
}
