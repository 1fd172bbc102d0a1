import { z } from 'zod';
import { describeZodError } from '../domain/validation.ts';
import { parseNearJson } from './nearJson.ts';
import { LlmError, type ChatMessage, type ChatRequest, type LlmProvider, type StructuredResult } from './types.ts';
import type { LlmCallKind, LlmUsageTracker } from './usage.ts';

export const DEFAULT_MAX_RETRIES = 2;

export interface StructuredOptions {
  /** retries after the first attempt; invalid output is fed back to the model with the validation error */
  maxRetries?: number;
  tracker?: LlmUsageTracker;
  kind: LlmCallKind;
  /** name sent with the schema (OpenAI response_format name, tool name) */
  schemaName?: string;
  /** the conversation this call serves (ConversationSpec.key), recorded for per-conversation figures */
  conversationKey?: string;
  /** JSON schema sent to the server; default: z.toJSONSchema of `schema` (input side, so defaults are optional) */
  jsonSchema?: Record<string, unknown>;
}

/**
 * The JSON schema the server is asked to follow for a zod schema. Refinements are not representable; they are checked
 * after parsing. A schema registered with `sendsAs` is asked for as its wire shape.
 */
export function jsonSchemaFor(schema: z.ZodType): Record<string, unknown> {
  const cached = jsonSchemaCache.get(schema);
  if (cached) return cached;
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  jsonSchemaCache.set(schema, rest);
  return rest;
}

/**
 * `accepting` is asked for as `wire`: the model is given the wire shape (the grammar it is held to), and its answer
 * is read with `accepting`, which may also take the shapes of earlier prompt versions and turn them into one value.
 */
export function sendsAs<S extends z.ZodType>(accepting: S, wire: z.ZodType): S {
  jsonSchemaCache.set(accepting, jsonSchemaFor(wire));
  return accepting;
}

/**
 * Reads an answer with `current`, or with `earlier` when `isEarlier` says it has the shape of an earlier prompt version
 * (a stored or cached answer); a bad answer's errors are those of the shape it was read as, naming its fields.
 */
export function eitherShape<T>(isEarlier: (value: unknown) => boolean, earlier: z.ZodType, current: z.ZodType): z.ZodType<T> {
  return z.unknown().transform((value, ctx) => {
    const result = (isEarlier(value) ? earlier : current).safeParse(value);
    if (result.success) return result.data as T;
    for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  }) as unknown as z.ZodType<T>;
}

/** Whether a value is an object with this key (an answer's shape, told by a field only that shape has). */
export const hasKey = (key: string) => (value: unknown) => typeof value === 'object' && value !== null && key in value;

// conversion costs about a millisecond for the utterance schema; the same schema object is asked for on every turn
const jsonSchemaCache = new WeakMap<z.ZodType, Record<string, unknown>>();

const RETRYABLE = new Set(['invalid_output', 'timeout', 'server_error']);
const ECHO_LIMIT = 2000;

/**
 * One structured model call: ask with the JSON schema, read the answer tolerantly, validate it
 * with the zod schema, and on failure retry (bounded) with the error fed back. After the last
 * retry the result is an error outcome, never a guess.
 */
export async function generateStructured<S extends z.ZodType>(
  provider: LlmProvider,
  request: Omit<ChatRequest, 'jsonSchema' | 'schemaName'>,
  schema: S,
  options: StructuredOptions,
): Promise<StructuredResult<z.output<S>>> {
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const jsonSchema = options.jsonSchema ?? jsonSchemaFor(schema);
  const messages: ChatMessage[] = [...request.messages];
  // built only when an attempt fails (an Error captures a stack trace, and most calls succeed first time)
  let lastError: LlmError | undefined;
  let calls = 0;
  const conversation = options.conversationKey !== undefined ? { conversationKey: options.conversationKey } : {};
  for (let attempt = 0; attempt <= maxRetries; attempt++) {
    calls++;
    let response;
    try {
      response = await provider.chat({ ...request, messages, jsonSchema, schemaName: options.schemaName, ...(options.conversationKey !== undefined ? { session: options.conversationKey } : {}) });
    } catch (error) {
      if (request.signal?.aborted && !(error instanceof LlmError)) throw error;
      lastError = error instanceof LlmError ? error : new LlmError('server_error', `${provider.ref}: ${(error as Error).message}`);
      options.tracker?.record({ ref: provider.ref, kind: options.kind, promptTokens: 0, completionTokens: 0, latencyMs: 0, retries: attempt, error: lastError.kind, ...conversation });
      if (!RETRYABLE.has(lastError.kind)) break;
      continue;
    }
    const problem = validate(response.text, schema);
    const callRecord = {
      ...conversation,
      ref: provider.ref,
      kind: options.kind,
      promptTokens: response.promptTokens,
      completionTokens: response.completionTokens,
      latencyMs: response.latencyMs,
      retries: attempt,
      ...(response.computeMs !== undefined ? { computeMs: response.computeMs } : {}),
      ...(response.cached ? { cached: true } : {}),
    };
    if (problem.ok) {
      options.tracker?.record({ ...callRecord, error: null });
      return { ok: true, value: problem.value, calls, retries: attempt };
    }
    const reason = response.truncated ? `the output was cut off at the token limit (${problem.error}); answer more briefly` : problem.error;
    lastError = new LlmError('invalid_output', `${provider.ref}: ${reason}`);
    options.tracker?.record({ ...callRecord, error: 'invalid_output' });
    messages.push(
      { role: 'assistant', content: response.text.slice(0, ECHO_LIMIT) },
      {
        role: 'user',
        content: `Your previous answer could not be used: ${reason}. Reply again with only one JSON object that follows the required schema, no other text.`,
      },
    );
  }
  lastError ??= new LlmError('server_error', `${provider.ref}: no attempt made`);
  return { ok: false, error: new LlmError(lastError.kind, `${lastError.message.replace(/^\w+: /, '')} (after ${calls} call${calls === 1 ? '' : 's'})`), calls, retries: calls - 1 };
}

function validate<S extends z.ZodType>(text: string, schema: S): { ok: true; value: z.output<S> } | { ok: false; error: string } {
  const parsed = parseNearJson(text);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const checked = schema.safeParse(parsed.value);
  if (!checked.success) return { ok: false, error: `the JSON does not follow the schema: ${describeZodError(checked.error)}` };
  return { ok: true, value: checked.data };
}

/**
 * `build` memoised by `keyOf` for answer schemas, which depend on a conversation's target ids: the map is emptied
 * when it passes `limit` entries, so a long campaign's distinct keys never pile up.
 */
export function memoisedSchema<A extends unknown[], S>(keyOf: (...args: A) => string, build: (...args: A) => S, limit = 1000): (...args: A) => S {
  const built = new Map<string, S>();
  return (...args: A) => {
    const key = keyOf(...args);
    let schema = built.get(key);
    if (schema === undefined) {
      if (built.size > limit) built.clear();
      schema = build(...args);
      built.set(key, schema);
    }
    return schema;
  };
}
