import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { assertAllowedEndpoint, guardedFetch, type EndpointPolicy } from './endpointPolicy.ts';
import { parseModelRef } from './modelRef.ts';
import { resolveOllamaHost } from './providers/ollama.ts';
import { LlmError } from './types.ts';

/**
 * Why a model cannot serve calls: a reference that does not parse is a typo (never a reason to fall
 * back); the others are the rig's state (server down, model not pulled, host not allowed, file missing).
 */
export type UnavailableReason = 'invalid_reference' | 'unreachable' | 'missing_model' | 'refused_endpoint' | 'missing_file' | 'binding';

export interface ModelAvailability {
  ref: string;
  available: boolean;
  /** what was found, in one line */
  detail: string;
  /** the command or step that closes the gap, when not available */
  fix?: string;
  /** set when not available */
  reason?: UnavailableReason;
}

export interface AvailabilityOptions extends EndpointPolicy {
  ollamaHost?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** also load the node-llama-cpp binding for gguf refs (slower; the doctor does it) */
  checkGgufRuntime?: boolean;
}

const OllamaTagsSchema = z.object({ models: z.array(z.object({ name: z.string() })) });
const OpenAiModelsSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

async function getJson(url: string, options: AvailabilityOptions): Promise<unknown> {
  const response = await guardedFetch(options, options.fetch)(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 3000) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.json();
}

function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code ?? (error as Error).message ?? String(error);
}

/**
 * Whether a model reference can serve calls right now: the server answers and has the model
 * (Ollama /api/tags, OpenAI-compatible /models), or the GGUF file exists. A run checks every model
 * it names before it starts (src/kinds/dialogue/tiers.ts); the doctor prints it with the fix.
 */
export async function checkModelAvailability(ref: string, options: AvailabilityOptions = {}): Promise<ModelAvailability> {
  let parsed;
  try {
    parsed = parseModelRef(ref);
  } catch (error) {
    return { ref, available: false, reason: 'invalid_reference', detail: (error as Error).message.split('\n')[0], fix: 'use one of: ollama:<tag>, openai-compat:<base-url>#<model>, gguf:<path>' };
  }
  try {
    if (parsed.provider === 'ollama') {
      const host = resolveOllamaHost(options.ollamaHost);
      assertAllowedEndpoint(host, options);
      let tags;
      try {
        tags = OllamaTagsSchema.parse(await getJson(`${host}/api/tags`, options));
      } catch (error) {
        if (error instanceof LlmError) throw error;
        return { ref, available: false, reason: 'unreachable', detail: `Ollama not reachable at ${host} (${reason(error)})`, fix: 'ollama serve   (or set OLLAMA_HOST to where it runs)' };
      }
      const wanted = parsed.model.includes(':') ? parsed.model : `${parsed.model}:latest`;
      const present = tags.models.some((m) => m.name === parsed.model || m.name === wanted);
      return present
        ? { ref, available: true, detail: `Ollama at ${host} has ${parsed.model}` }
        : { ref, available: false, reason: 'missing_model', detail: `Ollama at ${host} does not have ${parsed.model} (has: ${tags.models.map((m) => m.name).join(', ') || 'none'})`, fix: `ollama pull ${parsed.model}` };
    }
    if (parsed.provider === 'openai-compat') {
      assertAllowedEndpoint(parsed.baseUrl, options);
      let models;
      try {
        models = OpenAiModelsSchema.parse(await getJson(`${parsed.baseUrl.replace(/\/$/, '')}/models`, options));
      } catch (error) {
        if (error instanceof LlmError) throw error;
        return { ref, available: false, reason: 'unreachable', detail: `no OpenAI-compatible server at ${parsed.baseUrl} (${reason(error)})`, fix: `start it, e.g. llama-server -m models/<file>.gguf --port ${new URL(parsed.baseUrl).port || 8080}` };
      }
      const present = models.data.some((m) => m.id === parsed.model);
      // llama.cpp's server serves whatever it loaded under its own name; a single served model is accepted with a note
      if (present) return { ref, available: true, detail: `${parsed.baseUrl} serves ${parsed.model}` };
      if (models.data.length === 1) return { ref, available: true, detail: `${parsed.baseUrl} serves one model (${models.data[0].id}); requests name ${parsed.model}` };
      return { ref, available: false, reason: 'missing_model', detail: `${parsed.baseUrl} does not list ${parsed.model} (lists: ${models.data.map((m) => m.id).join(', ') || 'none'})`, fix: `load ${parsed.model} in the server or fix the model name after "#"` };
    }
    const path = resolve(parsed.path);
    try {
      await access(path);
    } catch {
      return { ref, available: false, reason: 'missing_file', detail: `GGUF file ${path} not found`, fix: 'place the file named in models/*.yaml (see docs/llm-tiers.md) and check its sha256' };
    }
    if (options.checkGgufRuntime) {
      try {
        const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
        await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
      } catch (error) {
        return { ref, available: false, reason: 'binding', detail: `node-llama-cpp binding does not load: ${(error as Error).message}`, fix: 'npm ci (allowScripts: node-llama-cpp must be true) on linux-x64' };
      }
    }
    return { ref, available: true, detail: `GGUF file ${path} present` };
  } catch (error) {
    if (error instanceof LlmError && error.kind === 'refused_endpoint') {
      return { ref, available: false, reason: 'refused_endpoint', detail: error.message, fix: 'add the host to llm.allowedHosts in the bench config (lab hosts only)' };
    }
    return { ref, available: false, reason: 'unreachable', detail: reason(error) };
  }
}

/**
 * Checks each model once, before a command does any work: the text naming every unavailable model with what was found
 * and the fix, or null when all are available. `what` names the command ("judge-bench was not started").
 */
export async function unavailableModelsText(what: string, refs: readonly string[], options: AvailabilityOptions = {}): Promise<string | null> {
  const found = await Promise.all([...new Set(refs)].map((ref) => checkModelAvailability(ref, options)));
  const problems = found.filter((f) => !f.available).map((f) => `  ${f.ref}: ${f.detail}${f.fix ? `\n    fix: ${f.fix}` : ''}`);
  if (problems.length === 0) return null;
  return `${what}, nothing was written: ${problems.length === 1 ? 'a model it names is' : 'models it names are'} not available\n${problems.join('\n')}`;
}
