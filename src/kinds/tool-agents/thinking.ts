import { z } from 'zod';

/**
 * A model's reasoning ("thinking") mode, as CAR-bench compares thinking-enabled and non-thinking models: not the
 * `think` helper tool (a tool the agent may call, `planningAndThinking`), but the model reasoning before it answers.
 * `on` lets the server pick the effort; `low` / `medium` / `high` ask for one.
 */
export const THINKING_MODES = ['off', 'on', 'low', 'medium', 'high'] as const;
export const ThinkingModeSchema = z.enum(THINKING_MODES);
export type ThinkingMode = z.infer<typeof ThinkingModeSchema>;

/**
 * The request fields that set the mode on an OpenAI-compatible server: `reasoning_effort` (OpenAI's reasoning models,
 * and servers that follow them) for an effort, and `chat_template_kwargs.enable_thinking` (vLLM, SGLang, llama.cpp
 * with Qwen3-style templates) to switch reasoning on or off.
 */
export function openAiThinkingFields(mode: ThinkingMode | undefined): { reasoning_effort?: 'low' | 'medium' | 'high'; chat_template_kwargs?: { enable_thinking: boolean } } {
  if (mode === undefined) return {};
  if (mode === 'off') return { chat_template_kwargs: { enable_thinking: false } };
  return { reasoning_effort: mode === 'on' ? 'medium' : mode, chat_template_kwargs: { enable_thinking: true } };
}

/** Ollama's `think` request field: true / false, or an effort level (models that take one, e.g. gpt-oss). */
export function ollamaThink(mode: ThinkingMode | undefined): { think?: boolean | 'low' | 'medium' | 'high' } {
  if (mode === undefined) return {};
  return { think: mode === 'off' ? false : mode === 'on' ? true : mode };
}

/** How a run names an agent in a reasoning mode (summary.json `agent`, compare): the reference and the mode. */
export const agentNameWithThinking = (ref: string, mode: ThinkingMode | undefined): string => (mode === undefined ? ref : `${ref} (thinking: ${mode})`);
