import type { ConversationSpec } from '../../domain/conversation.ts';
import type { CampaignKindDefinition } from '../../run/kind.ts';
import { CampaignConfigSchema, loadCampaignConfig, type LoadedCampaign } from './config.ts';
import type { FinishedConversation } from './run.ts';
import { planConversations } from './sampling.ts';
import { findingsText, gateText } from './summary-text.ts';
import { campaignPathFields } from './paths.ts';
import { dialogueWire } from './wire.ts';

/**
 * The dialogue kind (the default): simulated multi-turn conversations (Algorithm 1, ./conversation.ts) planned by
 * representative sampling (./sampling.ts), each judged by the tiers in precedence order, stored as conversations.
 */
export const dialogueKind: CampaignKindDefinition<LoadedCampaign, ConversationSpec, FinishedConversation> = {
  name: 'dialogue',
  storedAs: 'dialogue',
  nouns: { item: 'conversation', items: 'conversations' },
  configSchema: CampaignConfigSchema,
  load: loadCampaignConfig,
  pathFields: campaignPathFields,
  modelRefs: (config) => [config.simulator, ...config.judges].filter((ref) => ref !== 'template' && ref !== 'oracle'),
  // a suite campaign brings its plan (its suites' conversations); a dialogue campaign samples one
  plan: async (campaign) => (campaign.plan ?? planConversations(campaign)).map((spec) => ({ key: spec.key, item: spec })),
  async open(campaign, { overrides, log = () => undefined, unitBuild }) {
    const [{ openRig }, { rigRunner }] = await Promise.all([import('./rig.ts'), import('./run.ts')]);
    return rigRunner(await openRig(campaign, { overrides, log, unitBuild }), campaign, log);
  },
  storage: {
    create: (store, campaign, plan, meta) => store.createRun({ name: campaign.config.name, mode: campaign.runMode ?? campaign.config.mode, config: campaign.config, plan: plan.map((p) => p.item), meta }),
    remaining: (store, run) => store.remainingSpecs(run.id).map((spec) => ({ key: spec.key, item: spec })),
    // the run loop built the result from validated parts (a fleet worker's message is validated by the coordinator)
    save: (store, runId, _key, finished) => store.saveConversation(runId, finished.result, finished.artifacts, finished.facts, { validated: true }),
  },
  startedEvent: (runId, { key, item: spec }) => ({ type: 'conversation_started', runId, key, spec }),
  unitReach: (finished) => finished.result,
  finishedEvent: (runId, key, finished) => ({ type: 'conversation_finished', runId, key, result: finished.result }),
  wire: dialogueWire,
  outputs: {
    async write(store, runId, outDir) {
      const { writeRunOutputs } = await import('../../report/write.ts');
      const summary = await writeRunOutputs(store, runId, outDir);
      const status = store.getRun(runId)?.status;
      const pct = (rate: number | null) => (rate === null ? 'n/a' : `${(rate * 100).toFixed(1)}%`);
      return [
        `run ${runId} ${status}: ${summary.conversations} conversations, fail rate ${pct(summary.failRate)} ` +
          `(${gateText(summary.gate.failOn, summary.gate.failedByGate)}; by C alone ${pct(summary.gate.scoreOnly.failRate)}), ${findingsText(summary)}, ` +
          `mean C ${summary.meanScore?.toFixed(3) ?? 'n/a'}, unique failure types/conversation ${summary.uniqueFailureTypesPerConversation.toFixed(2)}`,
        ...(summary.tiers?.flatMap((t) => t.fallbacks) ?? []).map((f) => `fallback: the ${f.role} ${f.requested} was not available; the ${f.replacedBy} tier ran instead (config: fallback)`),
      ];
    },
    async summaryJson(store, run) {
      const [{ summarizeRun }, { summaryJson }] = await Promise.all([import('../../report/summary.ts'), import('../../report/write.ts')]);
      return summaryJson(await summarizeRun(store, run.id));
    },
  },
};
