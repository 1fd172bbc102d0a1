import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { HHMM, ISODate } from '../domain/context.ts';
import { SeedPhraseSchema } from '../domain/conversation.ts';
import { DEFAULT_SAFETY_POLICY, SafetyPolicySchema } from '../domain/safety-policy.ts';
import { PersonaSchema, StrategySchema, STRATEGIES, type Strategy } from '../domain/taxonomy.ts';
import { FaultConfigSchema } from '../headunit/reference/faults.ts';
import { ScoringSchema } from '../judge/score.ts';
import { VehicleConfigSchema } from '../vehicle/config.ts';
import { LlmSettingsSchema } from '../llm/settings.ts';
import { VoiceConfigSchema } from '../voice/config.ts';
import { DiversityConfigSchema } from '../analysis/diversity.ts';
import { JudgeRefInputSchema } from '../llm/modelRef.ts';

export const HeadUnitConfigSchema = z.discriminatedUnion('type', [
  /** the offline reference head unit, dialled in over the bridge inside this process */
  z.object({
    type: z.literal('reference'),
    worldSeed: z.number().int().default(1),
    faults: FaultConfigSchema.default({ profiles: [], rate: 0.5, rates: {}, seed: 7 }),
    /** the policy the reference unit itself follows; default: the campaign's `safety` (set it to test a unit built to another rule) */
    safety: SafetyPolicySchema.optional(),
  }),
  /** a real head unit (or `icabench headunit`) that dials in to the bench's bridge */
  z.object({
    type: z.literal('bridge'),
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(7311),
    /** name of the environment variable holding the shared token */
    tokenEnv: z.string().default('ICABENCH_BRIDGE_TOKEN'),
    waitSeconds: z.number().positive().default(60),
    turnTimeoutMs: z.number().int().positive().default(15_000),
    maxMessageBytes: z.number().int().positive().optional(),
    /** flood guard: unsolicited messages per second one head unit may send (replies to the bench's requests never count) */
    maxMessagesPerSecond: z.number().positive().default(500),
    /** while no unit is connected the campaign starts no conversation; it stops (resumable) when none dials in within this grace */
    reconnectGraceSeconds: z.number().positive().default(60),
  }),
  /** a text-only assistant behind an OpenAI-compatible chat endpoint */
  z.object({
    type: z.literal('http'),
    baseUrl: z.string().url(),
    model: z.string(),
    apiKeyEnv: z.string().optional(),
    timeoutMs: z.number().int().positive().default(30_000),
    systemPrompt: z.string().optional(),
  }),
]);
export type HeadUnitConfig = z.infer<typeof HeadUnitConfigSchema>;

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
  .object({
    name: z.string().min(1),
    description: z.string().default(''),
    /** guided: strategies and evaluator feedback; baseline: neither (paper's baseline) */
    mode: z.enum(['guided', 'baseline']).default('guided'),
    /** seed-phrase pool, a YAML file relative to this config */
    seeds: z.string().min(1),
    /** restrict to seeds whose id is listed */
    seedIds: z.array(z.string()).optional(),
    /** task combinations: how many domains (requests) a seed may span */
    domains: z.object({ min: z.number().int().min(1).default(1), max: z.number().int().min(1).default(3) }).default({ min: 1, max: 3 }),
    conversations: z.number().int().min(1).max(100_000),
    repeats: z.number().int().min(1).max(100).default(1),
    personas: z.array(PersonaSchema).min(1).default(['neutral']),
    strategies: z.union([z.literal('all'), z.array(StrategySchema)]).default('all'),
    consecutiveLimits: z.partialRecord(StrategySchema, z.number().int().min(1)).default({}),
    /** turn budgets M, sampled per conversation */
    maxTurns: z.array(z.number().int().min(2).max(50)).min(1).default([8, 10]),
    dates: z.array(ISODate).min(1).default(['2026-05-12']),
    timeWindow: z.object({ from: HHMM, to: HHMM }).default({ from: '11:00', to: '16:00' }),
    /** wall-clock budget for the whole run (the paper ran 4 h) */
    budgetMinutes: z.number().positive().optional(),
    concurrency: z.number().int().min(1).max(64).default(4),
    /** sampling seed: the same seed and pool give the same conversations */
    seed: z.number().int().default(42),
    headUnit: HeadUnitConfigSchema.default({ type: 'reference', worldSeed: 1, faults: { profiles: [], rate: 0.5, rates: {}, seed: 7 } }),
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
    if (config.voice?.enabled && config.headUnit.type === 'http') {
      ctx.addIssue({ code: 'custom', path: ['voice'], message: 'the http head unit adapter carries text only; spoken turns need the reference head unit or a head unit on the bridge' });
    }
  });
export type CampaignConfig = z.infer<typeof CampaignConfigSchema>;

export const SeedPoolSchema = z.object({ seeds: z.array(SeedPhraseSchema).min(1) });

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Line number of the YAML node at `path`, so an error can point at the line in the file. */
function lineOf(doc: ReturnType<typeof parseDocument>, counter: LineCounter, path: readonly PropertyKey[]): number | null {
  let node: Node | null | undefined = doc.contents as Node | null;
  let last = node;
  for (const key of path) {
    if (isMap(node)) node = node.get(key as string, true) as Node | undefined;
    else if (isSeq(node)) node = node.get(Number(key), true) as Node | undefined;
    else break;
    if (node) last = node;
    else break;
  }
  const offset = last?.range?.[0];
  return offset === undefined ? null : counter.linePos(offset).line;
}

/** Parses YAML text with a schema; errors name the file, the line, the field and what was expected. */
export function parseYamlWith<S extends z.ZodType>(schema: S, text: string, file: string): z.output<S> {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    throw new ConfigError(`${file}:${e.linePos?.[0].line ?? '?'}: invalid YAML: ${e.message.split('\n')[0]}`);
  }
  const result = schema.safeParse(doc.toJS());
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const line = lineOf(doc, counter, issue.path);
      const field = issue.path.length ? issue.path.join('.') : '(top level)';
      return `${file}${line ? `:${line}` : ''}: ${field}: ${issue.message}`;
    });
    throw new ConfigError(lines.join('\n'));
  }
  return result.data;
}

export interface LoadedCampaign {
  config: CampaignConfig;
  path: string;
  seeds: z.infer<typeof SeedPoolSchema>['seeds'];
  strategies: Strategy[];
}

export function loadCampaignConfig(path: string): LoadedCampaign {
  const absolute = resolve(path);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch {
    throw new ConfigError(`${path}: cannot read the campaign config (does the file exist?)`);
  }
  const config = parseYamlWith(CampaignConfigSchema, text, path);
  return { config, path: absolute, seeds: loadSeeds(config, dirname(absolute)), strategies: config.strategies === 'all' ? [...STRATEGIES] : config.strategies };
}

function loadSeeds(config: CampaignConfig, baseDir: string): LoadedCampaign['seeds'] {
  const seedPath = resolve(baseDir, config.seeds);
  let text: string;
  try {
    text = readFileSync(seedPath, 'utf8');
  } catch {
    throw new ConfigError(`${config.seeds}: cannot read the seed pool named in "seeds" (resolved to ${seedPath})`);
  }
  let seeds = parseYamlWith(SeedPoolSchema, text, seedPath).seeds;
  if (config.seedIds) {
    const unknown = config.seedIds.filter((id) => !seeds.some((s) => s.id === id));
    if (unknown.length) throw new ConfigError(`seedIds: ${unknown.join(', ')} not found in ${config.seeds}`);
    seeds = seeds.filter((s) => config.seedIds!.includes(s.id));
  }
  seeds = seeds.filter((s) => s.requests.length >= config.domains.min && s.requests.length <= config.domains.max);
  if (seeds.length === 0) throw new ConfigError(`domains: no seed in ${config.seeds} spans ${config.domains.min}–${config.domains.max} requests`);
  return seeds;
}
