import type { TierFallback, TiersRecord } from '../../domain/tiers.ts';
import { isTechniqueRef } from '../../llm/modelRef.ts';
import { OracleJudge } from '../../judge/oracle.ts';
import type { Judge } from '../../judge/types.ts';
import type { ModelAvailability } from '../../llm/availability.ts';
import { promptVersion } from '../../llm/prompts.ts';
import { LlmUsageTracker } from '../../llm/usage.ts';
import { ScriptedSimulator } from '../../simulator/script.ts';
import { TemplateSimulator } from '../../simulator/template.ts';
import { campaignWorld } from './world.ts';
import type { UserSimulator } from '../../simulator/types.ts';
import { ConfigError, type CampaignConfig } from './config.ts';
import type { CampaignTiers } from './rig.ts';
import { checkTierModel, TierUnavailableError } from '../../run/model-tiers.ts';

export interface BuiltTiers extends CampaignTiers {
  /** records every model call of the run; null when only deterministic tiers run */
  tracker: LlmUsageTracker | null;
  /** the models that were unavailable and replaced, because the config's `fallback` asks for it */
  fallbacks: TierFallback[];
}


const DETERMINISTIC = { simulator: 'template', judge: 'oracle' } as const;
type Role = keyof typeof DETERMINISTIC;
const FALLBACK_KEY: Record<Role, string> = { simulator: 'fallback: { simulator: template }', judge: 'fallback: { judges: oracle }' };

/** the scripted user of suites and live sessions (src/simulator/script.ts): deterministic, no model */
export const SCRIPTED_SIMULATOR = 'script';
/** a model reference, not one of the deterministic tiers (template, oracle, script) */
export const isModelRef = (ref: string) => ref !== DETERMINISTIC.simulator && ref !== DETERMINISTIC.judge && ref !== SCRIPTED_SIMULATOR;

function problem(role: Role, found: ModelAvailability): string {
  const lines = [`  ${role} ${found.ref}: ${found.detail}`];
  if (found.fix) lines.push(`    fix: ${found.fix}`);
  // a reference that does not parse is a typo: no fallback covers it
  if (found.reason !== 'invalid_reference') lines.push(`    or, to run with the ${DETERMINISTIC[role]} tier instead, add to the campaign config:  ${FALLBACK_KEY[role]}`);
  return lines.join('\n');
}

/**
 * Builds the simulator and the judges a config (or the --simulator/--judge overrides) names, in the
 * order given: that order is the judges' precedence (src/judge/precedence.ts). "template" and
 * "oracle" are the deterministic offline tiers; anything else is a model reference, and every model
 * is checked before anything starts. An unavailable model stops the run here (TierUnavailableError,
 * naming the model, what was found and the fix) unless the config's `fallback` names a tier for its
 * role; a fallback taken is returned so the run records it.
 */
export async function buildTiers(
  config: CampaignConfig,
  overrides: { simulator?: string; judges?: string[] } = {},
  log: (line: string) => void = () => undefined,
): Promise<BuiltTiers> {
  const simulatorRef = overrides.simulator ?? config.simulator;
  const judgeRefs = overrides.judges ?? config.judges;
  if (new Set(judgeRefs).size !== judgeRefs.length) throw new ConfigError(`judges: ${judgeRefs.join(', ')}: list each judge once (the order is the precedence order)`);
  if (isTechniqueRef(simulatorRef)) throw new ConfigError(`simulator: ${simulatorRef}: techniques (${simulatorRef.split(':')[0]}:…) are judge tiers; the simulator is "template" or a model reference`);
  const modelRefs = [...new Set([simulatorRef, ...judgeRefs].filter(isModelRef))];
  // the model clients load only when a model tier is asked for, so offline runs start fast
  const models = modelRefs.length > 0 ? await import('./model-tiers.ts') : null;
  const availability = new Map(await Promise.all(modelRefs.map(async (ref) => [ref, await checkTierModel(ref, config.llm)] as const)));

  const fallbacks: TierFallback[] = [];
  const problems: string[] = [];
  /** the reference that runs for `ref`: itself when available, the configured fallback, or null (a problem) */
  const resolve = (role: Role, ref: string, fallback: string | undefined): string | null => {
    if (!isModelRef(ref)) return ref;
    const found = availability.get(ref)!;
    if (found.available) {
      log(`${role}: ${ref} (${found.detail})`);
      return ref;
    }
    if (fallback && found.reason !== 'invalid_reference') {
      const replacedBy = DETERMINISTIC[role];
      fallbacks.push({ role, requested: ref, replacedBy, reason: found.detail, fix: found.fix ?? null });
      log(`${role}: ${ref} is not available (${found.detail}); the ${replacedBy} tier runs instead, as the config's fallback asks`);
      return replacedBy;
    }
    problems.push(problem(role, found));
    return null;
  };
  const simulatorResolved = resolve('simulator', simulatorRef, config.fallback.simulator);
  const judgesResolved = judgeRefs.map((ref) => resolve('judge', ref, config.fallback.judges));
  if (simulatorResolved === null || judgesResolved.includes(null)) throw new TierUnavailableError(problems);
  // a judge replaced by the oracle takes its place in the precedence order; the oracle judges once
  const judgesUsed = [...new Set(judgesResolved as string[])];

  const usesModels = [simulatorResolved, ...judgesUsed].some(isModelRef);
  const tracker = usesModels ? new LlmUsageTracker({ prices: config.llm.prices }) : null;
  const context = { settings: config.llm, tracker: tracker!, consecutiveLimits: config.consecutiveLimits, scoring: config.scoring };
  const world = campaignWorld(config);
  const simulator: UserSimulator = isModelRef(simulatorResolved)
    ? models!.createModelSimulator(simulatorResolved, context)
    : simulatorResolved === SCRIPTED_SIMULATOR
      ? new ScriptedSimulator()
      : new TemplateSimulator({ consecutiveLimits: config.consecutiveLimits, world });
  const judges: Judge[] = judgesUsed.map((ref) => (isModelRef(ref) ? models!.createModelJudge(ref, context) : new OracleJudge(config.scoring, config.safety, world)));
  return { simulator, judges, tracker, fallbacks };
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
