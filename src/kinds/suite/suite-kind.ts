import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { withAbsolutePaths } from '../../run/path-fields.ts';
import { loadYamlDocument } from '../../config/yaml.ts';
import type { ConversationSpec } from '../../domain/conversation.ts';
import { loadSuite, suiteSpecs } from '../../suite/format.ts';
import { CampaignConfigSchema, UNIT_AND_JUDGING_FIELDS, ConfigError, conversationsPathFields, type LoadedConversations } from '../dialogue/config.ts';
import type { PathField } from '../../run/kind.ts';

/**
 * `kind: suite` (docs/suites.md): replays scripted suites against a head unit. Every turn is judged as a
 * dialogue campaign judges it (the same judges, safety policy, scoring and critical-failure gate), plus the
 * turn's own expectations; a conversation with an unmet expectation fails. Its kind (./kind.ts) has its own config
 * and stored kind and composes the dialogue kind's parts (the rig of conversations, the report and compare): its
 * plan is the suites' conversations, its user the scripted one.
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
  ...UNIT_AND_JUDGING_FIELDS,
});
export type SuiteCampaignConfig = z.infer<typeof SuiteCampaignConfigSchema>;

/** A `kind: suite` config, loaded: its own config (every path absolute) and its suites' conversations. */
export interface LoadedSuiteCampaign extends LoadedConversations<SuiteCampaignConfig> {
  /** every conversation of every suite × repeats: the plan (stored with the run, so --resume plays exactly the ones not stored yet); empty on a fleet worker, which never plans */
  conversations: ConversationSpec[];
}

/** Every file a suite config names: its suites and the fields it shares with every config of conversations. */
export function suitePathFields(config: SuiteCampaignConfig): PathField<SuiteCampaignConfig>[] {
  return [...config.suites.map((path, i): PathField<SuiteCampaignConfig> => ({ field: `suites.${i}`, path, kind: 'read', rewrite: (c, p) => (c.suites[i] = p) })), ...conversationsPathFields(config)];
}

/** Reads a `kind: suite` config and its suites: the config with its paths resolved and the suites' conversations. */
export function loadSuiteCampaign(path: string): LoadedSuiteCampaign {
  const absolute = resolve(path);
  const { data: parsed, at } = loadYamlDocument(SuiteCampaignConfigSchema, absolute, 'suite campaign config');
  const config = withAbsolutePaths(parsed, suitePathFields(parsed), dirname(absolute));
  const plan = config.suites.flatMap((file) => suiteSpecs(loadSuite(file), config.repeats));
  const seen = new Set<string>();
  for (const spec of plan) {
    if (seen.has(spec.key)) throw new ConfigError(`${at('suites')}: suites: the conversation id "${spec.key}" appears in more than one suite; ids must be unique across a campaign's suites (compare matches conversations by id)`);
    seen.add(spec.key);
  }
  return { config, path: absolute, seeds: [], strategies: [], conversations: plan };
}
