import { z } from 'zod';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** JSON schema the output must follow (derived from a zod schema with z.toJSONSchema) */
  jsonSchema?: Record<string, unknown>;
  schemaName?: string;
  temperature?: number;
  seed?: number;
  maxTokens?: number;
  signal?: AbortSignal;
  /** repeat index of the conversation (pass^k); part of the request-cache key so repeats stay independent */
  repeat?: number;
  /** the conversation the call serves: the key of the host's prompt cache for it (llm.cacheHints, ./session-slots.ts) */
  session?: string;
  /** the host slot the session holds (llama.cpp `id_slot`), set by SessionSlots */
  slot?: number;
}

export interface ChatResponse {
  text: string;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  /** the server stopped at the token limit (the text is likely cut off) */
  truncated?: boolean;
  /** server-reported compute time in ms (Ollama total_duration, local gguf evaluation); used for GPU-seconds */
  computeMs?: number;
  /** answered from the development request cache, no model call made */
  cached?: boolean;
}

export const LlmErrorKindSchema = z.enum(['invalid_output', 'timeout', 'refused_endpoint', 'server_error']);
export type LlmErrorKind = z.infer<typeof LlmErrorKindSchema>;

/** A failure of a model call, classified for the report's error counts. */
export class LlmError extends Error {
  constructor(readonly kind: LlmErrorKind, message: string) {
    super(`${kind}: ${message}`);
    this.name = 'LlmError';
  }
}

/** Every model provider (ollama, openai-compat, gguf) has this shape. */
export interface LlmProvider {
  /** the model reference it was built from, e.g. "ollama:qwen2.5:14b" */
  readonly ref: string;
  readonly kind: 'ollama' | 'openai-compat' | 'gguf';
  chat(request: ChatRequest): Promise<ChatResponse>;
  close(): Promise<void>;
}

/** Result of a structured call: a validated value, or a recorded error (never a silent pass or fail). */
export type StructuredResult<T> =
  | { ok: true; value: T; calls: number; retries: number }
  | { ok: false; error: LlmError; calls: number; retries: number };

export type ZodSchema<T> = z.ZodType<T>;
