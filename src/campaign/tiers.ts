import { OracleJudge } from '../judge/oracle.ts';
import type { Judge } from '../judge/types.ts';
import { TemplateSimulator } from '../simulator/template.ts';
import type { UserSimulator } from '../simulator/types.ts';
import type { CampaignConfig } from './config.ts';
import { ConfigError } from './config.ts';
import type { CampaignTiers } from './runner.ts';

/**
 * Builds the simulator and the judge tiers a config (or the --simulator/--judge overrides) names.
 * "template" and "oracle" are the deterministic offline tiers; anything else is a model reference.
 */
export async function buildTiers(config: CampaignConfig, overrides: { simulator?: string; judges?: string[] } = {}): Promise<CampaignTiers & { llmRefs: string[] }> {
  const simulatorRef = overrides.simulator ?? config.simulator;
  const judgeRefs = overrides.judges ?? config.judges;
  const llmRefs = [simulatorRef, ...judgeRefs].filter((r) => r !== 'template' && r !== 'oracle');
  const simulator: UserSimulator = simulatorRef === 'template' ? new TemplateSimulator({ consecutiveLimits: config.consecutiveLimits }) : await modelSimulator(simulatorRef);
  const judges: Judge[] = [];
  for (const ref of judgeRefs) judges.push(ref === 'oracle' ? new OracleJudge(config.scoring) : await modelJudge(ref));
  return { simulator, judges, llmRefs };
}

async function modelSimulator(ref: string): Promise<UserSimulator> {
  throw new ConfigError(`simulator: "${ref}" is a model reference; the model-driven simulator is not available in this build (use "template")`);
}

async function modelJudge(ref: string): Promise<Judge> {
  throw new ConfigError(`judges: "${ref}" is a model reference; the model-driven judge is not available in this build (use "oracle")`);
}
