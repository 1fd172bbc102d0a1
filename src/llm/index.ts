import { resolve } from 'node:path';
import { requestCacheKey, type RequestCache } from './cache.ts';
import { ConcurrencyLimiter, sharedLimiter } from './limiter.ts';
import { parseModelRef } from './modelRef.ts';
import type { EndpointPolicy } from './endpointPolicy.ts';
import { createGgufProvider } from './providers/gguf.ts';
import type { ProviderOptions } from './provider-options.ts';
import { createOllamaProvider, resolveOllamaHost } from './providers/ollama.ts';
import { createOpenAiCompatProvider } from './providers/openaiCompat.ts';
import type { ChatRequest, ChatResponse, LlmProvider } from './types.ts';
import { sharedSessionSlots, type SessionSlots } from './session-slots.ts';

export { parseModelRef, ModelRefSchema, ModelRefError, MODEL_REF_FORMS, type ModelRef } from './modelRef.ts';
export { LlmUsageTracker, PriceTableSchema, LlmUsageSummarySchema, type LlmUsageSummary, type LlmCallRecord, type LlmCallKind, type PriceTable } from './usage.ts';
export { generateStructured, jsonSchemaFor, DEFAULT_MAX_RETRIES, type StructuredOptions } from './structured.ts';
export { parseNearJson } from './nearJson.ts';
export { assertAllowedEndpoint, guardedFetch, type EndpointPolicy } from './endpointPolicy.ts';
export { ConcurrencyLimiter, sharedLimiter } from './limiter.ts';
export { CacheHintsSchema, endSession, SessionSlots, type CacheHints } from './session-slots.ts';
export { FileRequestCache, MemoryRequestCache, requestCacheKey, type RequestCache } from './cache.ts';
export { resolveOllamaHost, DEFAULT_OLLAMA_HOST } from './providers/ollama.ts';
export type { ProviderOptions } from './provider-options.ts';
export { ModelManifestSchema, loadModelManifest, type ModelManifest } from './manifest.ts';
export { checkModelAvailability, type ModelAvailability, type AvailabilityOptions } from './availability.ts';
export { LlmSettingsSchema, providerOptionsFrom, type LlmSettings } from './settings.ts';
export { LlmError, type LlmProvider, type ChatRequest, type ChatResponse, type StructuredResult } from './types.ts';

function defaultConcurrency(kind: LlmProvider['kind']): number {
  if (kind === 'ollama') {
    const parallel = Number(process.env.OLLAMA_NUM_PARALLEL);
    return Number.isInteger(parallel) && parallel > 0 ? parallel : 1;
  }
  return kind === 'openai-compat' ? 4 : 1;
}

/**
 * Builds the provider for a model reference ("ollama:…", "openai-compat:…#…", "gguf:…").
 * Throws LlmError('refused_endpoint') for a server outside loopback and `allowedHosts`,
 * before any connection is opened.
 */
export function createProvider(ref: string, options: ProviderOptions = {}): LlmProvider {
  const parsed = parseModelRef(ref);
  const policy: EndpointPolicy = { allowedHosts: options.allowedHosts };
  let raw: LlmProvider;
  let endpoint: string;
  switch (parsed.provider) {
    case 'ollama': {
      const host = resolveOllamaHost(options.ollamaHost);
      raw = createOllamaProvider(ref, parsed.model, { ...policy, host, timeoutMs: options.timeoutMs, stream: options.stream, keepAlive: options.keepAlive, fetch: options.fetch });
      endpoint = `ollama ${host}`;
      break;
    }
    case 'openai-compat':
      raw = createOpenAiCompatProvider(ref, parsed.baseUrl, parsed.model, {
        ...policy,
        apiKey: options.apiKey,
        timeoutMs: options.timeoutMs,
        stream: options.stream,
        structuredMode: options.openaiStructuredMode,
        cachePrompt: options.openaiCachePrompt,
        cacheHints: options.cacheHints,
        fetch: options.fetch,
      });
      endpoint = `openai-compat ${parsed.baseUrl}`;
      break;
    case 'gguf':
      raw = createGgufProvider(ref, parsed.path, options.gguf);
      // one in-process model per file: providers on the same file share its slots
      endpoint = `gguf ${resolve(parsed.path)}`;
      break;
  }
  const limiter = options.limiter ?? sharedLimiter(endpoint, options.maxConcurrent ?? defaultConcurrency(raw.kind));
  // llama-server slots: each conversation on its own (the provider sends it as id_slot)
  const sessions = raw.kind === 'openai-compat' && options.cacheHints === 'llama.cpp' ? sharedSessionSlots(endpoint, options.slots ?? limiter.maxConcurrent) : undefined;
  return withLimiterAndCache(raw, limiter, options.cache, sessions);
}

/**
 * Queues calls through the limiter and answers repeated identical requests from the cache when one is given; with
 * `sessions`, a conversation's calls go one at a time to its slot (the wait for its own previous call holds no place
 * in the limiter).
 */
export function withLimiterAndCache(provider: LlmProvider, limiter: ConcurrencyLimiter, cache?: RequestCache, sessions?: SessionSlots): LlmProvider {
  return {
    ref: provider.ref,
    kind: provider.kind,
    close: () => provider.close(),
    async chat(request: ChatRequest): Promise<ChatResponse> {
      const key = cache ? requestCacheKey(provider.ref, request) : '';
      if (cache) {
        const hit = await cache.get(key);
        if (hit) return { ...hit, cached: true };
      }
      const session = request.session;
      const response = sessions && session !== undefined ? await sessions.run(session, (slot) => limiter.run(() => provider.chat({ ...request, slot }))) : await limiter.run(() => provider.chat(request));
      if (cache) await cache.set(key, response);
      return response;
    },
  };
}
