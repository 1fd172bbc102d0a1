/**
 * Example adapter: any assistant served by an OpenAI-compatible server (/v1/chat/completions) or by Ollama
 * (/api/chat) becomes a bridge head unit, with vehicle context in its prompt, the icabench-tools/1 extension
 * (the model's own tool calling) and, with --voice, ears and a mouth through an OpenAI-compatible audio API
 * (/v1/audio/transcriptions and /v1/audio/speech, e.g. a local whisper and TTS server).
 *
 *   node --import tsx packages/bridge-sdk/examples/assistant-adapter.ts \
 *     --bench http://127.0.0.1:7311 --token "$ICABENCH_BRIDGE_TOKEN" --api ollama --base-url http://127.0.0.1:11434 --model qwen2.5:7b
 *
 * In a head-unit project, import from '@icabench/bridge-sdk' instead of '../src/index.ts'. It uses nothing but the
 * SDK and fetch(): the SDK's two dependencies are all it needs.
 */
import { parseArgs } from 'node:util';
import {
  AUDIO_SAMPLE_RATE,
  BRIDGE_TOKEN_ENV,
  connectHeadUnit,
  toolsExtension,
  VehicleContextMessageSchema,
  type BridgeClient,
  type ContextVector,
  type HeadUnitHandler,
  type HeadUnitReply,
  type OpenAiTool,
  type ToolAssistant,
  type ToolAssistantReply,
  type ToolConversationMessage,
} from '../src/index.ts';

export interface AssistantAdapterOptions {
  /** the link's story (handshake retries, drops, redials); default: printed on stderr */
  onLinkEvent?: (message: string) => void;
  /** the chat API the model server speaks */
  api: 'openai' | 'ollama';
  /** OpenAI-compatible: the base URL with /v1 (e.g. http://127.0.0.1:8080/v1); Ollama: the host (http://127.0.0.1:11434) */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** speech in and out through an OpenAI-compatible audio API at this base URL (with /v1) */
  voice?: { baseUrl: string; transcriptionModel: string; speechModel: string; voice: string };
  /** answer icabench-tools/1 tool sessions with the model's tool calling (default true) */
  tools?: boolean;
  name?: string;
  systemPrompt?: string;
  /** per model request (default 60 s) */
  requestTimeoutMs?: number;
}

type ChatMessage = { role: 'system' | 'user' | 'assistant' | 'tool'; content: string; tool_calls?: unknown[]; tool_call_id?: string; name?: string };

const DEFAULT_PROMPT = 'You are the voice assistant of a car. Answer the driver briefly (one or two sentences), safely, and use the car state you are given.';

/** The context a turn happens in, as lines of the system prompt: where, when, and the car's state. */
export function describeContext(context: ContextVector | undefined): string {
  if (!context) return '';
  const lines = [`Location: ${context.location.district}, ${context.location.city}. Date ${context.date}, time ${context.time}.`];
  const v = context.vehicle;
  if (v) {
    const parts = [`speed ${v.speedKmh} km/h`, `gear ${v.gear}`];
    if (v.parkingBrake !== undefined) parts.push(`parking brake ${v.parkingBrake ? 'on' : 'off'}`);
    if (v.stateOfChargePct !== undefined) parts.push(`battery ${v.stateOfChargePct} %`);
    if (v.rangeKm !== undefined) parts.push(`remaining range ${v.rangeKm} km`);
    if (v.outsideTempC !== undefined) parts.push(`outside ${v.outsideTempC} °C`);
    if (v.hvacSetpointC !== undefined) parts.push(`climate set to ${v.hvacSetpointC} °C`);
    lines.push(`Car: ${parts.join(', ')}.`);
  }
  return lines.join('\n');
}

/** The bridge handler and tool assistant of one adapter; `connect` dials them in. */
export function createAssistantAdapter(options: AssistantAdapterOptions): { handler: HeadUnitHandler; tools: ToolAssistant | null; canFrames(): number } {
  const histories = new Map<string, ChatMessage[]>();
  let framesSeen = 0;
  const chat = (messages: ChatMessage[], tools?: OpenAiTool[]) => chatCompletion(options, messages, tools);

  const handler: HeadUnitHandler = {
    unit: { name: options.name ?? `assistant-adapter-${options.model}`, version: '0.1.0' },
    // vehicle context: the model reads the car's state from each turn's context.vehicle (decoding the CAN frames of
    // vehicle_context needs the DBC; this adapter validates and counts them)
    capabilities: { text: true, audio: options.voice !== undefined, vehicleContext: true, structuredActions: false },
    startSession(sessionId) {
      histories.set(sessionId, []);
    },
    async handleTurn(sessionId, _turn, text, context, spoken): Promise<HeadUnitReply> {
      const history = histories.get(sessionId) ?? [];
      histories.set(sessionId, history);
      let heard = text;
      if (spoken && options.voice) heard = await transcribe(options.voice, spoken.audio.pcm, options.apiKey);
      history.push({ role: 'user', content: heard });
      const system = [options.systemPrompt ?? DEFAULT_PROMPT, describeContext(context)].filter(Boolean).join('\n');
      const answer = await chat([{ role: 'system', content: system }, ...history]);
      history.push({ role: 'assistant', content: answer.content });
      const reply: HeadUnitReply = { text: answer.content, actions: [] };
      if (!spoken || !options.voice) return reply;
      return { ...reply, recognizedText: heard, speech: answer.content.trim() ? await synthesize(options.voice, answer.content, options.apiKey) : undefined };
    },
    endSession(sessionId) {
      histories.delete(sessionId);
    },
    handleVehicleContext(_sessionId, payload) {
      const parsed = VehicleContextMessageSchema.safeParse(payload);
      if (parsed.success) framesSeen += parsed.data.frames.length;
    },
  };

  const tools: ToolAssistant | null =
    options.tools === false
      ? null
      : {
          async next({ systemPrompt, tools: offered, messages }) {
            return chat([{ role: 'system', content: systemPrompt }, ...messages.map((m) => toChatMessage(options.api, m))], offered);
          },
        };
  return { handler, tools, canFrames: () => framesSeen };
}

/** Dials the adapter in to a bench (redialling whenever the link ends). */
export function connectAssistantAdapter(bench: { url: string; token: string }, options: AssistantAdapterOptions): Promise<BridgeClient> {
  const adapter = createAssistantAdapter(options);
  return connectHeadUnit({
    url: bench.url,
    token: bench.token,
    handler: adapter.handler,
    reconnect: true,
    onLinkEvent: options.onLinkEvent ?? ((message) => console.error(`assistant adapter: ${message}`)),
    ...(adapter.tools ? { extensions: toolsExtension(() => adapter.tools!) } : {}),
  });
}

function toChatMessage(api: AssistantAdapterOptions['api'], m: ToolConversationMessage): ChatMessage {
  if (m.role === 'user') return { role: 'user', content: m.content };
  if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.toolCallId, name: m.name };
  const calls = m.toolCalls.map((c) =>
    api === 'openai'
      ? { id: c.id, type: 'function', function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) } }
      : { function: { name: c.name, arguments: c.arguments } },
  );
  return { role: 'assistant', content: m.content, ...(calls.length ? { tool_calls: calls } : {}) };
}

async function post(url: string, body: BodyInit, headers: Record<string, string>, timeoutMs: number): Promise<Response> {
  const response = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${(await response.text()).slice(0, 300)}`);
  return response;
}

const authHeaders = (apiKey?: string): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {});

/** One chat request (not streamed); tool calls come back with their arguments as the API carries them. */
async function chatCompletion(options: AssistantAdapterOptions, messages: ChatMessage[], tools?: OpenAiTool[]): Promise<ToolAssistantReply> {
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  const base = options.baseUrl.replace(/\/$/, '');
  const headers = { 'content-type': 'application/json', ...authHeaders(options.apiKey) };
  if (options.api === 'openai') {
    const response = await post(`${base}/chat/completions`, JSON.stringify({ model: options.model, messages, ...(tools?.length ? { tools } : {}), stream: false }), headers, timeoutMs);
    const data = (await response.json()) as { choices?: Array<{ message?: { content?: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> } }> };
    const message = data.choices?.[0]?.message;
    if (!message) throw new Error(`${base}/chat/completions: the answer has no choices[0].message`);
    return { content: message.content ?? '', toolCalls: (message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) };
  }
  const response = await post(`${base}/api/chat`, JSON.stringify({ model: options.model, messages, ...(tools?.length ? { tools } : {}), stream: false }), headers, timeoutMs);
  const data = (await response.json()) as { message?: { content?: string; tool_calls?: Array<{ function: { name: string; arguments: unknown } }> } };
  if (!data.message) throw new Error(`${base}/api/chat: the answer has no message`);
  return { content: data.message.content ?? '', toolCalls: (data.message.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments })) };
}

/** The driver's audio as text: POST /audio/transcriptions with a WAV file (multipart, as the OpenAI API takes it). */
async function transcribe(voice: NonNullable<AssistantAdapterOptions['voice']>, pcm: Uint8Array, apiKey?: string): Promise<string> {
  const form = new FormData();
  form.append('model', voice.transcriptionModel);
  form.append('file', new Blob([new Uint8Array(wavFile(pcm, AUDIO_SAMPLE_RATE))], { type: 'audio/wav' }), 'driver.wav');
  const response = await post(`${voice.baseUrl.replace(/\/$/, '')}/audio/transcriptions`, form, authHeaders(apiKey), 60_000);
  const data = (await response.json()) as { text?: string };
  if (typeof data.text !== 'string') throw new Error('audio/transcriptions: the answer has no text');
  return data.text;
}

/** The reply as speech: POST /audio/speech for a WAV, read as 16 kHz mono s16le PCM (resampled when needed). */
async function synthesize(voice: NonNullable<AssistantAdapterOptions['voice']>, text: string, apiKey?: string): Promise<Uint8Array> {
  const response = await post(
    `${voice.baseUrl.replace(/\/$/, '')}/audio/speech`,
    JSON.stringify({ model: voice.speechModel, voice: voice.voice, input: text, response_format: 'wav' }),
    { 'content-type': 'application/json', ...authHeaders(apiKey) },
    60_000,
  );
  return pcm16kFromWav(new Uint8Array(await response.arrayBuffer()));
}

/** A 16-bit mono WAV file around PCM bytes. */
export function wavFile(pcm: Uint8Array, sampleRate: number): Uint8Array {
  const out = new Uint8Array(44 + pcm.length);
  const view = new DataView(out.buffer);
  const ascii = (offset: number, text: string) => [...text].forEach((c, i) => view.setUint8(offset + i, c.charCodeAt(0)));
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + pcm.length, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, pcm.length, true);
  out.set(pcm, 44);
  return out;
}

/** 16-bit PCM WAV (mono or the first channel) → 16 kHz mono s16le, linearly resampled when the rate differs. */
export function pcm16kFromWav(wav: Uint8Array): Uint8Array {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const tag = (offset: number) => String.fromCharCode(...wav.subarray(offset, offset + 4));
  if (wav.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('audio/speech: the answer is not a WAV file');
  let channels = 1;
  let rate = AUDIO_SAMPLE_RATE;
  let bits = 16;
  for (let offset = 12; offset + 8 <= wav.length; ) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    if (id === 'fmt ') {
      channels = view.getUint16(offset + 10, true);
      rate = view.getUint32(offset + 12, true);
      bits = view.getUint16(offset + 22, true);
    } else if (id === 'data') {
      if (bits !== 16) throw new Error(`audio/speech: ${bits}-bit WAV; expected 16-bit PCM`);
      const frames = Math.floor(Math.min(size, wav.length - offset - 8) / (2 * channels));
      const input = new Int16Array(frames);
      for (let i = 0; i < frames; i++) input[i] = view.getInt16(offset + 8 + i * 2 * channels, true);
      const outFrames = Math.floor((frames * AUDIO_SAMPLE_RATE) / rate);
      const output = new Int16Array(outFrames);
      for (let i = 0; i < outFrames; i++) {
        const x = (i * rate) / AUDIO_SAMPLE_RATE;
        const a = Math.floor(x);
        const b = Math.min(frames - 1, a + 1);
        output[i] = Math.round(input[a] + (input[b] - input[a]) * (x - a));
      }
      return new Uint8Array(output.buffer);
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('audio/speech: the WAV file has no data chunk');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      bench: { type: 'string', default: 'http://127.0.0.1:7311' },
      token: { type: 'string' },
      api: { type: 'string', default: 'openai' },
      'base-url': { type: 'string' },
      model: { type: 'string' },
      'api-key': { type: 'string' },
      name: { type: 'string' },
      voice: { type: 'boolean', default: false },
      'audio-base-url': { type: 'string' },
      'transcription-model': { type: 'string', default: 'whisper-1' },
      'speech-model': { type: 'string', default: 'tts-1' },
      'speech-voice': { type: 'string', default: 'alloy' },
      'no-tools': { type: 'boolean', default: false },
    },
  });
  const token = values.token ?? process.env[BRIDGE_TOKEN_ENV];
  if (!token) throw new Error(`--token or $${BRIDGE_TOKEN_ENV} is required`);
  if (values.api !== 'openai' && values.api !== 'ollama') throw new Error(`--api: expected openai or ollama, got "${values.api}"`);
  if (!values.model) throw new Error('--model is required (the model name the server knows)');
  const baseUrl = values['base-url'] ?? (values.api === 'ollama' ? 'http://127.0.0.1:11434' : undefined);
  if (!baseUrl) throw new Error('--base-url is required for --api openai (the server URL with /v1)');
  const audioBase = values['audio-base-url'] ?? (values.api === 'openai' ? baseUrl : undefined);
  if (values.voice && !audioBase) throw new Error('--voice with --api ollama needs --audio-base-url: an OpenAI-compatible audio API (Ollama has none)');
  const client = await connectAssistantAdapter(
    { url: values.bench!, token },
    {
      api: values.api,
      baseUrl,
      model: values.model,
      apiKey: values['api-key'],
      name: values.name,
      tools: !values['no-tools'],
      voice: values.voice ? { baseUrl: audioBase!, transcriptionModel: values['transcription-model']!, speechModel: values['speech-model']!, voice: values['speech-voice']! } : undefined,
    },
  );
  console.log(`assistant adapter (${values.api} ${values.model}) dialled in to ${values.bench}; Ctrl+C to stop`);
  process.once('SIGINT', () => void client.close().then(() => process.exit(0)));
}

if (import.meta.filename === process.argv[1]) {
  main().catch((error: Error) => {
    console.error(`assistant adapter: ${error.message}`);
    process.exit(1);
  });
}
