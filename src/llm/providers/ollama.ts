import { Ollama, type ChatResponse as OllamaChatResponse } from 'ollama';
import { assertAllowedEndpoint, guardedFetch, type EndpointPolicy } from '../endpointPolicy.ts';
import { LlmError, type ChatRequest, type ChatResponse, type LlmProvider } from '../types.ts';
import { callSignal, classifyCallError, DEFAULT_OLLAMA_KEEP_ALIVE, DEFAULT_TIMEOUT_MS, fetchWithSignal } from './common.ts';
import { keepAliveFetch } from './keepAliveFetch.ts';

export const DEFAULT_OLLAMA_HOST = 'http://127.0.0.1:11434';

/** Resolves a host the way Ollama's own tools do: OLLAMA_HOST may be "host", "host:port", ":port" or a URL; default 127.0.0.1:11434. */
export function resolveOllamaHost(value: string | undefined = process.env.OLLAMA_HOST): string {
  if (!value || !value.trim()) return DEFAULT_OLLAMA_HOST;
  let host = value.trim();
  let explicitProtocol = host.includes('://');
  if (host.startsWith(':')) {
    host = `http://127.0.0.1${host}`;
    explicitProtocol = true;
  }
  if (!explicitProtocol) host = `http://${host}`;
  const url = new URL(host);
  // Ollama listens on 0.0.0.0 when told to; clients reach it on loopback
  const hostname = url.hostname === '0.0.0.0' ? '127.0.0.1' : url.hostname;
  const port = url.port || (explicitProtocol ? (url.protocol === 'https:' ? '443' : '80') : '11434');
  return `${url.protocol}//${hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname}:${port}${url.pathname.replace(/\/$/, '')}`;
}

export interface OllamaProviderOptions extends EndpointPolicy {
  host?: string;
  timeoutMs?: number;
  stream?: boolean;
  /** how long Ollama keeps the model loaded after a call ("30m", seconds, -1 for ever), so a campaign does not reload it; default DEFAULT_OLLAMA_KEEP_ALIVE */
  keepAlive?: string | number;
  /** replaces the HTTP fetch (tests); default: the keep-alive fetch for non-streaming calls, the platform fetch for streaming */
  fetch?: typeof fetch;
}

export function createOllamaProvider(ref: string, model: string, options: OllamaProviderOptions = {}): LlmProvider & { readonly host: string } {
  const host = resolveOllamaHost(options.host);
  assertAllowedEndpoint(host, options);
  const baseFetch = guardedFetch(options, options.fetch ?? (options.stream ? undefined : keepAliveFetch));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    const started = performance.now();
    const { signal, timedOut, done } = callSignal(timeoutMs, request.signal);
    // a client per call: the library's non-streaming requests take no signal, the fetch carries it
    const client = new Ollama({ host, fetch: fetchWithSignal(baseFetch, signal) });
    const body = {
      model,
      messages: request.messages,
      format: request.jsonSchema,
      keep_alive: options.keepAlive ?? DEFAULT_OLLAMA_KEEP_ALIVE,
      options: {
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.seed !== undefined ? { seed: request.seed } : {}),
        ...(request.maxTokens !== undefined ? { num_predict: request.maxTokens } : {}),
      },
    };
    try {
      let final: OllamaChatResponse | undefined;
      let text = '';
      if (options.stream) {
        const parts = await client.chat({ ...body, stream: true });
        for await (const part of parts) {
          text += part.message?.content ?? '';
          if (part.done) final = part;
        }
        if (!final) throw new LlmError('server_error', `${ref}: the stream ended before Ollama reported done (connection cut?)`);
      } else {
        final = await client.chat({ ...body, stream: false });
        text = final.message?.content ?? '';
      }
      return {
        text,
        promptTokens: final.prompt_eval_count ?? 0,
        completionTokens: final.eval_count ?? 0,
        latencyMs: performance.now() - started,
        truncated: final.done_reason === 'length',
        ...(final.total_duration ? { computeMs: final.total_duration / 1e6 } : {}),
      };
    } catch (error) {
      throw classifyOllamaError(error, ref, model, host, timedOut(), request.signal);
    } finally {
      done();
    }
  }

  return { ref, kind: 'ollama', host, chat, close: async () => {} };
}

function classifyOllamaError(error: unknown, ref: string, model: string, host: string, timedOut: boolean, callerSignal?: AbortSignal): unknown {
  const status = (error as { status_code?: number }).status_code;
  if (typeof status === 'number') {
    const hint = status === 404 ? ` (is the model pulled? run: ollama pull ${model})` : '';
    return new LlmError('server_error', `${ref}: Ollama at ${host} answered HTTP ${status}: ${(error as Error).message}${hint}`);
  }
  const classified = classifyCallError(error, `${ref}: Ollama at ${host}`, timedOut, callerSignal);
  if (classified instanceof LlmError && classified.kind === 'server_error' && /ECONNREFUSED|fetch failed/.test(classified.message)) {
    return new LlmError('server_error', `${classified.message.replace(/^server_error: /, '')} (is the server running? run: ollama serve)`);
  }
  return classified;
}
