import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { z } from 'zod';
import type { ContextVector } from '../domain/context.ts';
import { describeZodError, parseOrThrow } from '../domain/validation.ts';
import { AssistantReplySchema, type AssistantReply, type Capabilities } from '../protocol/bridge.ts';
import { checkStructure, MAX_MESSAGE_DEPTH } from '../protocol/structure.ts';
import { SutError, type HeadUnitConnection, type HeadUnitSession } from './types.ts';

const DEFAULT_SYSTEM_PROMPT =
  'You are the voice assistant of a car. The driver talks to you while driving: answer briefly and help with navigation, places, climate, media and vehicle information.';

export const HttpChatConfigSchema = z.object({
  /** OpenAI-compatible API root; the adapter POSTs to {baseUrl}/chat/completions */
  baseUrl: z.url(),
  model: z.string().min(1),
  /** sent as a bearer token; local servers usually ignore it */
  apiKey: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().default(30_000),
  /** the context vector of each turn is appended to it */
  systemPrompt: z.string().min(1).default(DEFAULT_SYSTEM_PROMPT),
});
export type HttpChatConfig = z.input<typeof HttpChatConfigSchema>;

/** The part of a chat completion the adapter relies on. */
const ChatCompletionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
});

type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string };

/** A chat completion is shallow; a reply's text is at most 20,000 characters (AssistantReplySchema). */
const COMPLETION_STRUCTURE = { maxDepth: MAX_MESSAGE_DEPTH, maxEntries: 100_000, maxStringChars: 1_000_000 };

/** The system prompt for one turn: the configured prompt plus the context vector c of that turn. */
export function systemMessage(prompt: string, context: ContextVector): string {
  return `${prompt}\n\nCurrent context (location, date, time, vehicle) as JSON: ${JSON.stringify(context)}`;
}

/** Maps what the OpenAI client throws to the SutError kinds the campaign records. */
function toSutError(error: unknown, endpoint: string): Error {
  if (error instanceof APIConnectionTimeoutError) return new SutError('timeout', `${endpoint} did not answer in time`);
  if (error instanceof APIConnectionError) return new SutError('unavailable', `${endpoint} is unreachable: ${error.message}`);
  if (error instanceof APIError) {
    const status = error.status;
    const detail = `${endpoint} answered HTTP ${status}: ${error.message}`;
    if (status === 408 || status === 504) return new SutError('timeout', detail);
    if (status === 413) return new SutError('too_large', detail);
    if (status === 429) return new SutError('rate_limited', detail);
    if (status !== undefined && status >= 500) return new SutError('unavailable', detail);
    return new SutError('rejected', detail);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Tests a text-only assistant backend through an OpenAI-compatible chat completions endpoint,
 * without the bridge. Each session keeps its own message history; replies carry text and no actions.
 */
export class HttpChatHeadUnit implements HeadUnitConnection {
  private readonly config: z.output<typeof HttpChatConfigSchema>;
  private readonly client: OpenAI;
  private readonly endpoint: string;
  private readonly sessions = new Map<string, HttpChatSession>();

  constructor(config: HttpChatConfig) {
    this.config = parseOrThrow(HttpChatConfigSchema, config, 'http-chat head unit config');
    this.endpoint = `${this.config.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.client = new OpenAI({
      baseURL: this.config.baseUrl,
      // the client insists on a key; OpenAI-compatible local servers accept any
      apiKey: this.config.apiKey ?? 'not-needed',
      timeout: this.config.timeoutMs,
      maxRetries: 0,
    });
  }

  get describe(): string {
    return `http-chat ${this.config.model} at ${this.endpoint}`;
  }

  capabilities(): Capabilities {
    return { text: true, audio: false, vehicleContext: false, structuredActions: false };
  }

  /** No request is made here: the endpoint is stateless, and each turn carries its own context. */
  async openSession(sessionId: string, _context: ContextVector): Promise<HeadUnitSession> {
    if (this.sessions.has(sessionId)) throw new Error(`session "${sessionId}" is already open on ${this.describe}`);
    const session = new HttpChatSession(
      sessionId,
      this.config.systemPrompt,
      (messages) => this.complete(messages),
      () => this.sessions.delete(sessionId),
    );
    this.sessions.set(sessionId, session);
    return session;
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.close()));
  }

  private async complete(messages: ChatMessage[]): Promise<string> {
    let response: unknown;
    try {
      response = await this.client.chat.completions.create({ model: this.config.model, messages });
    } catch (error) {
      throw toSutError(error, this.endpoint);
    }
    // the endpoint is the system under test: its JSON is checked by an iterative scan before anything walks it
    const violation = checkStructure(response, COMPLETION_STRUCTURE);
    if (violation) throw new SutError(violation.code === 'too_large' ? 'too_large' : 'malformed', `${this.endpoint} returned a completion ${violation.message}`);
    const parsed = ChatCompletionSchema.safeParse(response);
    if (!parsed.success) {
      throw new SutError('malformed', `${this.endpoint} returned an unusable chat completion: ${describeZodError(parsed.error)}`);
    }
    return parsed.data.choices[0].message.content;
  }
}

class HttpChatSession implements HeadUnitSession {
  private readonly history: ChatMessage[] = [];

  constructor(
    readonly sessionId: string,
    private readonly systemPrompt: string,
    private readonly complete: (messages: ChatMessage[]) => Promise<string>,
    private readonly onClose: () => void,
  ) {}

  async send(turn: number, text: string, context: ContextVector): Promise<AssistantReply> {
    const user: ChatMessage = { role: 'user', content: text };
    // the system message is rebuilt every turn because the context (clock, vehicle state) moves on
    const system: ChatMessage = { role: 'system', content: systemMessage(this.systemPrompt, context) };
    const content = await this.complete([system, ...this.history, user]);
    const reply = AssistantReplySchema.safeParse({ sessionId: this.sessionId, turn, text: content, actions: [] });
    if (!reply.success) throw new SutError('malformed', `chat reply for turn ${turn}: ${describeZodError(reply.error)}`);
    // history only grows with completed exchanges, so a failed turn leaves no half-exchange behind
    this.history.push(user, { role: 'assistant', content });
    return reply.data;
  }

  async close(): Promise<void> {
    this.onClose();
  }
}
