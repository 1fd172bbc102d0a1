import { createLlmJudge } from '../judge/llm.ts';
import type { Scoring } from '../judge/score.ts';
import type { Judge } from '../judge/types.ts';
import type { Strategy } from '../domain/taxonomy.ts';
import { createLlmSimulator } from '../simulator/llm.ts';
import type { UserSimulator } from '../simulator/types.ts';
import { checkModelAvailability } from './availability.ts';
import { providerOptionsFrom, type LlmSettings } from './settings.ts';
import type { LlmUsageTracker } from './usage.ts';

export interface ModelTierContext {
  settings: LlmSettings;
  /** one per run; its summary(turns) is the `llm` section of summary.json */
  tracker: LlmUsageTracker;
  consecutiveLimits?: Partial<Record<Strategy, number>>;
  scoring?: Scoring;
  /** where to say plainly which tier is used or why it falls back */
  log: (line: string) => void;
}

/**
 * The model-driven tiers for `icabench run`: checks that the model is available first, and
 * returns null (after logging what is missing and the command that fixes it) so the caller
 * falls back to the deterministic tier instead of failing every conversation.
 */
export async function resolveLlmSimulator(ref: string, context: ModelTierContext): Promise<UserSimulator | null> {
  if (!(await available(ref, 'simulator', 'template', context))) return null;
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

export async function resolveLlmJudge(ref: string, context: ModelTierContext): Promise<Judge | null> {
  if (!(await available(ref, 'judge', 'oracle', context))) return null;
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

async function available(ref: string, role: string, fallback: string, context: ModelTierContext): Promise<boolean> {
  const result = await checkModelAvailability(ref, { allowedHosts: context.settings.allowedHosts, ollamaHost: context.settings.ollamaHost });
  if (result.available) {
    context.log(`${role}: ${ref} (${result.detail})`);
    return true;
  }
  context.log(`${role}: ${ref} is not available — ${result.detail}${result.fix ? `; fix: ${result.fix}` : ''}. Falling back to the ${fallback} tier.`);
  return false;
}
