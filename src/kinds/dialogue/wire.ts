import { z } from 'zod';
import { ConversationResultSchema, ConversationSpecSchema, SeedPhraseSchema, type ConversationSpec } from '../../domain/conversation.ts';
import { StrategySchema } from '../../domain/taxonomy.ts';
import { parseOrThrow } from '../../domain/validation.ts';
import { RecordedFactSchema } from '../../run/run-facts.ts';
import { jsonCodec, type KindWire } from '../../run/kind.ts';
import { CampaignConfigSchema, type LoadedCampaign } from './config.ts';
import type { FinishedConversation } from './run.ts';

/** A loaded dialogue (or suite) campaign as a fleet worker receives it: the config as the coordinator resolved it; the plan travels job by job (how the run is listed is the coordinator's business). */
const WireCampaignSchema = z.strictObject({
  config: CampaignConfigSchema,
  path: z.string().min(1),
  seeds: z.array(SeedPhraseSchema),
  strategies: z.array(StrategySchema),
});

/** An artifact with its bytes as base64 (JSON carries no bytes). */
const WireArtifactSchema = z.strictObject({ name: z.string().min(1), mime: z.string().min(1), base64: z.string().optional(), path: z.string().optional() });

const WireConversationSchema = z.strictObject({ result: ConversationResultSchema, artifacts: z.array(WireArtifactSchema), facts: z.array(RecordedFactSchema) });

/** How a dialogue run's conversations travel through the fleet (src/run/kind.ts, KindWire). */
export const dialogueWire: KindWire<LoadedCampaign, ConversationSpec, FinishedConversation> = {
  loaded: {
    encode: ({ config, path, seeds, strategies }) => ({ config, path, seeds, strategies }),
    decode: (data, where) => parseOrThrow(WireCampaignSchema, data, where),
  },
  item: jsonCodec(ConversationSpecSchema),
  finished: {
    encode: ({ result, artifacts, facts }) => ({
      result,
      artifacts: artifacts.map((a) => ({ name: a.name, mime: a.mime, ...(a.bytes ? { base64: Buffer.from(a.bytes).toString('base64') } : {}), ...(a.path ? { path: a.path } : {}) })),
      facts: facts ?? [],
    }),
    decode(data, where) {
      const { result, artifacts, facts } = parseOrThrow(WireConversationSchema, data, where);
      return { result, facts, artifacts: artifacts.map((a) => ({ name: a.name, mime: a.mime, ...(a.base64 !== undefined ? { bytes: Buffer.from(a.base64, 'base64') } : {}), ...(a.path ? { path: a.path } : {}) })) };
    },
  },
  // spoken turns need the voice rig, a drive scenario the vehicle feed
  needs: ({ config }) => ({
    transport: config.headUnit.type,
    capabilities: ['text' as const, ...(config.voice?.enabled ? (['audio'] as const) : []), ...(config.vehicle ? (['vehicle'] as const) : [])].sort(),
  }),
};
