import type { ConversationSpec } from '../../domain/conversation.ts';
import { ConfigError } from '../../config/yaml.ts';
import { llmPathFields, type CampaignKindDefinition, type PathField } from '../../run/kind.ts';
import { isModelRef } from '../dialogue/tiers.ts';
import type { LoadedCampaign } from '../dialogue/config.ts';
import { dialogueKind } from '../dialogue/kind.ts';
import type { FinishedConversation } from '../dialogue/run.ts';
import { loadSuiteCampaign, SUITE_KIND, SuiteCampaignConfigSchema, type SuiteCampaignConfig } from './suite-kind.ts';

/**
 * The suite kind (docs/suites.md): scripted suites replayed on the dialogue kind's run path — its rig, storage,
 * events and outputs — with the suites' conversations as the plan and the scripted user as the simulator. Its runs
 * are dialogue runs in the store.
 */
export const suiteKind: CampaignKindDefinition<LoadedCampaign, ConversationSpec, FinishedConversation, SuiteCampaignConfig> = {
  ...dialogueKind,
  name: SUITE_KIND,
  storedAs: 'dialogue',
  configSchema: SuiteCampaignConfigSchema,
  load: loadSuiteCampaign,
  modelRefs: (config) => config.judges.filter(isModelRef),
  pathFields: (config) => [...config.suites.map((path, i): PathField<SuiteCampaignConfig> => ({ field: `suites.${i}`, path, kind: 'read', rewrite: (c, p) => (c.suites[i] = p) })), ...llmPathFields(config)],
  async open(loaded, options) {
    if (options.overrides?.simulator) throw new ConfigError('--simulator: a suite campaign plays its scripted turns; it has no simulator to replace');
    return dialogueKind.open(loaded, options);
  },
};
