import { resolve } from 'node:path';
import { z } from 'zod';
import { describeZodError } from '../domain/validation.ts';

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

/** A reference as named in a config file: a gguf path made absolute against the file's folder; other references unchanged. */
export function resolveRefAgainst(ref: string, baseDir: string): string {
  return ref.startsWith('gguf:') ? `gguf:${resolve(baseDir, ref.slice('gguf:'.length))}` : ref;
}
