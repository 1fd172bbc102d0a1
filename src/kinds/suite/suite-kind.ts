import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { loadYamlDocument } from '../../config/yaml.ts';
import type { ConversationSpec } from '../../domain/conversation.ts';
import { DEFAULT_SAFETY_POLICY, SafetyPolicySchema } from '../../domain/safety-policy.ts';
import { JudgeRefInputSchema } from '../../llm/modelRef.ts';
import { LlmSettingsSchema } from '../../llm/settings.ts';
import { ScoringSchema } from '../../judge/score.ts';
import { loadSuite, suiteSpecs } from '../../suite/format.ts';
import { CampaignConfigSchema, ConfigError, TierFallbackSchema, type LoadedCampaign } from '../dialogue/config.ts';
import { HeadUnitConfigSchema } from '../../run/headunit-config.ts';
import { SCRIPTED_SIMULATOR } from '../dialogue/tiers.ts';

/**
 * `kind: suite` (docs/suites.md): replays scripted suites against a head unit. Every turn is judged as a
 * dialogue campaign judges it (the same judges, safety policy, scoring and critical-failure gate), plus the
 * turn's own expectations; a conversation with an unmet expectation fails. It runs on the dialogue run path
 * (the same rig, runner, store, report and compare): its plan is the suites' conversations, its user the
 * scripted one (simulator "script").
 */
export const SUITE_KIND = 'suite';

export const SuiteCampaignConfigSchema = z.strictObject({
  kind: z.literal(SUITE_KIND),
  name: z.string().min(1),
  description: z.string().default(''),
  /** suite files, relative to this config */
  suites: z.array(z.string().min(1)).min(1),
  /** runs every conversation this many times (pass^k per conversation) */
  repeats: z.number().int().min(1).max(100).default(1),
  concurrency: z.number().int().min(1).max(64).default(4),
  budgetMinutes: z.number().positive().optional(),
  headUnit: HeadUnitConfigSchema.default({ type: 'reference', worldSeed: 1, faults: { profiles: [], rate: 0.5, rates: {}, seed: 7 } }),
  judges: z
    .array(JudgeRefInputSchema)
    .min(1)
    .refine((refs) => new Set(refs).size === refs.length, 'list each judge once (the order is the precedence order)')
    .default(['oracle']),
  fallback: TierFallbackSchema.prefault({}),
  llm: LlmSettingsSchema.prefault({}),
  safety: SafetyPolicySchema.default(DEFAULT_SAFETY_POLICY),
  scoring: ScoringSchema.prefault({}),
});
export type SuiteCampaignConfig = z.infer<typeof SuiteCampaignConfigSchema>;

/**
 * Reads a `kind: suite` config and its suites into the campaign the dialogue run path runs: the suites'
 * conversations as the plan (stored with the run, so --resume plays exactly the ones not stored yet).
 */
export function loadSuiteCampaign(path: string): LoadedCampaign & { plan: ConversationSpec[] } {
  const absolute = resolve(path);
  const { data: config, at } = loadYamlDocument(SuiteCampaignConfigSchema, absolute, 'suite campaign config');
  const suites = config.suites.map((file) => resolve(dirname(absolute), file));
  const plan = suites.flatMap((file) => suiteSpecs(loadSuite(file), config.repeats));
  const seen = new Set<string>();
  for (const spec of plan) {
    if (seen.has(spec.key)) throw new ConfigError(`${at('suites')}: suites: the conversation id "${spec.key}" appears in more than one suite; ids must be unique across a campaign's suites (compare matches conversations by id)`);
    seen.add(spec.key);
  }
  const dialogue = CampaignConfigSchema.parse({
    name: config.name,
    description: config.description,
    mode: 'baseline',
    seeds: suites[0],
    conversations: plan.length,
    concurrency: config.concurrency,
    ...(config.budgetMinutes ? { budgetMinutes: config.budgetMinutes } : {}),
    headUnit: config.headUnit,
    simulator: SCRIPTED_SIMULATOR,
    judges: config.judges,
    fallback: config.fallback,
    llm: config.llm,
    safety: config.safety,
    scoring: config.scoring,
    maxTurns: [Math.max(2, ...plan.map((s) => s.maxTurns))],
  });
  return { config: dialogue, path: absolute, seeds: [], strategies: [], plan };
}
