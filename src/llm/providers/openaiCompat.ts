import OpenAI, { APIError } from 'openai';
import { assertAllowedEndpoint, guardedFetch, type EndpointPolicy } from '../endpointPolicy.ts';
import { LlmError, type ChatRequest, type ChatResponse, type LlmProvider } from '../types.ts';
import { callSignal, classifyCallError, DEFAULT_TIMEOUT_MS } from './common.ts';
import { keepAliveFetch } from './keepAliveFetch.ts';
import type { CacheHints } from '../session-slots.ts';

export interface OpenAiCompatProviderOptions extends EndpointPolicy {
  /** most local servers ignore it; OPENAI_API_KEY when set, else a placeholder */
  apiKey?: string;
  timeoutMs?: number;
  stream?: boolean;
  /**
   * How structured output is requested: `json_schema` (response_format; llama.cpp server, vLLM, LM Studio)
   * or `tool` (a forced function call whose parameters are the schema, for servers that only constrain tools).
   */
  structuredMode?: 'json_schema' | 'tool';
  /**
   * Send llama.cpp server's `cache_prompt: true` (reuse the KV cache of the slot's previous prompt prefix). llama.cpp
   * has defaulted to it since late 2024, so it only matters for older builds; other servers may refuse the unknown
   * field (vLLM before 0.6.5) or log a warning per request (later vLLM), hence off unless asked for.
   */
  cachePrompt?: boolean;
  /**
   * Hints that keep a conversation where the server has its prompt cached (../session-slots.ts): `llama.cpp` sends
   * the session's slot as `id_slot` with `cache_prompt: true`, `prompt-cache-key` the session as `prompt_cache_key`.
   */
  cacheHints?: CacheHints;
  /** replaces the HTTP fetch (tests); default: the keep-alive fetch for non-streaming calls, the platform fetch for streaming */
  fetch?: typeof fetch;
}

// cache_prompt and id_slot are llama.cpp's fields, not OpenAI's; the client sends body fields it does not know as they are
type CreateParams = OpenAI.Chat.Completions.ChatCompletionCreateParams & { cache_prompt?: boolean; id_slot?: number; prompt_cache_key?: string };

/** The body fields of a call's cache hints. */
function cacheHintFields(hints: CacheHints | undefined, request: ChatRequest, cachePrompt: boolean): Partial<CreateParams> {
  if (hints === 'llama.cpp') return { cache_prompt: true, ...(request.slot !== undefined ? { id_slot: request.slot } : {}) };
  const always = cachePrompt ? { cache_prompt: true } : {};
  if (hints === 'prompt-cache-key' && request.session !== undefined) return { ...always, prompt_cache_key: request.session };
  return always;
}

export function createOpenAiCompatProvider(ref: string, baseUrl: string, model: string, options: OpenAiCompatProviderOptions = {}): LlmProvider {
  assertAllowedEndpoint(baseUrl, options);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const mode = options.structuredMode ?? 'json_schema';
  const client = new OpenAI({
    baseURL: baseUrl,
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'not-needed-for-local-servers',
    fetch: guardedFetch(options, options.fetch ?? (options.stream ? undefined : keepAliveFetch)),
    // retries are the structured-output layer's job, with the validation error fed back
    maxRetries: 0,
    timeout: timeoutMs,
  });

  function buildParams(request: ChatRequest): CreateParams {
    const schemaName = (request.schemaName ?? 'output').replace(/[^a-zA-Z0-9_-]/g, '_');
    const params: CreateParams = {
      model,
      messages: request.messages,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
      ...cacheHintFields(options.cacheHints, request, options.cachePrompt ?? false),
    };
    if (request.jsonSchema && mode === 'json_schema') {
      params.response_format = { type: 'json_schema', json_schema: { name: schemaName, schema: request.jsonSchema, strict: true } };
    } else if (request.jsonSchema && mode === 'tool') {
      params.tools = [{ type: 'function', function: { name: schemaName, description: 'Report the answer.', parameters: request.jsonSchema } }];
      params.tool_choice = { type: 'function', function: { name: schemaName } };
    }
    return params;
  }

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    const started = performance.now();
    const { signal, timedOut, done } = callSignal(timeoutMs, request.signal);
    const params = buildParams(request);
    const useTool = Boolean(params.tools);
    try {
      if (options.stream) {
        const stream = await client.chat.completions.create(
          { ...params, stream: true, stream_options: { include_usage: true } },
          { signal },
        );
        let text = '';
        let finish: string | null = null;
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const chunk of stream) {
          const choice = chunk.choices[0];
          if (choice) {
            text += useTool ? (choice.delta.tool_calls?.[0]?.function?.arguments ?? '') : (choice.delta.content ?? '');
            finish = choice.finish_reason ?? finish;
          }
          if (chunk.usage) usage = chunk.usage;
        }
        if (!finish) throw new LlmError('server_error', `${ref}: the stream ended without a finish_reason (connection cut?)`);
        return {
          text,
          promptTokens: usage?.prompt_tokens ?? 0,
          completionTokens: usage?.completion_tokens ?? 0,
          latencyMs: performance.now() - started,
          truncated: finish === 'length',
        };
      }
      const completion = await client.chat.completions.create({ ...params, stream: false }, { signal });
      const choice = completion.choices[0];
      if (!choice) throw new LlmError('server_error', `${ref}: the server returned no choices`);
      const toolCall = choice.message.tool_calls?.[0];
      const text = useTool ? (toolCall && toolCall.type === 'function' ? toolCall.function.arguments : '') : (choice.message.content ?? '');
      return {
        text,
        promptTokens: completion.usage?.prompt_tokens ?? 0,
        completionTokens: completion.usage?.completion_tokens ?? 0,
        latencyMs: performance.now() - started,
        truncated: choice.finish_reason === 'length',
      };
    } catch (error) {
      if (error instanceof APIError && typeof error.status === 'number') {
        return Promise.reject(new LlmError('server_error', `${ref}: ${baseUrl} answered HTTP ${error.status}: ${error.message}`));
      }
      const name = (error as Error).name;
      if (name === 'APIConnectionTimeoutError') throw new LlmError('timeout', `${ref}: no answer from ${baseUrl} within ${timeoutMs} ms`);
      if (name === 'APIUserAbortError' && timedOut()) throw new LlmError('timeout', `${ref}: no complete answer from ${baseUrl} within ${timeoutMs} ms`);
      throw classifyCallError(error, `${ref}: ${baseUrl}`, timedOut(), request.signal);
    } finally {
      done();
    }
  }

  return { ref, kind: 'openai-compat', chat, close: async () => {} };
}
