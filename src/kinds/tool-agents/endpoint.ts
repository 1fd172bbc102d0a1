import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { assertAllowedEndpoint, guardedFetch, type EndpointPolicy } from '../../llm/endpointPolicy.ts';
import { parseModelRef } from '../../llm/modelRef.ts';
import { resolveOllamaHost } from '../../llm/providers/ollama.ts';
import { callSignal, classifyCallError, DEFAULT_TIMEOUT_MS, fetchWithSignal } from '../../llm/providers/common.ts';
import { keepAliveFetch } from '../../llm/providers/keepAliveFetch.ts';
import { LlmError } from '../../llm/types.ts';
import type { LlmCallRecord, LlmUsageTracker } from '../../llm/usage.ts';
import type { AgentReply, AgentTurnInput, ToolAgent } from './loop.ts';
import type { TrajectoryMessage } from './trajectory.ts';
import { agentNameWithThinking, ollamaThink, openAiThinkingFields, type ThinkingMode } from './thinking.ts';

/**
 * The system under test as a chat endpoint with tool calling: an OpenAI-compatible server (`openai-compat:<url>#<model>`)
 * or Ollama (`ollama:<model>`), with the same model references, endpoint policy (loopback unless allowed), timeouts
 * and error classification as src/llm's providers. The bench runs the loop; the model only answers each turn with
 * text or tool calls. gguf references are refused: node-llama-cpp's in-process chat has no tool-call API here.
 */
export interface EndpointAgentOptions extends EndpointPolicy {
  timeoutMs?: number;
  temperature?: number;
  seed?: number;
  /** Ollama host (default OLLAMA_HOST / 127.0.0.1:11434) */
  ollamaHost?: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** records every call with its usage (kind `agent`), like every model role's calls (stored as `llm.calls`) */
  tracker?: LlmUsageTracker | null;
  /** the model's reasoning mode (thinking.ts); absent sends nothing and leaves the server's default */
  thinking?: ThinkingMode;
}

/** What one agent call cost, as the server reported it. */
type CallUsage = Pick<LlmCallRecord, 'promptTokens' | 'completionTokens' | 'computeMs'>;

/** Runs one agent call and records it with its usage, or with its error kind when it failed (a failed call is a call too). */
async function recordedCall<T>(ref: string, tracker: LlmUsageTracker | null | undefined, call: () => Promise<{ value: T; usage: CallUsage }>): Promise<T> {
  const started = performance.now();
  try {
    const { value, usage } = await call();
    tracker?.record({ ref, kind: 'agent', ...usage, latencyMs: performance.now() - started, retries: 0, error: null });
    return value;
  } catch (error) {
    tracker?.record({ ref, kind: 'agent', promptTokens: 0, completionTokens: 0, latencyMs: performance.now() - started, retries: 0, error: error instanceof LlmError ? error.kind : 'server_error' });
    throw error;
  }
}

type OpenAiMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

export function toOpenAiMessages(systemPrompt: string, messages: readonly TrajectoryMessage[]): OpenAiMessage[] {
  const out: OpenAiMessage[] = [{ role: 'system', content: systemPrompt }];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'tool') out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.content });
    else if (m.toolCalls.length)
      out.push({
        role: 'assistant',
        content: m.content || null,
        tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) } })),
      });
    else out.push({ role: 'assistant', content: m.content });
  }
  return out;
}

export function toOllamaMessages(systemPrompt: string, messages: readonly TrajectoryMessage[]) {
  const out: Array<{ role: string; content: string; tool_calls?: Array<{ function: { name: string; arguments: Record<string, unknown> } }>; tool_name?: string }> = [
    { role: 'system', content: systemPrompt },
  ];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'tool') out.push({ role: 'tool', content: m.content, tool_name: m.name });
    else
      out.push({
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls.length
          ? { tool_calls: m.toolCalls.map((c) => ({ function: { name: c.name, arguments: (c.arguments && typeof c.arguments === 'object' ? c.arguments : {}) as Record<string, unknown> } })) }
          : {}),
      });
  }
  return out;
}

/** The reasoning an OpenAI-compatible server returned beside the answer: `reasoning_content` (vLLM, llama.cpp, DeepSeek) or `reasoning`. */
function reasoningField(message: object): { reasoning?: string } {
  const fields = message as { reasoning_content?: unknown; reasoning?: unknown };
  const text = typeof fields.reasoning_content === 'string' ? fields.reasoning_content : typeof fields.reasoning === 'string' ? fields.reasoning : '';
  return text ? { reasoning: text } : {};
}

export function createEndpointAgent(ref: string, options: EndpointAgentOptions = {}): ToolAgent {
  const parsed = parseModelRef(ref);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (parsed.provider === 'openai-compat') {
    assertAllowedEndpoint(parsed.baseUrl, options);
    const client = new OpenAI({
      baseURL: parsed.baseUrl,
      apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'not-needed-for-local-servers',
      // the same lean keep-alive fetch as the bench's own model tiers (src/llm/providers/keepAliveFetch.ts): these calls are not streamed
      fetch: guardedFetch(options, options.fetch ?? keepAliveFetch),
      maxRetries: 0,
      timeout: timeoutMs,
    });
    return {
      name: agentNameWithThinking(ref, options.thinking),
      next: (input: AgentTurnInput): Promise<AgentReply> =>
        recordedCall(ref, options.tracker, async () => {
          const { signal, timedOut, done } = callSignal(timeoutMs);
          try {
            const completion = await client.chat.completions.create(
              {
                model: parsed.model,
                messages: toOpenAiMessages(input.systemPrompt, input.messages),
                tools: input.tools as OpenAI.Chat.Completions.ChatCompletionTool[],
                ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
                ...(options.seed !== undefined ? { seed: options.seed } : {}),
                ...openAiThinkingFields(options.thinking),
                stream: false,
              } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming,
              { signal },
            );
            const message = completion.choices[0]?.message;
            if (!message) throw new LlmError('invalid_output', `${ref}: the server returned no choices`);
            return {
              value: {
                content: message.content ?? '',
                ...reasoningField(message),
                toolCalls: (message.tool_calls ?? []).map((c) =>
                  c.type === 'function' ? { id: c.id, name: c.function.name, arguments: c.function.arguments } : { id: c.id, name: `(unsupported tool call type ${c.type})`, arguments: '' },
                ),
              },
              usage: { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 },
            };
          } catch (error) {
            throw classifyCallError(error, `${ref}`, timedOut());
          } finally {
            // the call's time limit ends with it
            done();
          }
        }),
    };
  }
  if (parsed.provider === 'ollama') {
    const host = resolveOllamaHost(options.ollamaHost);
    assertAllowedEndpoint(host, options);
    const baseFetch = guardedFetch(options, options.fetch ?? keepAliveFetch);
    return {
      name: agentNameWithThinking(ref, options.thinking),
      next: (input: AgentTurnInput): Promise<AgentReply> =>
        recordedCall(ref, options.tracker, async () => {
          const { signal, timedOut, done } = callSignal(timeoutMs);
          const client = new Ollama({ host, fetch: fetchWithSignal(baseFetch, signal) });
          try {
            const response = await client.chat({
              model: parsed.model,
              messages: toOllamaMessages(input.systemPrompt, input.messages),
              tools: input.tools as never,
              ...ollamaThink(options.thinking),
              stream: false,
              options: { ...(options.temperature !== undefined ? { temperature: options.temperature } : {}), ...(options.seed !== undefined ? { seed: options.seed } : {}) },
            });
            return {
              value: {
                content: response.message.content ?? '',
                ...(response.message.thinking ? { reasoning: response.message.thinking } : {}),
                toolCalls: (response.message.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments })),
              },
              usage: { promptTokens: response.prompt_eval_count ?? 0, completionTokens: response.eval_count ?? 0, ...(response.total_duration ? { computeMs: response.total_duration / 1e6 } : {}) },
            };
          } catch (error) {
            throw classifyCallError(error, `${ref}: ${host}`, timedOut());
          } finally {
            done();
          }
        }),
    };
  }
  throw new Error(`${ref}: tool-calling agents need an ollama: or openai-compat: endpoint; gguf models run in-process without a tool-call API here`);
}
