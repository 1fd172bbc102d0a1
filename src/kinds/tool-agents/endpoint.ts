import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { assertAllowedEndpoint, guardedFetch, type EndpointPolicy } from '../../llm/endpointPolicy.ts';
import { parseModelRef } from '../../llm/modelRef.ts';
import { resolveOllamaHost } from '../../llm/providers/ollama.ts';
import { callSignal, classifyCallError, DEFAULT_TIMEOUT_MS, fetchWithSignal } from '../../llm/providers/common.ts';
import type { AgentReply, AgentTurnInput, ToolAgent } from './loop.ts';
import type { TrajectoryMessage } from './trajectory.ts';

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

export function createEndpointAgent(ref: string, options: EndpointAgentOptions = {}): ToolAgent {
  const parsed = parseModelRef(ref);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (parsed.provider === 'openai-compat') {
    assertAllowedEndpoint(parsed.baseUrl, options);
    const client = new OpenAI({
      baseURL: parsed.baseUrl,
      apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'not-needed-for-local-servers',
      fetch: guardedFetch(options, options.fetch),
      maxRetries: 0,
      timeout: timeoutMs,
    });
    return {
      name: ref,
      async next(input: AgentTurnInput): Promise<AgentReply> {
        const { signal, timedOut } = callSignal(timeoutMs);
        try {
          const completion = await client.chat.completions.create(
            {
              model: parsed.model,
              messages: toOpenAiMessages(input.systemPrompt, input.messages),
              tools: input.tools as OpenAI.Chat.Completions.ChatCompletionTool[],
              ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
              ...(options.seed !== undefined ? { seed: options.seed } : {}),
              stream: false,
            },
            { signal },
          );
          const message = completion.choices[0]?.message;
          if (!message) throw new Error(`${ref}: the server returned no choices`);
          return {
            content: message.content ?? '',
            toolCalls: (message.tool_calls ?? []).map((c) =>
              c.type === 'function' ? { id: c.id, name: c.function.name, arguments: c.function.arguments } : { id: c.id, name: `(unsupported tool call type ${c.type})`, arguments: '' },
            ),
          };
        } catch (error) {
          throw classifyCallError(error, `${ref}`, timedOut());
        }
      },
    };
  }
  if (parsed.provider === 'ollama') {
    const host = resolveOllamaHost(options.ollamaHost);
    assertAllowedEndpoint(host, options);
    const baseFetch = guardedFetch(options, options.fetch);
    return {
      name: ref,
      async next(input: AgentTurnInput): Promise<AgentReply> {
        const { signal, timedOut } = callSignal(timeoutMs);
        const client = new Ollama({ host, fetch: fetchWithSignal(baseFetch, signal) });
        try {
          const response = await client.chat({
            model: parsed.model,
            messages: toOllamaMessages(input.systemPrompt, input.messages),
            tools: input.tools as never,
            stream: false,
            options: { ...(options.temperature !== undefined ? { temperature: options.temperature } : {}), ...(options.seed !== undefined ? { seed: options.seed } : {}) },
          });
          return {
            content: response.message.content ?? '',
            toolCalls: (response.message.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments })),
          };
        } catch (error) {
          throw classifyCallError(error, `${ref}: ${host}`, timedOut());
        }
      },
    };
  }
  throw new Error(`${ref}: tool-calling agents need an ollama: or openai-compat: endpoint; gguf models run in-process without a tool-call API here`);
}
