import { createLlmJudge } from '../judge/llm.ts';
import { createTechniqueJudge } from '../judge/technique-judge.ts';
import { isTechniqueRef, parseJudgeRef } from '../llm/modelRef.ts';
import type { Scoring } from '../judge/score.ts';
import type { Judge } from '../judge/types.ts';
import type { Strategy } from '../domain/taxonomy.ts';
import { createLlmSimulator } from '../simulator/llm.ts';
import type { UserSimulator } from '../simulator/types.ts';
import { checkModelAvailability, type ModelAvailability } from '../llm/availability.ts';
import { providerOptionsFrom, type LlmSettings } from '../llm/settings.ts';
import type { LlmUsageTracker } from '../llm/usage.ts';

export interface ModelTierContext {
  settings: LlmSettings;
  /** one per run; its summary(turns) is the `llm` section of summary.json */
  tracker: LlmUsageTracker;
  consecutiveLimits?: Partial<Record<Strategy, number>>;
  scoring?: Scoring;
}

/**
 * Whether a model named for a run can serve calls, checked with the run's model settings (hosts,
 * allowed endpoints). A technique judge (`sc-5:ollama:…`) is available when every model it names is.
 */
export async function checkTierModel(ref: string, settings: LlmSettings): Promise<ModelAvailability> {
  const check = (model: string) => checkModelAvailability(model, { allowedHosts: settings.allowedHosts, ollamaHost: settings.ollamaHost });
  if (!isTechniqueRef(ref)) return check(ref);
  let models: string[];
  try {
    models = parseJudgeRef(ref).models;
  } catch (error) {
    return { ref, available: false, reason: 'invalid_reference', detail: (error as Error).message };
  }
  const found = await Promise.all(models.map(check));
  const missing = found.find((f) => !f.available);
  if (missing) return { ...missing, ref, detail: `${missing.ref}: ${missing.detail}` };
  return { ref, available: true, detail: found.map((f) => `${f.ref}: ${f.detail}`).join('; ') };
}

/** The model-driven simulator of a run (src/run/tiers.ts checks the model first). */
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

/** A model-driven judge of a run, a plain LLM judge or a technique judge (`sc-5:…`); src/run/tiers.ts checks the models first. */
export function createModelJudge(ref: string, context: ModelTierContext): Judge {
  const { settings } = context;
  if (isTechniqueRef(ref)) {
    return createTechniqueJudge(ref, { tracker: context.tracker, seed: settings.seed, maxRetries: settings.maxRetries, scoring: context.scoring, provider: providerOptionsFrom(settings) });
  }
  return createLlmJudge(ref, {
    tracker: context.tracker,
    temperature: settings.temperature,
    seed: settings.seed,
    maxRetries: settings.maxRetries,
    scoring: context.scoring,
    provider: providerOptionsFrom(settings),
  });
}
