import { z } from 'zod';
import { ConversationResultSchema, ConversationSpecSchema, SeedPhraseSchema } from '../domain/conversation.ts';
import { StrategySchema } from '../domain/taxonomy.ts';
import { RecordedFactSchema } from '../run/run-facts.ts';
import { CampaignConfigSchema, type LoadedCampaign } from '../kinds/dialogue/config.ts';

/**
 * What travels through the fleet's Redis, each message validated with zod where it is read: a
 * worker never runs a job it cannot parse, a coordinator never stores a result it cannot parse.
 */

/** What a worker's rig can test beyond text; a campaign needs `audio` for spoken turns and `vehicle` for a drive scenario. */
export const CapabilitySchema = z.enum(['text', 'audio', 'vehicle', 'tools']);
export type Capability = z.infer<typeof CapabilitySchema>;

/** How the rig reaches its head unit: the reference unit in the worker, a unit dialling in to the worker's bridge, an HTTP chat endpoint. */
export const TransportSchema = z.enum(['reference', 'bridge', 'http']);
export type Transport = z.infer<typeof TransportSchema>;

export const WorkerStateSchema = z.enum(['ready', 'headunit_unreachable', 'stopping']);

/** A worker's heartbeat (a Redis key that expires when the worker stops beating). */
export const WorkerStatusSchema = z.strictObject({
  id: z.string().min(1),
  rig: z.string().min(1),
  host: z.string(),
  pid: z.number().int(),
  capabilities: z.array(CapabilitySchema).min(1),
  transports: z.array(TransportSchema).min(1),
  /** the voice rig (what speaks and listens), when the worker has audio */
  voice: z.string().nullable(),
  concurrency: z.number().int().min(1),
  state: WorkerStateSchema,
  /** why the worker stopped taking jobs (state headunit_unreachable) */
  reason: z.string().nullable(),
  /** run id / conversation key of what it runs now */
  current: z.array(z.string()),
  done: z.number().int().min(0),
  /** ISO time of this beat */
  at: z.string(),
});
export type WorkerStatus = z.infer<typeof WorkerStatusSchema>;

/** What a campaign needs of a worker. */
export interface Requirements {
  transport: Transport;
  /** sorted, always with text */
  capabilities: Capability[];
}

export function campaignRequirements(campaign: Pick<LoadedCampaign, 'config'>): Requirements {
  const { config } = campaign;
  const needs: Capability[] = ['text'];
  if (config.voice?.enabled) needs.push('audio');
  if (config.vehicle) needs.push('vehicle');
  return { transport: config.headUnit.type, capabilities: needs.sort() };
}

export function describeRequirements(requirements: Requirements): string {
  return `${requirements.capabilities.join('+')} over ${requirements.transport}`;
}

/** A worker serves a campaign when it has its transport and every capability it needs. */
export function canServe(worker: Pick<WorkerStatus, 'capabilities' | 'transports'>, requirements: Requirements): boolean {
  return worker.transports.includes(requirements.transport) && requirements.capabilities.every((c) => worker.capabilities.includes(c));
}

/** One queue per requirement profile: a worker listens only on the queues of profiles it can serve (capability routing). */
export function conversationQueueName(requirements: Requirements): string {
  return `icabench-conv-${requirements.transport}-${requirements.capabilities.join('+')}`;
}

/** Every queue a worker with these capabilities can take jobs from. */
export function servedQueueNames(capabilities: readonly Capability[], transports: readonly Transport[]): string[] {
  const extras = [...new Set(capabilities)].filter((c) => c !== 'text' && c !== 'tools').sort() as Capability[];
  const subsets: Capability[][] = [[]];
  for (const extra of extras) subsets.push(...subsets.map((s) => [...s, extra]));
  if (!capabilities.includes('text')) return [];
  return transports.flatMap((transport) => subsets.map((subset) => conversationQueueName({ transport, capabilities: ['text' as Capability, ...subset].sort() })));
}

/** The results of one run travel back on their own queue; the coordinator of that run consumes it. */
export function resultQueueName(runId: string): string {
  return `icabench-results-${runId}`;
}

export const RUN_KEY_PREFIX = 'icabench:fleet:run:';
export const WORKER_KEY_PREFIX = 'icabench:fleet:worker:';

/** The job id of one planned conversation: unique per run and key, so an enqueued conversation is never enqueued twice. */
export function conversationJobId(runId: string, key: string): string {
  return `${runId}__${key}`;
}

/** What a worker needs to open the rig of a run: the campaign as the coordinator loaded it (paths resolved on the coordinator's machine). */
export const RunDescriptorSchema = z.strictObject({
  runId: z.string().min(1),
  path: z.string().min(1),
  config: CampaignConfigSchema,
  seeds: z.array(SeedPhraseSchema),
  strategies: z.array(StrategySchema),
});
export type RunDescriptor = z.infer<typeof RunDescriptorSchema>;

/** One job = one planned conversation. */
export const ConversationJobSchema = z.strictObject({
  runId: z.string().min(1),
  spec: ConversationSpecSchema,
});
export type ConversationJob = z.infer<typeof ConversationJobSchema>;

/** What a worker reports as a job's progress when it takes it: its rig (the coordinator's live view shows which rig runs what). */
export const JobTakenSchema = z.strictObject({ rig: z.string().min(1) });

/** An artifact with its bytes as base64 (JSON carries no bytes). */
export const WireArtifactSchema = z.strictObject({
  name: z.string().min(1),
  mime: z.string().min(1),
  base64: z.string().optional(),
  path: z.string().optional(),
});

/** A finished conversation on its way back to the coordinator. */
export const ConversationResultMessageSchema = z.strictObject({
  runId: z.string().min(1),
  rig: z.string().min(1),
  workerId: z.string().min(1),
  result: ConversationResultSchema,
  artifacts: z.array(WireArtifactSchema),
  /** what the worker's rig runs this run with (`run.invocation`, `tiers.resolved`, `vehicle.feed`): the same with every result, stored once per worker */
  invocationFacts: z.array(RecordedFactSchema),
  /** what this conversation produced (`llm.calls`, `vehicle.frames`), stored with it */
  facts: z.array(RecordedFactSchema),
});
export type ConversationResultMessage = z.infer<typeof ConversationResultMessageSchema>;
