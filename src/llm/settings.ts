import { z } from 'zod';
import { FileRequestCache } from './cache.ts';
import { DEFAULT_OLLAMA_KEEP_ALIVE } from './providers/common.ts';
import type { ProviderOptions } from './provider-options.ts';
import { PriceTableSchema } from './usage.ts';
import { CacheHintsSchema } from './session-slots.ts';
import { timerMsSchema } from '../domain/durations.ts';

/**
 * The `llm` section of a bench config: how model tiers reach their servers. Everything has an
 * offline, conservative default (loopback only, no cache, temperature 0).
 */
export const LlmSettingsSchema = z.strictObject({
  /** lab hosts allowed besides loopback (names or IPs, matched exactly, not resolved) */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** Ollama server; default OLLAMA_HOST, else 127.0.0.1:11434 */
  ollamaHost: z.string().optional(),
  timeoutMs: timerMsSchema().default(120_000),
  /** calls in flight per server; default OLLAMA_NUM_PARALLEL or 1 for Ollama, 4 for OpenAI-compatible, 1 for gguf */
  maxConcurrent: z.number().int().min(1).max(256).optional(),
  maxRetries: z.number().int().min(0).max(10).default(2),
  temperature: z.number().min(0).max(2).default(0),
  /** fixed seed for every call; default the conversation's rngSeed */
  seed: z.number().int().optional(),
  stream: z.boolean().default(false),
  /**
   * Ollama `keep_alive`: how long the model (and its KV cache) stays loaded after a call; a Go duration ("30m",
   * "1h30m"; negative: for ever) or seconds. Checked here, because Ollama refuses a bad one with HTTP 400 on every call.
   */
  keepAlive: z
    .union([z.string().regex(/^-?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$|^0$/, 'a Go duration such as "30m", "1h30m" or "-1m" (negative: keep for ever), or a number of seconds'), z.number()])
    .default(DEFAULT_OLLAMA_KEEP_ALIVE),
  /** development request cache directory; off when absent (campaigns measure, they do not replay) */
  cacheDir: z.string().optional(),
  /** USD per million tokens for metered endpoints, by model reference */
  prices: PriceTableSchema.default({}),
  openaiStructuredMode: z.enum(['json_schema', 'tool']).default('json_schema'),
  /** send llama.cpp's `cache_prompt: true` to OpenAI-compatible servers (older llama.cpp builds; some servers refuse unknown fields) */
  openaiCachePrompt: z.boolean().default(false),
  /**
   * Keep each conversation where the server has its prompt cached (./session-slots.ts): `llama.cpp` (id_slot and
   * cache_prompt), `prompt-cache-key` (OpenAI's prompt_cache_key), `off`. OpenAI-compatible servers only.
   */
  cacheHints: CacheHintsSchema.default('off'),
  /** llama-server's slots (`--parallel`) for cacheHints llama.cpp; default maxConcurrent */
  slots: z.number().int().min(1).max(256).optional(),
  gguf: z.strictObject({ gpu: z.union([z.literal('auto'), z.literal(false)]).default('auto'), contextSize: z.number().int().min(512).default(8192), threads: z.number().int().min(1).optional() }).default({ gpu: 'auto', contextSize: 8192 }),
});
export type LlmSettings = z.infer<typeof LlmSettingsSchema>;

export function providerOptionsFrom(settings: LlmSettings): ProviderOptions {
  return {
    allowedHosts: settings.allowedHosts,
    ollamaHost: settings.ollamaHost,
    timeoutMs: settings.timeoutMs,
    maxConcurrent: settings.maxConcurrent,
    stream: settings.stream,
    keepAlive: settings.keepAlive,
    openaiStructuredMode: settings.openaiStructuredMode,
    openaiCachePrompt: settings.openaiCachePrompt,
    cacheHints: settings.cacheHints,
    slots: settings.slots,
    gguf: settings.gguf,
    ...(settings.cacheDir ? { cache: new FileRequestCache(settings.cacheDir) } : {}),
  };
}
