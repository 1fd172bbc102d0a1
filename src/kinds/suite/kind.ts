import type { ConversationSpec } from '../../domain/conversation.ts';
import { ConfigError } from '../../config/yaml.ts';
import { headUnitPathFields, modelRefPathFields } from '../../run/path-fields.ts';
import { llmPathFields, RUN_SOURCE_META, type CampaignKindDefinition, type RunSource, type KindStorage, type PathField } from '../../run/kind.ts';
import { isModelRef } from '../dialogue/config.ts';
import { conversationStorage, dialogueKind, openConversationRig } from '../dialogue/kind.ts';
import type { FinishedConversation } from '../dialogue/run.ts';
import { loadSuiteCampaign, SUITE_KIND, SuiteCampaignConfigSchema, type LoadedSuiteCampaign, type SuiteCampaignConfig } from './suite-kind.ts';

const scripted = conversationStorage<LoadedSuiteCampaign>(() => 'scripted');
/** Stored as dialogue runs listed "scripted"; the run's meta keeps the suite config, so the bench app resumes it as a suite run. */
const suiteStorage: KindStorage<LoadedSuiteCampaign, ConversationSpec, FinishedConversation> = {
  ...scripted,
  create: (store, loaded, plan, meta) => scripted.create(store, loaded, plan, loaded.suiteConfig ? { ...meta, [RUN_SOURCE_META]: { kind: SUITE_KIND, config: loaded.suiteConfig } satisfies RunSource } : meta),
};

/**
 * The suite kind (docs/suites.md): scripted suites replayed against a head unit. Its own config, plan (the suites'
 * conversations) and model references; the rest is the dialogue kind's, by composition: the rig and its runner
 * (the scripted user is the config's simulator "script"), the storage (runs stored as dialogue runs, listed as
 * "scripted"), the live events and the outputs.
 */
export const suiteKind: CampaignKindDefinition<LoadedSuiteCampaign, ConversationSpec, FinishedConversation, SuiteCampaignConfig> = {
  name: SUITE_KIND,
  storedAs: dialogueKind.storedAs,
  nouns: dialogueKind.nouns,
  configSchema: SuiteCampaignConfigSchema,
  load: loadSuiteCampaign,
  modelRefs: (config) => config.judges.filter(isModelRef),
  pathFields: (config) => [
    ...config.suites.map((path, i): PathField<SuiteCampaignConfig> => ({ field: `suites.${i}`, path, kind: 'read', rewrite: (c, p) => (c.suites[i] = p) })), ...headUnitPathFields(config),
    ...config.judges.flatMap((ref, i) => modelRefPathFields<SuiteCampaignConfig>(`judges.${i}`, ref, (c, r) => (c.judges[i] = r))),
    ...llmPathFields(config),
  ],
  plan: async (loaded) => loaded.conversations.map((spec) => ({ key: spec.key, item: spec })),
  async open(loaded, options) {
    if (options.overrides?.simulator) throw new ConfigError('--simulator: a suite campaign plays its scripted turns; it has no simulator to replace');
    return openConversationRig(loaded, options);
  },
  storage: suiteStorage,
  startedEvent: dialogueKind.startedEvent,
  unitReach: dialogueKind.unitReach,
  finishedEvent: dialogueKind.finishedEvent,
  outputs: dialogueKind.outputs,
  wire: {
    ...dialogueKind.wire,
    loaded: {
      encode: ({ conversations: _plan, ...campaign }) => dialogueKind.wire.loaded.encode(campaign),
      // a worker runs the jobs it is given (each carries its conversation) and never plans: it gets no suites
      decode: (data, where) => ({ ...dialogueKind.wire.loaded.decode(data, where), conversations: [] }),
    },
  },
};
