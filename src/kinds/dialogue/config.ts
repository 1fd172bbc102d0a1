import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { HHMM, ISODate } from '../../domain/context.ts';
import type { SeedPhrase } from '../../domain/conversation.ts';
import { DEFAULT_SAFETY_POLICY, SafetyPolicySchema } from '../../domain/safety-policy.ts';
import { MethodSchema } from '../../domain/method.ts';
import { PersonaSchema, StrategySchema, STRATEGIES, type Strategy } from '../../domain/taxonomy.ts';
import { ScoringSchema } from '../../judge/score.ts';
import { VehicleConfigSchema } from '../../vehicle/config.ts';
import { LlmSettingsSchema } from '../../llm/settings.ts';
import { VoiceConfigSchema } from '../../voice/config.ts';
import { DiversityConfigSchema } from '../../analysis/diversity.ts';
import { isTechniqueRef, JudgeRefInputSchema, parseJudgeRef, type ParsedJudgeRef } from '../../llm/modelRef.ts';
import { snrLevels } from '../../voice/acoustics.ts';
import { ConfigError, loadYamlDocument } from '../../config/yaml.ts';
import { HeadUnitConfigSchema } from '../../run/headunit-config.ts';
import type { PathField as GenericPathField } from '../../run/kind.ts';
import { headUnitPathFields, modelRefPathFields, namedFilePathFields, transportPathFields, withAbsolutePaths } from '../../run/path-fields.ts';
import type { TransportSpec } from '../../vehicle/transports/index.ts';
import type { ObserveTransport } from '../../vehicle/observe/sources.ts';
import { loadSeedPool } from './seed-pool.ts';

export { ConfigError };


/**
 * What a run may do when a model it names is not available (server down, model not pulled, endpoint
 * not allowed). Nothing by default: the run stops before its first conversation. A fallback is taken
 * only for the role that lists it, and the run records it (summary `tiers`, the report).
 */
export const TierFallbackSchema = z.strictObject({
  /** an unavailable model judge is replaced by the oracle, in its place in the precedence order */
  judges: z.literal('oracle').optional(),
  /** an unavailable model simulator is replaced by the template simulator */
  simulator: z.literal('template').optional(),
});

export const CampaignConfigSchema = z
  .strictObject({
    /** the campaign kind (src/kinds/registry.ts): this schema is the dialogue kind, the default when `kind` is absent */
    kind: z.literal('dialogue').optional(),
    name: z.string().min(1),
    description: z.string().default(''),
    /** guided: strategies and evaluator feedback; baseline: no strategies (with `method: paper` no evaluator feedback either) */
    mode: z.enum(['guided', 'baseline']).default('guided'),
    /** lab (default): icabench's safeguards; paper: Negi et al. as published (docs/reproduction.md) */
    method: MethodSchema.default('lab'),
    /** seed-phrase pool, a YAML file relative to this config */
    seeds: z.string().min(1),
    /** restrict to seeds whose id is listed */
    seedIds: z.array(z.string()).optional(),
    /** task combinations: how many domains (requests) a seed may span */
    domains: z.strictObject({ min: z.number().int().min(1).default(1), max: z.number().int().min(1).default(3) }).default({ min: 1, max: 3 }),
    conversations: z.number().int().min(1).max(100_000),
    repeats: z.number().int().min(1).max(100).default(1),
    personas: z.array(PersonaSchema).min(1).default(['neutral']),
    strategies: z.union([z.literal('all'), z.array(StrategySchema)]).default('all'),
    consecutiveLimits: z.partialRecord(StrategySchema, z.number().int().min(1)).default({}),
    /** turn budgets M, sampled per conversation */
    maxTurns: z.array(z.number().int().min(2).max(50)).min(1).default([8, 10]),
    dates: z.array(ISODate).min(1).default(['2026-05-12']),
    timeWindow: z.strictObject({ from: HHMM, to: HHMM }).default({ from: '11:00', to: '16:00' }),
    /** wall-clock budget for the whole run (the paper ran 4 h) */
    budgetMinutes: z.number().positive().optional(),
    concurrency: z.number().int().min(1).max(64).default(4),
    /**
     * auto (default): a turn's judges after the deciding one overlap the simulator's next move (it never reads their
     * verdicts); off: the strict order. `method: paper` always runs the strict order. Stored results are the same
     * either way (docs/architecture.md, "Pipelining").
     */
    pipeline: z.enum(['auto', 'off']).default('auto'),
    /** stop the run when this share of the last 20 finished conversations did not reach the head unit (default 1: all of them; src/run/unit-reach.ts) */
    maxErrorShare: z.number().gt(0).max(1).optional(),
    /** sampling seed: the same seed and pool give the same conversations */
    seed: z.number().int().default(42),
    headUnit: HeadUnitConfigSchema.default({ type: 'reference', worldSeed: 1, faults: { profiles: [], rate: 0.5, rates: {}, seed: 7 } }),
    /**
     * a world file (YAML, relative to this config: `pois:` in the bridge protocol's place format) holding the head
     * unit's places: the simulator and the oracle check feasibility and offered places against it, and the reference
     * unit serves it. Absent: the reference unit's world is known, another unit's is not (docs/architecture.md, "Which world")
     */
    world: z.string().min(1).optional(),
    /** "template" or a model reference (ollama:…, openai-compat:…, gguf:…) */
    simulator: z.string().default('template'),
    /** judges in precedence order (the first decisive verdict decides): "oracle", model references and technique judges (sc-5:MODEL_REF, …; docs/judge-techniques.md) */
    judges: z
      .array(JudgeRefInputSchema)
      .min(1)
      .refine((refs) => new Set(refs).size === refs.length, 'list each judge once (the order is the precedence order)')
      .default(['oracle']),
    /** what to run instead when a named model is unavailable; nothing by default (the run stops) */
    fallback: TierFallbackSchema.prefault({}),
    /** model-driven tiers: servers, allowed lab hosts, retries, temperature, prices (docs/llm-tiers.md) */
    llm: LlmSettingsSchema.prefault({}),
    /** drive scenario feeding the context vector and CAN frames (see docs/vehicle.md) */
    vehicle: VehicleConfigSchema.optional(),
    /** spoken turns: synthesis or recordings, cabin noise (an SNR sweep multiplies the conversations), reply transcription (docs/voice.md) */
    voice: VoiceConfigSchema.optional(),
    /** when a distracting or dangerous request must be refused: the oracle judges by it, the reference head unit follows it (docs/architecture.md) */
    safety: SafetyPolicySchema.default(DEFAULT_SAFETY_POLICY),
    /** weights, θ and the critical-failure gate `failOn` (docs/reports.md) */
    scoring: ScoringSchema.prefault({}),
    /** failure diversity of the report: dedup threshold, k range, repetitions, embedding model (docs/diversity.md); defaults when absent */
    diversity: DiversityConfigSchema.optional(),
  })
  .superRefine((config, ctx) => {
    if (config.domains.min > config.domains.max) ctx.addIssue({ code: 'custom', path: ['domains'], message: 'min must not exceed max' });
    if (config.timeWindow.from > config.timeWindow.to) ctx.addIssue({ code: 'custom', path: ['timeWindow'], message: 'from must not be later than to' });
    const planned = plannedCount(config);
    if (planned > MAX_PLANNED_CONVERSATIONS) {
      ctx.addIssue({
        code: 'custom',
        path: ['conversations'],
        message:
          `the plan has ${planned.toLocaleString('en')} conversations (conversations × repeats × SNR levels), above the limit of ${MAX_PLANNED_CONVERSATIONS.toLocaleString('en')}: ` +
          'the plan is built and stored before the first conversation; split the study into runs with different seeds (docs/configuration.md, "Limits")',
      });
    }
    if (config.method === 'paper') paperPresetIssues(config).forEach((issue) => ctx.addIssue({ code: 'custom', ...issue }));
    if (config.voice?.enabled && config.headUnit.type === 'http') {
      ctx.addIssue({ code: 'custom', path: ['voice'], message: 'the http head unit adapter carries text only; spoken turns need the reference head unit or a head unit on the bridge' });
    }
  });
export type CampaignConfig = z.infer<typeof CampaignConfigSchema>;

/** The fields that say which unit is tested and how it is judged, shared by every kind that plays conversations (suite, live). */
export const UNIT_AND_JUDGING_FIELDS = {
  headUnit: CampaignConfigSchema.shape.headUnit,
  judges: CampaignConfigSchema.shape.judges,
  fallback: CampaignConfigSchema.shape.fallback,
  llm: CampaignConfigSchema.shape.llm,
  safety: CampaignConfigSchema.shape.safety,
  scoring: CampaignConfigSchema.shape.scoring,
};

/** Whether a run pipelines its turns: `pipeline: auto` outside the paper preset, which keeps Algorithm 1's strict order. */
export function pipelinesTurns(config: Partial<Pick<CampaignConfig, 'pipeline' | 'method'>>): boolean {
  return (config.pipeline ?? 'auto') === 'auto' && config.method !== 'paper';
}

/**
 * What `method: paper` requires of a dialogue config, so a preset cannot silently drift from the
 * published setup: the verdict is C ≥ θ alone (`scoring.failOn: []`, and `scoring.inconclusive: pass`: the paper
 * has no "needs review" outcome), the judges and simulator
 * sample at temperature 0, and the baseline is one neutral persona with a fixed M = 8.
 */
function paperPresetIssues(config: Pick<CampaignConfig, 'scoring' | 'llm' | 'mode' | 'maxTurns' | 'personas'>): Array<{ path: (string | number)[]; message: string }> {
  const issues: Array<{ path: (string | number)[]; message: string }> = [];
  if (config.scoring.failOn.length > 0) issues.push({ path: ['scoring', 'failOn'], message: 'method: paper scores by C ≥ θ alone; set scoring.failOn: [] (the lab gate is method: lab)' });
  if (config.scoring.inconclusive !== 'pass') issues.push({ path: ['scoring', 'inconclusive'], message: 'method: paper has no "needs review" outcome: C decides; set scoring.inconclusive: pass' });
  if (config.llm.temperature !== 0) issues.push({ path: ['llm', 'temperature'], message: 'method: paper samples at temperature 0 (the paper\'s Table II)' });
  if (config.mode === 'baseline') {
    if (config.maxTurns.length !== 1 || config.maxTurns[0] !== 8) issues.push({ path: ['maxTurns'], message: 'the paper\'s baseline has a fixed turn budget: maxTurns: [8]' });
    if (config.personas.length !== 1 || config.personas[0] !== 'neutral') issues.push({ path: ['personas'], message: 'the paper\'s baseline has one neutral persona: personas: [neutral]' });
  }
  return issues;
}

/**
 * What the rig of conversations (./rig.ts, ./run.ts, ./tiers.ts) reads of a config: the fields the dialogue kind, suites
 * and live sessions share, each kind with its own schema (src/kinds/suite); the dialogue-only ones are optional (a suite
 * or a live session plays scripted turns: no simulator, no sampling, no voice).
 */
export type ConversationsConfig = Pick<CampaignConfig, 'name' | 'concurrency' | 'headUnit' | 'judges' | 'fallback' | 'llm' | 'safety' | 'scoring'> &
  Partial<Pick<CampaignConfig, 'description' | 'budgetMinutes' | 'maxErrorShare' | 'simulator' | 'consecutiveLimits' | 'voice' | 'vehicle' | 'world' | 'method' | 'mode' | 'pipeline'>>;

/** A loaded config of conversations (any kind that runs on the rig of conversations). */
export interface LoadedConversations<C extends ConversationsConfig = ConversationsConfig> {
  config: C;
  /** the config file, absolute; every path in `config` is already resolved against its folder */
  path: string;
  /** the seed phrases the plan samples from (the spoken driver vocabulary); none for scripted turns */
  seeds: SeedPhrase[];
  strategies: Strategy[];
}

export interface LoadedCampaign extends LoadedConversations<CampaignConfig> {
  config: CampaignConfig;
  /** the config file, absolute; every path in `config` is already resolved against its folder */
  path: string;
  /** the seeds the plan uses, in sampling order (planConversations cycles through them; see seed-pool.ts) */
  seeds: SeedPhrase[];
  strategies: Strategy[];
}

/**
 * The most conversations one run may plan (conversations × repeats × SNR levels). The plan is built
 * and stored before the first conversation, so a bigger one is refused up front rather than running
 * out of memory; split a larger study into runs with different `seed`s (docs/configuration.md).
 */
export const MAX_PLANNED_CONVERSATIONS = 200_000;

/** Conversations × repeats × SNR levels: what planConversations will produce. */
export function plannedCount(config: Pick<CampaignConfig, 'conversations' | 'repeats' | 'voice'>): number {
  return config.conversations * config.repeats * (config.voice?.enabled ? snrLevels(config.voice.acoustics).length : 1);
}

/** Reads and validates a campaign config (at most MAX_CONFIG_BYTES, a plan within MAX_PLANNED_CONVERSATIONS); paths resolve against its folder. */
export function loadCampaignConfig(path: string): LoadedCampaign {
  const absolute = resolve(path);
  const { data: parsed, at } = loadYamlDocument(CampaignConfigSchema, absolute, 'campaign config');
  const config = resolveCampaignPaths(parsed, dirname(absolute));
  const seeds = loadSeedPool(config.seeds, { seedIds: config.seedIds, domains: config.domains, seed: config.seed, needed: config.conversations, namedAt: at('seeds') });
  return { config, path: absolute, seeds, strategies: config.strategies === 'all' ? [...STRATEGIES] : config.strategies };
}

/** the scripted user of suites and live sessions (src/simulator/script.ts): deterministic, no model */
export const SCRIPTED_SIMULATOR = 'script';
/** a model reference, not one of the deterministic tiers (template, oracle, script) */
export const isModelRef = (ref: string) => ref !== 'template' && ref !== 'oracle' && ref !== SCRIPTED_SIMULATOR;

/**
 * Every file, folder or device a campaign config names, in one place: the loader resolves them against
 * the config file, the bench app checks them against its allowed folders, the read-outside test walks them.
 */

type PathField = GenericPathField<CampaignConfig>;

export function campaignPathFields(config: CampaignConfig): PathField[] {
  const fields: PathField[] = [{ field: 'seeds', path: config.seeds, kind: 'read', rewrite: (c, p) => (c.seeds = p) }, ...conversationsPathFields(config)];
  const embeddingModel = config.diversity?.embeddingModel;
  if (embeddingModel) fields.push({ field: 'diversity.embeddingModel', path: embeddingModel, kind: 'read', rewrite: (c, p) => (c.diversity!.embeddingModel = p) });
  return fields;
}

/** The files, folders and devices of the fields every config of conversations may have (the dialogue kind's, a suite's, a live session's). */
export function conversationsPathFields<C extends ConversationsConfig>(config: C): GenericPathField<C>[] {
  const fields: GenericPathField<C>[] = [];
  if (config.world) fields.push({ field: 'world', path: config.world, kind: 'read', rewrite: (c, p) => (c.world = p) });
  const vehicle = config.vehicle;
  if (vehicle) {
    fields.push(...namedFilePathFields<C>('vehicle.scenario', vehicle.scenario, (c, p) => (c.vehicle!.scenario = p)));
    fields.push(...namedFilePathFields<C>('vehicle.mapping', vehicle.mapping, (c, p) => (c.vehicle!.mapping = p)));
    fields.push(...transportPathFields<C>('vehicle.transport', vehicle.transport, 'write', (c, spec) => (c.vehicle!.transport = spec as TransportSpec)));
    const observe = vehicle.observe;
    if (observe) {
      fields.push(...transportPathFields<C>('vehicle.observe.transport', observe.transport, 'read', (c, spec) => (c.vehicle!.observe!.transport = spec as ObserveTransport)));
      fields.push(...namedFilePathFields<C>('vehicle.observe.mapping', observe.mapping, (c, p) => (c.vehicle!.observe!.mapping = p)));
    }
  }
  fields.push(...headUnitPathFields(config));
  const voice = config.voice;
  if (voice?.library) fields.push({ field: 'voice.library', path: voice.library, kind: 'read', rewrite: (c, p) => (c.voice!.library = p) });
  const noise = voice?.acoustics.noise;
  if (noise && 'wav' in noise) fields.push({ field: 'voice.acoustics.noise.wav', path: noise.wav, kind: 'read', rewrite: (c, p) => (c.voice!.acoustics.noise = { wav: p }) });
  if (voice?.replyRecognizer.engine === 'whisper') {
    fields.push({
      field: 'voice.replyRecognizer.modelDir',
      path: voice.replyRecognizer.modelDir,
      kind: 'read',
      rewrite: (c, p) => (c.voice!.replyRecognizer = { engine: 'whisper', modelDir: p }),
    });
  }
  if (config.llm.cacheDir) fields.push({ field: 'llm.cacheDir', path: config.llm.cacheDir, kind: 'write', rewrite: (c, p) => (c.llm.cacheDir = p) });
  if (config.simulator) fields.push(...modelRefPathFields<C>('simulator', config.simulator, (c, ref) => (c.simulator = ref)));
  config.judges.forEach((judge, i) => fields.push(...modelRefPathFields<C>(`judges.${i}`, judge, (c, ref) => (c.judges[i] = ref))));
  return fields;
}

/** A copy of `config` with every file and folder it names made absolute against `baseDir` (the folder of the file naming them). */
export function resolveCampaignPaths(config: CampaignConfig, baseDir: string): CampaignConfig {
  return withAbsolutePaths(config, campaignPathFields(config), baseDir);
}
