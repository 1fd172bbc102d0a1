import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { loadYaml } from '../config/yaml.ts';
import { parseJudgeRef, resolveRefAgainst } from '../llm/modelRef.ts';
import { PriceTableSchema } from '../llm/usage.ts';
import { MethodSchema } from '../domain/method.ts';
import { TechniqueSchema } from './techniques.ts';
import { timerMsSchema } from '../domain/durations.ts';

/** A judge to compare: the rule oracle, or LLM judges (one or more models) with a list of techniques. */
const JudgeSpecObjectSchema = z.discriminatedUnion('kind', [
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

/**
 * A judge as a campaign names it in `judges:` is a judge here too: "oracle", a model reference
 * (benchmarked with io) or a technique judge reference `TECHNIQUE:MODEL_REF` (with its technique),
 * so the judge a lab deploys is the judge it measures.
 */
export const JudgeSpecSchema = z.unknown().transform((value, ctx): z.output<typeof JudgeSpecObjectSchema> => {
  if (typeof value !== 'string') {
    // the object form, with its own errors (a union would bury them under "invalid input")
    const parsed = JudgeSpecObjectSchema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  }
  if (value === 'oracle') return { kind: 'oracle', name: 'oracle' };
  try {
    const parsed = parseJudgeRef(value);
    return { kind: 'llm', models: parsed.models, techniques: [parsed.technique ?? 'io'] };
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message.split('\n')[0] });
    return z.NEVER;
  }
});
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
    timeoutMs: timerMsSchema().optional(),
    /** non-loopback model servers the providers may reach */
    allowedHosts: z.array(z.string()).optional(),
    /** lab (default) or Habicht et al. as published: temperature 0 everywhere, SC and AR on the CoT-5 examples, AR discussing up to 3 rounds, F1 with "correct" as the positive class (docs/reproduction.md) */
    method: MethodSchema.default('lab'),
    /** also judge the injection set (every pair with an instruction appended that demands the wrong verdict) and report each judge's susceptibility */
    injection: z.boolean().default(false),
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
