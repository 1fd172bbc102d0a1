import { resolve } from 'node:path';
import { z } from 'zod';
import { describeZodError } from '../domain/validation.ts';
import { TECHNIQUES, TechniqueSchema, type Technique } from './technique.ts';

/** The three accepted forms of a model reference, shown verbatim in every parse error. */
export const MODEL_REF_FORMS = [
  'ollama:<tag>                       e.g. ollama:qwen2.5:14b (server from OLLAMA_HOST, default 127.0.0.1:11434)',
  'openai-compat:<base-url>#<model>   e.g. openai-compat:http://127.0.0.1:8080/v1#qwen2.5-14b-instruct',
  'gguf:<path to .gguf file>          e.g. gguf:models/judge.gguf (loaded in-process with node-llama-cpp)',
] as const;

const HttpUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'expected an http:// or https:// base URL');

export const ModelRefSchema = z.discriminatedUnion('provider', [
  z.object({ provider: z.literal('ollama'), model: z.string().regex(/^\S+$/, 'expected an Ollama model tag without spaces') }),
  z.object({ provider: z.literal('openai-compat'), baseUrl: HttpUrl, model: z.string().min(1, 'expected a model name after "#"') }),
  z.object({ provider: z.literal('gguf'), path: z.string().regex(/\.gguf$/i, 'expected a path ending in .gguf') }),
]);
export type ModelRef = z.infer<typeof ModelRefSchema>;

export class ModelRefError extends Error {
  constructor(ref: string, problem: string) {
    super(`invalid model reference "${ref}": ${problem}. Accepted forms:\n  ${MODEL_REF_FORMS.join('\n  ')}`);
    this.name = 'ModelRefError';
  }
}

/** Splits "provider:rest" and validates the parts; errors list the three accepted forms. */
export function parseModelRef(ref: string): ModelRef {
  const colon = ref.indexOf(':');
  if (colon <= 0) throw new ModelRefError(ref, 'missing the "provider:" prefix');
  const provider = ref.slice(0, colon);
  const rest = ref.slice(colon + 1);
  let candidate: unknown;
  switch (provider) {
    case 'ollama':
      candidate = { provider, model: rest };
      break;
    case 'openai-compat': {
      const hash = rest.lastIndexOf('#');
      if (hash < 0) throw new ModelRefError(ref, 'openai-compat needs "#<model>" after the base URL');
      candidate = { provider, baseUrl: rest.slice(0, hash), model: rest.slice(hash + 1) };
      break;
    }
    case 'gguf':
      candidate = { provider, path: rest };
      break;
    default:
      throw new ModelRefError(ref, `unknown provider "${provider}" (expected ollama, openai-compat or gguf)`);
  }
  const parsed = ModelRefSchema.safeParse(candidate);
  if (!parsed.success) throw new ModelRefError(ref, describeZodError(parsed.error));
  return parsed.data;
}

/**
 * A judge reference: "oracle", a model reference, or a technique judge `TECHNIQUE:MODEL_REF`
 * (src/llm/technique.ts): `sc-5:ollama:qwen3:14b`, `adaptive-sc-5:…`, `cot-3:…`, `mab:…`, `mad:…`,
 * `io:…`, and `ar:MODEL_REF+MODEL_REF[+…]` (answer routing needs two models or more, joined by "+").
 * A model reference never starts with a technique name, so the prefix decides.
 */
export interface ParsedJudgeRef {
  /** null for a plain model judge */
  technique: Technique | null;
  /** the model references, validated */
  models: string[];
}

export class JudgeRefError extends Error {
  constructor(ref: string, problem: string) {
    super(
      `invalid judge reference "${ref}": ${problem}. Accepted: oracle, a model reference (${MODEL_REF_FORMS.map((f) => f.split(/\s+/)[0]).join(', ')}), ` +
        `or TECHNIQUE:MODEL_REF with TECHNIQUE one of ${TECHNIQUES.join(', ')} (ar takes two or more model references joined by "+", e.g. ar:ollama:qwen3:14b+ollama:llama3.1:8b)`,
    );
    this.name = 'JudgeRefError';
  }
}

/** Whether `ref` names a technique judge (its prefix is a technique name). */
export function isTechniqueRef(ref: string): boolean {
  const colon = ref.indexOf(':');
  return colon > 0 && (TECHNIQUES as readonly string[]).includes(ref.slice(0, colon));
}

/** Parses a model or technique judge reference (not "oracle"); errors name the reference and the accepted forms. */
export function parseJudgeRef(ref: string): ParsedJudgeRef {
  if (!isTechniqueRef(ref)) {
    parseModelRef(ref);
    return { technique: null, models: [ref] };
  }
  const colon = ref.indexOf(':');
  const technique = TechniqueSchema.parse(ref.slice(0, colon));
  const rest = ref.slice(colon + 1);
  if (!rest) throw new JudgeRefError(ref, `no model reference after "${technique}:"`);
  const models = technique === 'ar' ? rest.split('+') : [rest];
  if (technique === 'ar' && models.length < 2) throw new JudgeRefError(ref, 'ar (answer routing) needs at least two model references joined by "+"');
  for (const model of models) {
    if (isTechniqueRef(model)) throw new JudgeRefError(ref, `techniques do not nest ("${model}")`);
    try {
      parseModelRef(model);
    } catch (error) {
      // the model reference's own problem; the accepted forms follow once, in this error's own list
      throw new JudgeRefError(ref, (error as Error).message.split('\n')[0].replace(/\.? Accepted forms:$/, ''));
    }
  }
  return { technique, models };
}

/**
 * A judge in `judges:` of a campaign config: the string form, or the structured form
 * `{ technique: sc-5, model: ollama:qwen3:14b }` / `{ technique: ar, models: [ref, ref] }`, which
 * becomes the string form (so the run records one reference per judge).
 */
export const JudgeRefInputSchema = z
  .union([
    z.string().min(1),
    z.strictObject({ technique: TechniqueSchema, model: z.string().min(1).optional(), models: z.array(z.string().min(1)).min(1).optional() }).superRefine((value, ctx) => {
      if ((value.model === undefined) === (value.models === undefined)) ctx.addIssue({ code: 'custom', message: 'give exactly one of "model" or "models"' });
      if (value.technique !== 'ar' && (value.models?.length ?? 1) !== 1) ctx.addIssue({ code: 'custom', path: ['models'], message: `${value.technique} uses one model; only ar takes several` });
    }),
  ])
  .transform((value) => (typeof value === 'string' ? value : `${value.technique}:${(value.models ?? [value.model!]).join('+')}`));

/** A reference as named in a config file: a gguf path made absolute against the file's folder; other references unchanged. */
export function resolveRefAgainst(ref: string, baseDir: string): string {
  return ref.startsWith('gguf:') ? `gguf:${resolve(baseDir, ref.slice('gguf:'.length))}` : ref;
}

/**
 * The model family of a model reference, for GEAR's evaluator-bias test (an evaluator of the assistant's own family
 * against the others): the leading letters of the model's name, lower-cased — "ollama:qwen2.5:14b" → qwen,
 * "openai-compat:…#gpt-4o" → gpt, "gguf:models/Llama-3.1-8B.gguf" → llama, "deepseek-r1" → deepseek. Null for a
 * reference that is not a single model (a deterministic tier, a technique judge) or whose name opens with no letter.
 */
export function modelFamily(ref: string): string | null {
  let parsed: ModelRef;
  try {
    parsed = parseModelRef(ref);
  } catch {
    return null;
  }
  const name = parsed.provider === 'gguf' ? (parsed.path.split(/[\\/]/).at(-1) ?? '') : parsed.model;
  return /^[a-z]+/i.exec(name)?.[0].toLowerCase() ?? null;
}
