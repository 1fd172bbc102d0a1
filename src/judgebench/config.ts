import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { loadYaml } from '../config/yaml.ts';
import { resolveRefAgainst } from '../llm/modelRef.ts';
import { PriceTableSchema } from '../llm/usage.ts';
import { TechniqueSchema } from './techniques.ts';

/** A judge to compare: the rule oracle, or LLM judges (one or more models) with a list of techniques. */
export const JudgeSpecSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('oracle'), name: z.string().min(1).default('oracle') }),
  z.strictObject({
    kind: z.literal('llm'),
    /** label in the outputs; default: the first model reference */
    name: z.string().min(1).optional(),
    /** model references (ollama:…, openai-compat:…#…, gguf:…); technique "ar" needs at least two */
    models: z.array(z.string().min(1)).min(1),
    techniques: z.array(TechniqueSchema).min(1),
  }),
]);
export type JudgeSpec = z.infer<typeof JudgeSpecSchema>;

export const GenerateSpecSchema = z.strictObject({
  seed: z.number().int(),
  users: z.number().int().positive().default(100),
  includePreferences: z.boolean().default(true),
});

export const JudgeBenchConfigSchema = z
  .strictObject({
    name: z.string().default('judge-bench'),
    /** a JSONL dataset (relative to the config file) … */
    dataset: z.string().optional(),
    /** … or generate one */
    generate: GenerateSpecSchema.optional(),
    judges: z.array(JudgeSpecSchema).min(1),
    /** USD per million tokens by model reference; unlisted models cost 0 (local) */
    prices: PriceTableSchema.default({}),
    /** pairs judged at the same time per judge configuration */
    concurrency: z.number().int().positive().default(4),
    /** judge only the first N pairs */
    limit: z.number().int().positive().optional(),
    seed: z.number().int().default(1),
    maxRetries: z.number().int().min(0).max(5).optional(),
    timeoutMs: z.number().int().positive().optional(),
    /** non-loopback model servers the providers may reach */
    allowedHosts: z.array(z.string()).optional(),
  })
  .refine((c) => (c.dataset === undefined) !== (c.generate === undefined), { message: 'give exactly one of "dataset" or "generate"', path: ['dataset'] });
export type JudgeBenchConfig = z.infer<typeof JudgeBenchConfigSchema>;

/** Reads and validates a config; errors name the file, line and field. A relative dataset path and gguf: model paths resolve against the config's folder. */
export function loadJudgeBenchConfig(path: string): JudgeBenchConfig {
  const config = loadYaml(JudgeBenchConfigSchema, path, 'judge-bench config');
  const base = dirname(resolve(path));
  if (config.dataset) config.dataset = resolve(base, config.dataset);
  for (const judge of config.judges) if (judge.kind === 'llm') judge.models = judge.models.map((ref) => resolveRefAgainst(ref, base));
  return config;
}
