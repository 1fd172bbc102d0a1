import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ChatHistoryItem, Llama, LlamaModel } from 'node-llama-cpp';
import { LlmError, type ChatRequest, type ChatResponse, type LlmProvider } from '../types.ts';

export interface GgufProviderOptions {
  /** "auto" uses CUDA/Vulkan when node-llama-cpp finds a working prebuilt binding, false forces CPU */
  gpu?: 'auto' | false;
  contextSize?: number;
  /** CPU threads for evaluation (default: node-llama-cpp's choice) */
  threads?: number;
}

/**
 * The GBNF grammar builder of node-llama-cpp understands a subset of JSON schema: it has
 * oneOf but not anyOf, and no annotations. Zod's output is mapped onto that subset here;
 * anything the subset cannot express makes grammar creation fail with a clear error.
 */
export function toGrammarSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toGrammarSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === '$schema' || key === 'description' || key === 'title' || key === 'default' || key === 'pattern' || key === 'format') continue;
    if (key === 'anyOf') out.oneOf = toGrammarSchema(value);
    else if (key === 'exclusiveMinimum' || key === 'exclusiveMaximum') continue;
    else out[key] = toGrammarSchema(value);
  }
  return out;
}

interface LoadedModel {
  llama: Llama;
  model: LlamaModel;
}

/** Loaded models by file and GPU setting, shared by every provider on the same file (a 14B model is loaded once, not once for the simulator and once for the judge). */
const loadedModels = new Map<string, { loading: Promise<LoadedModel>; users: number }>();

async function loadModel(ref: string, modelPath: string, gpu: 'auto' | false): Promise<LoadedModel> {
  try {
    await access(modelPath);
  } catch {
    throw new LlmError('server_error', `${ref}: model file ${modelPath} not found (see models/default.yaml and docs/llm-tiers.md)`);
  }
  try {
    const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
    const llama = await getLlama({ gpu, build: 'never', logLevel: LlamaLogLevel.error });
    const model = await llama.loadModel({ modelPath });
    return { llama, model };
  } catch (error) {
    throw new LlmError('server_error', `${ref}: node-llama-cpp could not load ${modelPath}: ${(error as Error).message}`);
  }
}

/** In-process generation from a GGUF file with node-llama-cpp; JSON output is forced by a grammar built from the schema. */
export function createGgufProvider(ref: string, path: string, options: GgufProviderOptions = {}): LlmProvider {
  const modelPath = resolve(path);
  const key = `${modelPath}|${options.gpu ?? 'auto'}`;
  let acquired = false;

  async function load(): Promise<LoadedModel> {
    let entry = loadedModels.get(key);
    if (!entry) {
      entry = { loading: loadModel(ref, modelPath, options.gpu ?? 'auto'), users: 0 };
      loadedModels.set(key, entry);
      // a failed load is forgotten, so the next call tries again (e.g. after the file was placed)
      entry.loading.catch(() => loadedModels.delete(key));
    }
    if (!acquired) {
      entry.users++;
      acquired = true;
    }
    try {
      return await entry.loading;
    } catch (error) {
      acquired = false;
      throw error;
    }
  }

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    const { llama, model } = await load();
    const started = performance.now();
    const messages = request.messages;
    const last = messages[messages.length - 1];
    if (!last || last.role !== 'user') throw new LlmError('server_error', `${ref}: the last message must be the user's`);
    const history: ChatHistoryItem[] = messages.slice(0, -1).map((m) =>
      m.role === 'system' ? { type: 'system', text: m.content } : m.role === 'user' ? { type: 'user', text: m.content } : { type: 'model', response: [m.content] },
    );
    const { LlamaChatSession } = await import('node-llama-cpp');
    const context = await model.createContext({ contextSize: options.contextSize ?? 4096, ...(options.threads ? { threads: options.threads } : {}) });
    try {
      const sequence = context.getSequence();
      const session = new LlamaChatSession({ contextSequence: sequence });
      session.setChatHistory(history);
      let grammar;
      if (request.jsonSchema) {
        try {
          // the schema's shape is only known at run time; node-llama-cpp validates it while building the grammar
          grammar = await llama.createGrammarForJsonSchema(toGrammarSchema(request.jsonSchema) as never);
        } catch (error) {
          throw new LlmError('server_error', `${ref}: the output schema cannot be turned into a grammar: ${(error as Error).message}`);
        }
      }
      const result = await session.promptWithMeta(last.content, {
        grammar,
        maxTokens: request.maxTokens ?? 1024,
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.seed !== undefined ? { seed: request.seed } : {}),
        signal: request.signal,
      });
      const elapsed = performance.now() - started;
      return {
        text: result.responseText,
        promptTokens: sequence.tokenMeter.usedInputTokens,
        completionTokens: sequence.tokenMeter.usedOutputTokens,
        latencyMs: elapsed,
        truncated: result.stopReason === 'maxTokens',
        computeMs: elapsed,
      };
    } catch (error) {
      if (error instanceof LlmError) throw error;
      if (request.signal?.aborted) throw error;
      throw new LlmError('server_error', `${ref}: generation failed: ${(error as Error).message}`);
    } finally {
      await context.dispose();
    }
  }

  async function close(): Promise<void> {
    if (!acquired) return;
    acquired = false;
    const entry = loadedModels.get(key);
    if (!entry || --entry.users > 0) return;
    loadedModels.delete(key);
    const loaded = await entry.loading.catch(() => undefined);
    await loaded?.model.dispose();
  }

  return { ref, kind: 'gguf', chat, close };
}
