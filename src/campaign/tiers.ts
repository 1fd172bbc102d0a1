import { OracleJudge } from '../judge/oracle.ts';
import type { Judge } from '../judge/types.ts';
import { LlmUsageTracker } from '../llm/usage.ts';
import { TemplateSimulator } from '../simulator/template.ts';
import type { UserSimulator } from '../simulator/types.ts';
import type { CampaignConfig } from './config.ts';
import type { CampaignTiers } from './runner.ts';

export interface BuiltTiers extends CampaignTiers {
  /** records every model call of the run; null when only deterministic tiers run */
  tracker: LlmUsageTracker | null;
}

/**
 * Builds the simulator and the judge tiers a config (or the --simulator/--judge overrides) names.
 * "template" and "oracle" are the deterministic offline tiers; anything else is a model reference.
 * A model that is not available is reported (with the command that fixes it) and its role falls
 * back to the deterministic tier, so a run says plainly what it used.
 */
export async function buildTiers(
  config: CampaignConfig,
  overrides: { simulator?: string; judges?: string[] } = {},
  log: (line: string) => void = () => undefined,
): Promise<BuiltTiers> {
  const simulatorRef = overrides.simulator ?? config.simulator;
  const judgeRefs = overrides.judges ?? config.judges;
  const usesModels = [simulatorRef, ...judgeRefs].some((r) => r !== 'template' && r !== 'oracle');
  const tracker = usesModels ? new LlmUsageTracker({ prices: config.llm.prices }) : null;
  // the model clients load only when a model tier is asked for, so offline runs start fast
  const models = usesModels ? await import('../llm/tiers.ts') : null;
  const context = { settings: config.llm, tracker: tracker!, consecutiveLimits: config.consecutiveLimits, scoring: config.scoring, log };

  const template = () => new TemplateSimulator({ consecutiveLimits: config.consecutiveLimits });
  const simulator: UserSimulator = simulatorRef === 'template' ? template() : ((await models!.resolveLlmSimulator(simulatorRef, context)) ?? template());

  const judges: Judge[] = [];
  for (const ref of judgeRefs) {
    const judge = ref === 'oracle' ? new OracleJudge(config.scoring, config.safety) : await models!.resolveLlmJudge(ref, context);
    if (judge) judges.push(judge);
  }
  if (judges.length === 0) {
    log('judges: no model judge is available; the oracle judges instead.');
    judges.push(new OracleJudge(config.scoring, config.safety));
  }
  return { simulator, judges, tracker: simulator.kind === 'llm' || judges.some((j) => j.tier === 'llm') ? tracker : null };
}
