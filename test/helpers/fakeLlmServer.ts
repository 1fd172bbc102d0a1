import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatPromptText, ModelHost, type HostCharge, type ModelHostCost } from './modelHost.ts';
import { requestedSchema, write } from './schemaAnswer.ts';

/**
 * A local stand-in for Ollama and OpenAI-compatible servers, speaking their real HTTP APIs
 * (Ollama: /api/chat with NDJSON streaming, /api/tags, /api/version; OpenAI: /v1/chat/completions
 * with SSE streaming, /v1/models) with scripted answers, so the official client libraries can be
 * tested without a model. It records every request as received.
 */
export interface FakeReply {
  /** assistant text (or, for an OpenAI request with tools, the tool call's arguments) */
  content?: string;
  /** answer with this HTTP status and an error body instead */
  status?: number;
  error?: string;
  /** extra delay before answering, on top of the server's latencyMs */
  delayMs?: number;
  /** "length": the model hit the token limit */
  finishReason?: 'stop' | 'length';
  promptTokens?: number;
  completionTokens?: number;
  /** streaming only: send part of the stream and then drop the connection */
  cutStream?: boolean;
  /**
   * agent-endpoint mode (non-streaming only): answer with these tool calls, or with plain `content` when empty, even
   * when the request offers tools; arguments as the API carries them (OpenAI: JSON text, Ollama: object)
   */
  toolCalls?: Array<{ name: string; arguments: unknown }>;
  /** agent-endpoint mode: the model's reasoning, as OpenAI-compatible servers (`reasoning_content`) and Ollama (`thinking`) return it */
  reasoning?: string;
}

export interface RecordedRequest {
  api: 'ollama' | 'openai';
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** the request body's size in bytes as received */
  bytes: number;
  /** host mode: what the call cost on the modelled host */
  charge?: HostCharge;
}

export interface FakeLlmServerOptions {
  /** consumed in order, one per chat request; when empty, `respond` answers */
  replies?: Array<FakeReply | string>;
  respond?: (request: RecordedRequest) => FakeReply | string | Promise<FakeReply | string>;
  /** delay before every chat answer, counted from the moment the whole request has been received; never shorter */
  latencyMs?: number;
  models?: string[];
  version?: string;
  /** OpenAI audio API: what POST /v1/audio/transcriptions answers (the multipart body is recorded as text) */
  transcription?: string;
  /** OpenAI audio API: the WAV file POST /v1/audio/speech answers with */
  speechWav?: Uint8Array;
  /**
   * Host mode: every chat call runs on a modelled local model host (modelHost.ts): it waits for a slot and holds it
   * for the call's prefill and decode time, instead of `latencyMs`. Token counts in the answers are the model's.
   * `timeScale` multiplies every modelled time (a faster trial run; 1 = real time); `prefixReuse: false` is the
   * same host without a prompt-prefix cache.
   */
  host?: ModelHostCost & { timeScale?: number; prefixReuse?: boolean };
}

export interface FakeLlmServer {
  /** base URL, e.g. http://127.0.0.1:43123 (Ollama host; OpenAI base is `${url}/v1`) */
  url: string;
  requests: RecordedRequest[];
  /** chat requests only */
  chatRequests(): RecordedRequest[];
  /** most chat requests being served at the same time */
  readonly peakConcurrent: number;
  /** TCP connections accepted so far (clients that keep connections alive open few) */
  readonly connections: number;
  /** host mode: the modelled host */
  readonly host: ModelHost | undefined;
  /** chat answers written, and their delay from the request received to the answer written (ms) */
  answerDelays(): { answers: number; meanMs: number; minMs: number; maxMs: number };
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Resolves at `deadline` (a performance.now() time), never before. Node timers have millisecond
 * granularity and count from the event loop's cached clock, which lags the real one, so a timer often
 * fires a fraction of a millisecond early; sleeping another whole millisecond would then answer up to
 * 1 ms late. A remainder under a millisecond is instead waited out one event-loop turn at a time
 * (other requests are still served meanwhile).
 */
async function sleepUntil(deadline: number): Promise<void> {
  for (let left = deadline - performance.now(); left > 0; left = deadline - performance.now()) {
    if (left >= 1) await sleep(Math.ceil(left));
    else await immediate();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

export async function startFakeLlmServer(options: FakeLlmServerOptions = {}): Promise<FakeLlmServer> {
  const queue = [...(options.replies ?? [])];
  const host = options.host ? new ModelHost(options.host, options.host.prefixReuse ?? true) : undefined;
  const requests: RecordedRequest[] = [];
  const models = options.models ?? ['qwen2.5:14b'];
  let active = 0;
  let peak = 0;
  const delays = { answers: 0, sumMs: 0, minMs: Infinity, maxMs: 0 };
  const answered = (receivedAt: number) => {
    const ms = performance.now() - receivedAt;
    delays.answers++;
    delays.sumMs += ms;
    delays.minMs = Math.min(delays.minMs, ms);
    delays.maxMs = Math.max(delays.maxMs, ms);
  };

  async function nextReply(request: RecordedRequest): Promise<FakeReply> {
    const scripted = queue.length ? queue.shift()! : options.respond ? await options.respond(request) : { status: 500, error: 'fake server: no scripted reply left' };
    return typeof scripted === 'string' ? { content: scripted } : scripted;
  }

  const server = createServer(async (req, res) => {
    const rawBody = await readBody(req);
    // the model's time starts once the whole request is in, as a real server can only start then
    const receivedAt = performance.now();
    const path = (req.url ?? '/').split('?')[0];
    const api: RecordedRequest['api'] = path.startsWith('/v1') ? 'openai' : 'ollama';
    let body: any = null;
    if (rawBody) {
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = rawBody;
      }
    }
    const recorded: RecordedRequest = { api, method: req.method ?? 'GET', path, headers: req.headers, body, bytes: Buffer.byteLength(rawBody) };
    requests.push(recorded);
    try {
      if (req.method === 'GET' && path === '/api/version') return json(res, 200, { version: options.version ?? '0.12.6' });
      if (req.method === 'GET' && path === '/api/tags') {
        return json(res, 200, {
          models: models.map((name) => ({
            name,
            model: name,
            modified_at: '2026-01-01T00:00:00Z',
            size: 1000,
            digest: 'sha256:0',
            details: { format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '1B', quantization_level: 'Q4_0' },
          })),
        });
      }
      if (req.method === 'GET' && path === '/v1/models') {
        return json(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })) });
      }
      if (req.method === 'POST' && path === '/v1/audio/transcriptions' && options.transcription !== undefined) return json(res, 200, { text: options.transcription });
      if (req.method === 'POST' && path === '/v1/audio/speech' && options.speechWav) {
        res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': options.speechWav.length });
        return res.end(Buffer.from(options.speechWav));
      }
      if (req.method === 'POST' && (path === '/api/chat' || path === '/v1/chat/completions')) {
        active++;
        peak = Math.max(peak, active);
        try {
          const reply = await nextReply(recorded);
          if (host && !(reply.status && reply.status >= 400)) recorded.charge = await runOnHost(host, options.host!.timeScale ?? 1, body, reply.content ?? '');
          else await sleepUntil(receivedAt + (options.latencyMs ?? 0) + (reply.delayMs ?? 0));
          if (res.destroyed) return;
          if (reply.status && reply.status >= 400) {
            const message = reply.error ?? `HTTP ${reply.status}`;
            return json(res, reply.status, api === 'ollama' ? { error: message } : { error: { message, type: 'server_error', code: null } });
          }
          if (api === 'ollama') ollamaChat(res, body, reply, recorded.charge);
          else openaiChat(res, body, reply, recorded.charge);
          return answered(receivedAt);
        } finally {
          active--;
        }
      }
      json(res, 404, api === 'ollama' ? { error: `no route ${path}` } : { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
    } catch (error) {
      if (!res.headersSent) json(res, 500, { error: String(error) });
      else res.destroy();
    }
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    chatRequests: () => requests.filter((r) => r.path === '/api/chat' || r.path === '/v1/chat/completions'),
    get peakConcurrent() {
      return peak;
    },
    get connections() {
      return connections;
    },
    host,
    answerDelays: () => ({ answers: delays.answers, meanMs: delays.answers ? delays.sumMs / delays.answers : 0, minMs: delays.answers ? delays.minMs : 0, maxMs: delays.maxMs }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * One call on the modelled host: wait for a slot (llama.cpp's `id_slot` names one), hold it for the modelled time;
 * `cache_prompt: false` computes the whole prompt, as llama-server does.
 * Ollama's API has no slot field: its runner picks the slot by prefix, as the host does without one.
 */
async function runOnHost(host: ModelHost, timeScale: number, body: any, completion: string): Promise<HostCharge> {
  const prompt = chatPromptText(body?.messages ?? []);
  const model = String(body?.model ?? '');
  const slot = await host.acquire(prompt, typeof body?.id_slot === 'number' ? body.id_slot : undefined, model);
  try {
    const charge = host.charge(slot, prompt, completion, model, body?.cache_prompt !== false);
    await sleepUntil(performance.now() + charge.modelMs * timeScale);
    return charge;
  } finally {
    host.release(slot);
  }
}

function json(res: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Splits text into up to three pieces, as a model streams tokens. */
function pieces(text: string): string[] {
  if (text.length < 3) return [text];
  const a = Math.floor(text.length / 3);
  return [text.slice(0, a), text.slice(a, 2 * a), text.slice(2 * a)];
}

function usage(body: any, reply: FakeReply, content: string, charge?: HostCharge) {
  const prompt = reply.promptTokens ?? charge?.promptTokens ?? Math.ceil(JSON.stringify(body?.messages ?? []).length / 4);
  const completion = reply.completionTokens ?? charge?.completionTokens ?? Math.ceil(content.length / 4);
  return { prompt, completion };
}

/** Ollama's durations (ns): the modelled ones in host mode, else fixed figures. */
function ollamaDurations(charge?: HostCharge) {
  if (!charge) return { total_duration: 42_000_000, load_duration: 1_000_000, prompt_eval_duration: 10_000_000, eval_duration: 30_000_000 };
  const ns = (ms: number) => Math.round(ms * 1e6);
  return { total_duration: ns(charge.modelMs), load_duration: 0, prompt_eval_duration: ns(charge.prefillMs), eval_duration: ns(charge.modelMs - charge.prefillMs) };
}

function ollamaChat(res: ServerResponse, body: any, reply: FakeReply, charge?: HostCharge): void {
  const content = reply.content ?? '';
  if (reply.toolCalls && body?.stream !== false) throw new Error('fake server: scripted tool calls need stream: false');
  const { prompt, completion } = usage(body, reply, content, charge);
  const base = { model: body?.model, created_at: new Date(0).toISOString() };
  const final = {
    ...base,
    message: { role: 'assistant', content: '' },
    done: true,
    done_reason: reply.finishReason ?? 'stop',
    ...ollamaDurations(charge),
    prompt_eval_count: prompt,
    eval_count: completion,
  };
  // Ollama streams unless the request says stream: false
  if (body?.stream === false) {
    const toolCalls = reply.toolCalls?.length ? reply.toolCalls.map((c) => ({ function: { name: c.name, arguments: typeof c.arguments === 'string' ? JSON.parse(c.arguments) : c.arguments } })) : undefined;
    return json(res, 200, { ...final, message: { role: 'assistant', content, ...(reply.reasoning ? { thinking: reply.reasoning } : {}), ...(toolCalls ? { tool_calls: toolCalls } : {}) } });
  }
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const parts = pieces(content);
  for (const [i, part] of parts.entries()) {
    res.write(`${JSON.stringify({ ...base, message: { role: 'assistant', content: part }, done: false })}\n`);
    if (reply.cutStream && i === 0) {
      res.socket?.destroy();
      return;
    }
  }
  res.end(`${JSON.stringify(final)}\n`);
}

function openaiChat(res: ServerResponse, body: any, reply: FakeReply, charge?: HostCharge): void {
  const content = reply.content ?? '';
  const { prompt, completion } = usage(body, reply, content, charge);
  const tool = body?.tools?.[0]?.function?.name as string | undefined;
  const finish = reply.finishReason ?? (tool ? 'tool_calls' : 'stop');
  const base = { id: 'chatcmpl-fake', created: 0, model: body?.model };
  const usageBlock = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...(charge ? { prompt_tokens_details: { cached_tokens: charge.cachedTokens } } : {}) };
  if (reply.toolCalls) {
    if (body?.stream) throw new Error('fake server: scripted tool calls need a non-streaming request');
    const tool_calls = reply.toolCalls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) } }));
    const reasoning = reply.reasoning ? { reasoning_content: reply.reasoning } : {};
    const message = tool_calls.length ? { role: 'assistant', content: content || null, ...reasoning, tool_calls } : { role: 'assistant', content, ...reasoning };
    return json(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: tool_calls.length ? 'tool_calls' : 'stop', logprobs: null }], usage: usageBlock });
  }
  if (!body?.stream) {
    const message = tool
      ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: tool, arguments: content } }] }
      : { role: 'assistant', content };
    return json(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage: usageBlock });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
  const parts = pieces(content);
  for (const [i, part] of parts.entries()) {
    const delta = tool
      ? { ...(i === 0 ? { role: 'assistant' } : {}), tool_calls: [{ index: 0, ...(i === 0 ? { id: 'call_0', type: 'function' } : {}), function: { ...(i === 0 ? { name: tool } : {}), arguments: part } }] }
      : { ...(i === 0 ? { role: 'assistant' } : {}), content: part };
    send({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] });
    if (reply.cutStream && i === 0) {
      res.socket?.destroy();
      return;
    }
  }
  send({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  if (body?.stream_options?.include_usage) send({ ...base, object: 'chat.completion.chunk', choices: [], usage: usageBlock });
  res.end('data: [DONE]\n\n');
}

/** The system prompt of a recorded chat request (Ollama and OpenAI bodies both carry `messages`). */
export function systemPromptOf(request: RecordedRequest): string {
  return (request.body?.messages ?? []).find((m: { role: string }) => m.role === 'system')?.content ?? '';
}

/**
 * A stand-in "model" for the bench's own prompts: it recognises the step from the system prompt
 * (ExtractTargets, GenerateUtterance, SelectAndGenerate, EvaluateTurn, EvaluateConversation) and
 * answers with valid JSON for it. It does not understand anything; it only lets the full loop run.
 */
/** The bench steps a prompt names (in its system message, or in its closing request where the roles share the system message). */
export const BENCH_STEPS = ['ExtractTargets', 'GenerateUtterance', 'SelectAndGenerate', 'EvaluateTurn', 'EvaluateConversation'] as const;

/** The bench step a chat request serves: the first step named in its system message, else in its last message. */
export function stepOf(request: RecordedRequest): (typeof BENCH_STEPS)[number] | undefined {
  const messages: Array<{ role: string; content: string }> = request.body?.messages ?? [];
  for (const text of [systemPromptOf(request), messages.at(-1)?.content ?? '']) {
    const found = BENCH_STEPS.find((step) => text.includes(step));
    if (found) return found;
  }
  return undefined;
}

/**
 * What the stand-in model means at each bench step, in every vocabulary the bench's prompt versions use (the walker
 * in schemaAnswer.ts writes only the fields the request's schema asks for): the same decisions whatever the schema.
 */
function benchMeaning(step: (typeof BENCH_STEPS)[number] | undefined, dimensionScore: 0 | 1 | 2): Record<string, unknown> | undefined {
  const italian = { intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'italian' }] };
  switch (step) {
    case 'ExtractTargets':
      return { targets: [{ ...italian, request: italian }] };
    case 'GenerateUtterance':
      return { text: 'Find me an Italian restaurant nearby.', addresses: ['g1'], annotation: { addresses: ['g1'] } };
    case 'SelectAndGenerate':
      return { strategy: null, text: 'Thanks, that is all.', closing: true, annotation: { closing: true } };
    case 'EvaluateTurn': {
      const reasoning = 'The reply lists Italian restaurants.';
      return { labels: [], fail: [], targetUpdates: [{ targetId: 'g1', status: 1 }], done: ['g1'], reasoning, why: reasoning, confidence: 0.9 };
    }
    case 'EvaluateConversation':
      return { score: dimensionScore, reasoning: 'Requests handled.', why: 'Requests handled.', confidence: 0.9 };
    default:
      return undefined;
  }
}

/**
 * The stand-in model's answer: what it means at the step (benchMeaning), written as the request's JSON schema asks
 * (schemaAnswer.ts, as a grammar-constrained model writes it); a request without a schema gets the earlier shapes.
 */
export function benchModelResponder(options: { dimensionScore?: 0 | 1 | 2 } = {}): (request: RecordedRequest) => string {
  return (request) => {
    const meaning = benchMeaning(stepOf(request), options.dimensionScore ?? 2);
    if (!meaning) return 'I do not know this prompt.';
    const schema = requestedSchema(request.body);
    if (schema) return JSON.stringify(write(schema, meaning));
    const { fail: _f, done: _d, why: _w, addresses: _a, closing: _c, ...earlier } = meaning;
    if (stepOf(request) === 'ExtractTargets') return JSON.stringify({ targets: [{ request: (meaning.targets as Array<{ request: unknown }>)[0].request }] });
    return JSON.stringify(earlier);
  };
}
