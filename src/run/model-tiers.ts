import { ConfigError } from '../config/yaml.ts';
import type { TierFallback, TierUse } from '../domain/tiers.ts';
import { isTechniqueRef, parseJudgeRef, parseModelRef } from '../llm/modelRef.ts';
import { checkModelAvailability, type ModelAvailability } from '../llm/availability.ts';
import type { ProviderOptions } from '../llm/index.ts';
import { providerOptionsFrom, type LlmSettings } from '../llm/settings.ts';
import type { LlmProvider } from '../llm/types.ts';
import { LlmUsageTracker } from '../llm/usage.ts';
import type { InvocationFact } from './run-facts.ts';

/**
 * THE tier builder of every campaign kind: a kind says which references it names in which role and how to build a
 * tier of each, and this turns them into tiers the same way for all — the duplicate check of the judges (their order
 * is the precedence order), every model checked before anything starts (an unavailable one stops the run naming the
 * role, the model and the fix, unless the config's `fallback` names a deterministic tier for the role), one usage
 * tracker per run for every model call (usage, cost: `llm.calls`), one provider construction from the `llm:`
 * settings, and what each role ran with for the `tiers.resolved` fact.
 */

/** The roles model tiers play, named the same in every kind's config (docs/configuration.md, "Role names across kinds"). */
export type TierRole = 'simulator' | 'judge' | 'agent';

/** What every model tier of a run is built with. */
export interface ModelStack {
  /** the run's `llm:` settings (temperature, seed, retries, prices, …) */
  readonly settings: LlmSettings;
  /** one per run: every model call with its usage and cost (the `llm.calls` facts, the summary's `llm`) */
  readonly tracker: LlmUsageTracker;
  /** the provider options of the settings: hosts, allowed endpoints, timeouts, concurrency, the request cache */
  readonly providerOptions: ProviderOptions;
  /** a chat provider for a model reference, built with those options */
  provider(ref: string): LlmProvider;
}

/** How a kind builds the tiers of one role. */
export interface RoleTiers<T> {
  role: TierRole;
  /** the references in the kind's order (judges: the precedence order) */
  refs: readonly string[];
  /** the role's deterministic tiers by reference ("oracle", "template", "rule", …): not models, never checked */
  deterministic: Readonly<Record<string, { kind: TierUse['kind']; build(): T }>>;
  /** a model tier of this role */
  model(ref: string, models: ModelStack): T | Promise<T>;
  /** the deterministic reference that runs instead of an unavailable model: `use` when the config's `fallback` asks for it; `configKey` says how to ask */
  fallback?: { ref: string; use: boolean; configKey: string };
  /** what the run records of a built tier (default: its reference, `llm` for a model, no prompt files) */
  describe?(tier: T, ref: string): TierUse;
}

/** One role's tiers as built: in order, with the reference each runs as and what the run records of it. */
export interface BuiltRole<T> {
  tiers: T[];
  refs: string[];
  uses: TierUse[];
}

export type BuiltTierSet<R extends Record<string, RoleTiers<unknown>>> = { [K in keyof R]: R[K] extends RoleTiers<infer T> ? BuiltRole<T> : never } & {
  /** records every model call of the run; null when only deterministic tiers run */
  tracker: LlmUsageTracker | null;
  /** unavailable models replaced by a deterministic tier, as the config's `fallback` asks */
  fallbacks: TierFallback[];
  /** where the models' calls go (the `run.invocation` fact) */
  modelHosts: InvocationFact['modelHosts'];
};

const isModelOf = (role: RoleTiers<unknown>) => (ref: string) => !Object.hasOwn(role.deterministic, ref);

function problem(role: RoleTiers<unknown>, found: ModelAvailability): string {
  const lines = [`  ${role.role} ${found.ref}: ${found.detail}`];
  if (found.fix) lines.push(`    fix: ${found.fix}`);
  // a reference that does not parse is a typo: no fallback covers it
  if (role.fallback && found.reason !== 'invalid_reference') lines.push(`    or, to run with the ${role.fallback.ref} tier instead, add to the campaign config:  ${role.fallback.configKey}`);
  return lines.join('\n');
}

/** Builds the tiers of every role a kind names (see the top of this file); `log` hears each model found and each fallback taken. */
export async function buildModelTiers<R extends Record<string, RoleTiers<unknown>>>(roles: R, settings: LlmSettings, log: (line: string) => void = () => undefined): Promise<BuiltTierSet<R>> {
  const specs = Object.entries(roles);
  for (const [, role] of specs) {
    if (role.role === 'judge' && new Set(role.refs).size !== role.refs.length) throw new ConfigError(`judges: ${role.refs.join(', ')}: list each judge once (the order is the precedence order)`);
  }
  const modelRefs = [...new Set(specs.flatMap(([, role]) => role.refs.filter(isModelOf(role))))];
  const availability = new Map(await Promise.all(modelRefs.map(async (ref) => [ref, await checkTierModel(ref, settings)] as const)));

  const fallbacks: TierFallback[] = [];
  const problems: string[] = [];
  /** the reference that runs for `ref`: itself when available, the configured fallback, or null (a problem) */
  const resolve = (role: RoleTiers<unknown>, ref: string): string | null => {
    if (!isModelOf(role)(ref)) return ref;
    const found = availability.get(ref)!;
    if (found.available) {
      log(`${role.role}: ${ref} (${found.detail})`);
      return ref;
    }
    if (role.fallback?.use && role.role !== 'agent' && found.reason !== 'invalid_reference') {
      const replacedBy = role.fallback.ref as TierFallback['replacedBy'];
      fallbacks.push({ role: role.role, requested: ref, replacedBy, reason: found.detail, fix: found.fix ?? null });
      log(`${role.role}: ${ref} is not available (${found.detail}); the ${replacedBy} tier runs instead, as the config's fallback asks`);
      return replacedBy;
    }
    problems.push(problem(role, found));
    return null;
  };
  const resolved = specs.map(([name, role]) => [name, role, role.refs.map((ref) => resolve(role, ref))] as const);
  if (problems.length) throw new TierUnavailableError(problems);

  // a model replaced by its fallback takes its place in the order; a deterministic tier runs once per role
  const running = resolved.map(([name, role, refs]) => [name, role, [...new Set(refs as readonly string[])]] as const);
  const usedModels = [...new Set(running.flatMap(([, role, refs]) => refs.filter(isModelOf(role))))];
  let models: ModelStack | null = null;
  if (usedModels.length) {
    // the model clients load only when a model tier runs, so offline runs start fast
    const { createProvider } = await import('../llm/index.ts');
    const providerOptions = providerOptionsFrom(settings);
    models = { settings, tracker: new LlmUsageTracker({ prices: settings.prices }), providerOptions, provider: (ref) => createProvider(ref, providerOptions) };
  }
  const built: Record<string, BuiltRole<unknown>> = {};
  for (const [name, role, refs] of running) {
    const tiers = await Promise.all(refs.map((ref) => (isModelOf(role)(ref) ? role.model(ref, models!) : role.deterministic[ref].build())));
    const uses = tiers.map((tier, i) => role.describe?.(tier, refs[i]) ?? { ref: refs[i], kind: isModelOf(role)(refs[i]) ? 'llm' : role.deterministic[refs[i]].kind, prompts: [] });
    built[name] = { tiers, refs: [...refs], uses };
  }
  return { ...built, tracker: models?.tracker ?? null, fallbacks, modelHosts: await modelHostsOf(usedModels, settings.ollamaHost) } as BuiltTierSet<R>;
}


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
