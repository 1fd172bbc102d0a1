import { isTechniqueRef, parseJudgeRef, parseModelRef } from '../llm/modelRef.ts';
import { checkModelAvailability, type ModelAvailability } from '../llm/availability.ts';
import type { LlmSettings } from '../llm/settings.ts';
import type { InvocationFact } from './run-facts.ts';


/**
 * Whether a model named for a run can serve calls, checked with the run's model settings (hosts,
 * allowed endpoints). A technique judge (`sc-5:ollama:…`) is available when every model it names is.
 */
export async function checkTierModel(ref: string, settings: LlmSettings): Promise<ModelAvailability> {
  const check = (model: string) => checkModelAvailability(model, { allowedHosts: settings.allowedHosts, ollamaHost: settings.ollamaHost });
  if (!isTechniqueRef(ref)) return check(ref);
  let models: string[];
  try {
    models = parseJudgeRef(ref).models;
  } catch (error) {
    return { ref, available: false, reason: 'invalid_reference', detail: (error as Error).message };
  }
  const found = await Promise.all(models.map(check));
  const missing = found.find((f) => !f.available);
  if (missing) return { ...missing, ref, detail: `${missing.ref}: ${missing.detail}` };
  return { ref, available: true, detail: found.map((f) => `${f.ref}: ${f.detail}`).join('; ') };
}

/** A model the run names that cannot serve calls, and no fallback configured for its role: the run does not start. */
export class TierUnavailableError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`the run was not started, nothing was recorded: ${problems.length === 1 ? 'a model it names is' : 'models it names are'} not available\n${problems.join('\n')}`);
    this.name = 'TierUnavailableError';
  }
}

/** Where calls to these model references go (callers leave their deterministic tiers out); the Ollama client loads only when a reference needs it. */
export async function modelHostsOf(refs: readonly string[], ollamaHost: string | undefined): Promise<InvocationFact['modelHosts']> {
  return Promise.all(
    // a technique judge (sc-5:ollama:…) calls the models it names
    [...new Set(refs.flatMap((ref) => parseJudgeRef(ref).models))]
      .map(async (ref) => {
        const model = parseModelRef(ref);
        if (model.provider === 'ollama') return { ref, host: (await import('../llm/providers/ollama.ts')).resolveOllamaHost(ollamaHost) };
        return { ref, host: model.provider === 'openai-compat' ? model.baseUrl : 'in-process' };
      }),
  );
}
