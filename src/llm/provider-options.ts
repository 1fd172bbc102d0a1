import type { RequestCache } from './cache.ts';
import type { EndpointPolicy } from './endpointPolicy.ts';
import type { ConcurrencyLimiter } from './limiter.ts';
import type { GgufProviderOptions } from './providers/gguf.ts';
import type { CacheHints } from './session-slots.ts';

/** How a chat provider is built (createProvider in ./index.ts); the run's `llm:` settings give them (providerOptionsFrom in ./settings.ts). */
export interface ProviderOptions extends EndpointPolicy {
  /** Ollama server; default OLLAMA_HOST, else 127.0.0.1:11434 */
  ollamaHost?: string;
  /** per-call time limit (the time spent queued in the limiter does not count) */
  timeoutMs?: number;
  /**
   * Calls in flight at once against this provider's server. Default: OLLAMA_NUM_PARALLEL (else 1) for
   * Ollama, 4 for openai-compat servers, 1 for in-process gguf. Further calls queue.
   */
  maxConcurrent?: number;
  /** a limiter to use instead of the per-endpoint shared one */
  limiter?: ConcurrencyLimiter;
  /** development request cache; off unless given */
  cache?: RequestCache;
  stream?: boolean;
  keepAlive?: string | number;
  apiKey?: string;
  openaiStructuredMode?: 'json_schema' | 'tool';
  /** llama.cpp's `cache_prompt: true` on OpenAI-compatible calls (see OpenAiCompatProviderOptions.cachePrompt) */
  openaiCachePrompt?: boolean;
  /** hints that keep a conversation on its slot or cache entry, for OpenAI-compatible servers (./session-slots.ts); default off */
  cacheHints?: CacheHints;
  /** the server's slots (llama-server `--parallel`) for `cacheHints: llama.cpp`; default: the calls in flight allowed (maxConcurrent) */
  slots?: number;
  gguf?: GgufProviderOptions;
  /** replaces the global fetch (tests); still guarded by the endpoint policy */
  fetch?: typeof fetch;
}
