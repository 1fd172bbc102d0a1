import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { loadYamlDocument } from '../../config/yaml.ts';
import type { ConversationSpec } from '../../domain/conversation.ts';
import { loadSuite, suiteSpecs } from '../../suite/format.ts';
import { CampaignConfigSchema, ConfigError, type LoadedCampaign } from '../dialogue/config.ts';
import { SCRIPTED_SIMULATOR } from '../dialogue/config.ts';

/**
 * `kind: suite` (docs/suites.md): replays scripted suites against a head unit. Every turn is judged as a
 * dialogue campaign judges it (the same judges, safety policy, scoring and critical-failure gate), plus the
 * turn's own expectations; a conversation with an unmet expectation fails. Its kind (./kind.ts) composes the
 * dialogue kind's parts (the same rig, runner, store, report and compare): its plan is the suites' conversations,
 * its user the scripted one (simulator "script").
 */
export const SUITE_KIND = 'suite';

/** The dialogue kind's fields a suite campaign shares, defined once there (src/kinds/dialogue/config.ts). */
const DIALOGUE = CampaignConfigSchema.shape;

export const SuiteCampaignConfigSchema = z.strictObject({
  kind: z.literal(SUITE_KIND),
  name: DIALOGUE.name,
  description: DIALOGUE.description,
  /** suite files, relative to this config */
  suites: z.array(z.string().min(1)).min(1),
  /** runs every conversation this many times (pass^k per conversation) */
  repeats: DIALOGUE.repeats,
  concurrency: DIALOGUE.concurrency,
  budgetMinutes: DIALOGUE.budgetMinutes,
  headUnit: DIALOGUE.headUnit,
  judges: DIALOGUE.judges,
  fallback: DIALOGUE.fallback,
  llm: DIALOGUE.llm,
  safety: DIALOGUE.safety,
  scoring: DIALOGUE.scoring,
});
export type SuiteCampaignConfig = z.infer<typeof SuiteCampaignConfigSchema>;

/** A `kind: suite` config, loaded: the dialogue config its conversations run with (judges, head unit, scoring) and its suites' conversations. */
export interface LoadedSuiteCampaign extends LoadedCampaign {
  /** every conversation of every suite × repeats: the plan (stored with the run, so --resume plays exactly the ones not stored yet) */
  conversations: ConversationSpec[];
  /** the suite config as written, suite paths absolute: stored with a new run (RUN_SOURCE_META) so the bench app resumes it as a suite run; absent on a fleet worker, which never creates runs */
  suiteConfig?: SuiteCampaignConfig;
}

/** Reads a `kind: suite` config and its suites: the dialogue config its conversations run with and the suites' conversations. */
export function loadSuiteCampaign(path: string): LoadedSuiteCampaign {
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
  return { config: dialogue, path: absolute, seeds: [], strategies: [], conversations: plan, suiteConfig: { ...config, suites } };
}
