import { z } from 'zod';
import type { ConversationSpec } from '../../domain/conversation.ts';
import { ConfigError } from '../../config/yaml.ts';
import { parseOrThrow } from '../../domain/validation.ts';
import type { CampaignKindDefinition } from '../../run/kind.ts';
import { isModelRef } from '../dialogue/config.ts';
import { conversationStorage, dialogueKind, openConversationRig } from '../dialogue/kind.ts';
import type { FinishedConversation } from '../dialogue/run.ts';
import { loadSuiteCampaign, SUITE_KIND, SuiteCampaignConfigSchema, suitePathFields, type LoadedSuiteCampaign, type SuiteCampaignConfig } from './suite-kind.ts';

/** A loaded suite campaign as a fleet worker receives it: the config as the coordinator resolved it; the plan travels job by job. */
const WireSuiteSchema = z.strictObject({ config: SuiteCampaignConfigSchema, path: z.string().min(1) });

/**
 * The suite kind (docs/suites.md): scripted suites replayed against a head unit. Its own config, plan (the suites'
 * conversations), model references and stored kind (`suite`, listed "scripted"); the rest is the dialogue kind's, by
 * composition: the rig of conversations (its user the scripted one), the live events and the outputs.
 */
export const suiteKind: CampaignKindDefinition<LoadedSuiteCampaign, ConversationSpec, FinishedConversation, SuiteCampaignConfig> = {
  name: SUITE_KIND,
  nouns: dialogueKind.nouns,
  configSchema: SuiteCampaignConfigSchema,
  load: loadSuiteCampaign,
  modelRefs: (config) => config.judges.filter(isModelRef),
  pathFields: suitePathFields,
  plan: async (loaded) => loaded.conversations.map((spec) => ({ key: spec.key, item: spec })),
  async open(loaded, options) {
    if (options.overrides?.simulator) throw new ConfigError('--simulator: a suite campaign plays its scripted turns; it has no simulator to replace');
    return openConversationRig(loaded, options);
  },
  storage: conversationStorage(SUITE_KIND, () => 'scripted'),
  startedEvent: dialogueKind.startedEvent,
  unitReach: dialogueKind.unitReach,
  finishedEvent: dialogueKind.finishedEvent,
  outputs: dialogueKind.outputs,
  view: dialogueKind.view,
  wire: {
    ...dialogueKind.wire,
    loaded: {
      encode: ({ config, path }) => ({ config, path }),
      // a worker runs the jobs it is given (each carries its conversation) and never plans: it gets no suites
      decode: (data, where) => ({ ...parseOrThrow(WireSuiteSchema, data, where), seeds: [], strategies: [], conversations: [] }),
    },
    needs: ({ config }) => ({ transport: config.headUnit.type, capabilities: ['text'] }),
  },
};
