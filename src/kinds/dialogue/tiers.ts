import type { TierFallback, TiersRecord } from '../../domain/tiers.ts';
import { SCRIPTED_SIMULATOR } from './config.ts';
import { isTechniqueRef } from '../../llm/modelRef.ts';
import { OracleJudge } from '../../judge/oracle.ts';
import type { Judge } from '../../judge/types.ts';
import { promptVersion } from '../../llm/prompts.ts';
import type { LlmUsageTracker } from '../../llm/usage.ts';
import { ScriptedSimulator } from '../../simulator/script.ts';
import { TemplateSimulator } from '../../simulator/template.ts';
import { campaignWorld } from './world.ts';
import type { UserSimulator } from '../../simulator/types.ts';
import { ConfigError, type ConversationsConfig } from './config.ts';
import { buildModelTiers, type ModelStack } from '../../run/model-tiers.ts';

export interface CampaignTiers {
  simulator: UserSimulator;
  /** in precedence order (src/judge/precedence.ts) */
  judges: Judge[];
  /** models the config named that were unavailable and replaced by its `fallback`; recorded with the run */
  fallbacks?: readonly TierFallback[];
  /** records every model call of the run (stored with it as `llm.calls`); absent or null when only deterministic tiers run */
  tracker?: LlmUsageTracker | null;
}

export interface BuiltTiers extends CampaignTiers {
  /** records every model call of the run; null when only deterministic tiers run */
  tracker: LlmUsageTracker | null;
  /** the models that were unavailable and replaced, because the config's `fallback` asks for it */
  fallbacks: TierFallback[];
}



/**
 * Builds the simulator and the judges a config (or the --simulator/--judge overrides) names, in the
 * order given: that order is the judges' precedence (src/judge/precedence.ts). "template" and
 * "oracle" are the deterministic offline tiers; anything else is a model reference, built on the run
 * floor's one tier builder (src/run/model-tiers.ts): every model is checked before anything starts, and an
 * unavailable one stops the run there (TierUnavailableError, naming the model, what was found and the fix)
 * unless the config's `fallback` names a tier for its role; a fallback taken is returned so the run records it.
 */
export async function buildTiers(
  config: ConversationsConfig,
  overrides: { simulator?: string; judges?: string[] } = {},
  log: (line: string) => void = () => undefined,
): Promise<BuiltTiers> {
  const simulatorRef = overrides.simulator ?? config.simulator ?? SCRIPTED_SIMULATOR;
  if (isTechniqueRef(simulatorRef)) throw new ConfigError(`simulator: ${simulatorRef}: techniques (${simulatorRef.split(':')[0]}:…) are judge tiers; the simulator is "template" or a model reference`);
  const world = campaignWorld(config);
  // the dialogue kind's model tiers load their clients only when one is asked for, so offline runs start fast
  const modelTiers = () => import('./model-tiers.ts');
  const context = (models: ModelStack) => ({ settings: models.settings, tracker: models.tracker, providerOptions: models.providerOptions, consecutiveLimits: config.consecutiveLimits ?? {}, scoring: config.scoring, method: config.method });
  const built = await buildModelTiers(
    {
      simulator: {
        role: 'simulator',
        refs: [simulatorRef],
        deterministic: {
          template: { kind: 'template', build: (): UserSimulator => new TemplateSimulator({ consecutiveLimits: config.consecutiveLimits ?? {}, world, method: config.method }) },
          [SCRIPTED_SIMULATOR]: { kind: 'script', build: (): UserSimulator => new ScriptedSimulator() },
        },
        model: async (ref, models): Promise<UserSimulator> => (await modelTiers()).createModelSimulator(ref, context(models)),
        fallback: { ref: 'template', use: config.fallback.simulator !== undefined, configKey: 'fallback: { simulator: template }' },
      },
      judges: {
        role: 'judge',
        refs: overrides.judges ?? config.judges,
        deterministic: { oracle: { kind: 'oracle', build: (): Judge => new OracleJudge(config.scoring, config.safety, world) } },
        model: async (ref, models): Promise<Judge> => (await modelTiers()).createModelJudge(ref, context(models)),
        fallback: { ref: 'oracle', use: config.fallback.judges !== undefined, configKey: 'fallback: { judges: oracle }' },
      },
    },
    config.llm,
    log,
  );
  return { simulator: built.simulator.tiers[0], judges: built.judges.tiers, tracker: built.tracker, fallbacks: built.fallbacks };
}

/** What a run ran with, as recorded in its `tiers.resolved` run fact: references, prompt versions, fallbacks. */
export function describeTiers(tiers: CampaignTiers): TiersRecord {
  const prompts = (ids: readonly string[]) => ids.map(promptVersion);
  return {
    simulator: { ref: tiers.simulator.describe, kind: tiers.simulator.kind, prompts: prompts(tiers.simulator.prompts) },
    judges: tiers.judges.map((judge) => ({ ref: judge.ref, kind: judge.tier, prompts: prompts(judge.prompts) })),
    fallbacks: [...(tiers.fallbacks ?? [])],
  };
}
