import type { ConversationSpec } from '../../domain/conversation.ts';
import type { ContextVector } from '../../domain/context.ts';
import type { CampaignKindDefinition, KindRig, KindStorage, OpenOptions } from '../../run/kind.ts';
import type { UserSimulator } from '../../simulator/types.ts';
import { campaignPathFields, CampaignConfigSchema, isModelRef, loadCampaignConfig, type CampaignConfig, type LoadedCampaign, type LoadedConversations } from './config.ts';
import type { FinishedConversation } from './run.ts';
import { planConversations } from './sampling.ts';
import { runFiguresLine } from './summary-text.ts';
import { unitUnderTest } from './unit-under-test.ts';
import { dialogueWire } from './wire.ts';
import { conversationReach, forgetUnreachedConversations } from '../../run/unit-reach.ts';
import { dialogueView } from './view.ts';

/** Who plays the driver in a run of conversations: the config's mode (a simulator), "scripted" (suites), "live" (a technician). */
export type ConversationRunMode = CampaignConfig['mode'] | 'scripted' | 'live';

/**
 * How every kind of conversations stores its runs: conversations, turns, verdicts and the plan, under the run's own
 * kind (dialogue, suite, live) and `mode`, with the kind's own config. The dialogue kind, suites and live sessions share it.
 */
export function conversationStorage<L extends LoadedConversations>(kind: string, mode: (loaded: L) => ConversationRunMode): KindStorage<L, ConversationSpec, FinishedConversation> {
  return {
    create: (store, loaded, plan, meta) => store.createRun({ name: loaded.config.name, kind, mode: mode(loaded), config: loaded.config, plan: plan.map((p) => p.item), meta }),
    remaining: function* (store, run) {
      for (const spec of store.remainingSpecs(run.id)) yield { key: spec.key, item: spec };
    },
    // the run loop built the result from validated parts (a fleet worker's message is validated by the coordinator)
    save: (store, runId, _key, finished) => store.saveConversation(runId, finished.result, finished.artifacts, finished.facts, { validated: true }),
    forgetUnreached: forgetUnreachedConversations,
  };
}

/** What a kind of conversations plays besides the config: a user of its own (a live session's technician) and each turn's context. */
export interface ConversationPlay {
  user?: UserSimulator;
  contextAt?: (turnIndex: number) => ContextVector;
}

/** Opens the rig of a config of conversations: the dialogue kind's `open`, shared by suites and live sessions. */
export async function openConversationRig(campaign: LoadedConversations, { overrides, log = () => undefined }: OpenOptions, play: ConversationPlay = {}): Promise<KindRig<ConversationSpec, FinishedConversation>> {
  const [{ openRig }, { conversationRig }] = await Promise.all([import('./rig.ts'), import('./run.ts')]);
  return conversationRig(await openRig(campaign, { overrides, log, user: play.user }), campaign, log, play.contextAt);
}

/**
 * The dialogue kind (the default): simulated multi-turn conversations (Algorithm 1, ./conversation.ts) planned by
 * representative sampling (./sampling.ts), each judged by the tiers in precedence order, stored as conversations.
 * Its storage, runner, events and outputs are the parts other kinds of conversations compose (src/kinds/suite).
 */
export const dialogueKind: CampaignKindDefinition<LoadedCampaign, ConversationSpec, FinishedConversation> = {
  name: 'dialogue',
  nouns: { item: 'conversation', items: 'conversations' },
  configSchema: CampaignConfigSchema,
  load: loadCampaignConfig,
  pathFields: campaignPathFields,
  modelRefs: (config) => [config.simulator, ...config.judges].filter(isModelRef),
  plan: async (campaign) => planConversations(campaign).map((spec) => ({ key: spec.key, item: spec })),
  open: (campaign, options) => openConversationRig(campaign, options),
  storage: conversationStorage<LoadedCampaign>('dialogue', (campaign) => campaign.config.mode),
  startedEvent: (runId, { key, item: spec }) => ({ type: 'conversation_started', runId, key, spec }),
  unitReach: (finished) => conversationReach(finished.result),
  finishedEvent: (runId, key, finished) => ({ type: 'conversation_finished', runId, key, result: finished.result }),
  wire: dialogueWire,
  view: dialogueView,
  outputs: {
    async write(store, runId, outDir) {
      const [{ writeRunOutputs }, { firstScreenLine }] = await Promise.all([import('../../report/write.ts'), import('../../report/first-screen.ts')]);
      const { summary, firstScreen } = await writeRunOutputs(store, runId, outDir, unitUnderTest(store.getRun(runId)?.config));
      return [
        runFiguresLine(runId, store.getRun(runId)?.status ?? 'unknown', summary),
        ...(summary.tiers?.flatMap((t) => t.fallbacks) ?? []).map((f) => `fallback: the ${f.role} ${f.requested} was not available; the ${f.replacedBy} tier ran instead (config: fallback)`),
        // last: the report's first screen in one line
        firstScreenLine(firstScreen),
      ];
    },
    async summaryJson(store, run) {
      const [{ summarizeRun }, { summaryJson }] = await Promise.all([import('../../report/summary.ts'), import('../../report/write.ts')]);
      return summaryJson(await summarizeRun(store, run.id));
    },
  },
};
