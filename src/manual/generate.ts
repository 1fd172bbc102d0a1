import { z } from 'zod';
import { ConfigError } from '../config/yaml.ts';
import { createRng } from '../domain/rng.ts';
import { resolveEmbedder } from '../embedding/index.ts';
import { unavailableModelsText } from '../llm/availability.ts';
import { methodEmbeddingModel } from '../llm/manifest.ts';
import { LlmSettingsSchema, providerOptionsFrom, type LlmSettings } from '../llm/settings.ts';
import type { LlmUsageTracker } from '../llm/usage.ts';
import type { ManualCorpus } from './corpus.ts';
import { generateLlmTestSet } from './llm.ts';
import type { TestItem } from './testset.ts';

/**
 * GEAR's Test Set Generator with a model (§3.1), as the command (`icabench manual generate`), the manual-QA config's
 * `generate:` block and the bench app's action run it: the model is checked before anything is read or written, the
 * sections are sampled (seeded) when asked, and what ran is recorded with the questions.
 */

/** The one way a missing model is reported, naming where to set it (`--model`, `generate.model`, the app's field). */
export function generatorNeedsModel(field: string): string {
  return `the test-set generator needs a model and none is configured: set ${field} to a model reference (ollama:<tag>, openai-compat:<base-url>#<model>, gguf:<path>); offline, the deterministic test set needs none (icabench manual testset)`;
}

/** A manual-QA config's `generate:` block: generate the test set with a model when the run starts. */
export const TestSetGeneratorSchema = z.strictObject({
  model: z.string({ error: (issue) => (issue.input === undefined ? generatorNeedsModel('generate.model') : 'expected a model reference') }).min(1),
  /** generate from at most this many sections (a seeded sample); default every section */
  sections: z.number().int().min(1).optional(),
  seed: z.number().int().default(42),
});
export type TestSetGenerator = z.infer<typeof TestSetGeneratorSchema>;

/** What a generation ran with and gave (stored with a run's setup, printed by the command). */
export const GenerationRecordSchema = z.strictObject({
  generator: z.string(),
  embedder: z.string(),
  sections: z.number().int().min(0),
  questions: z.number().int().min(0),
  failures: z.array(z.string()),
});
export type GenerationRecord = z.infer<typeof GenerationRecordSchema>;

/** The manual's sections a generation covers: all, or a seeded sample of `limit` (in the manual's order). */
function generatorSections(corpus: ManualCorpus, limit: number | undefined, seed: number): string[] {
  const all = [...new Set(corpus.chunks.filter((c) => c.kind === 'section').map((c) => c.sectionId))];
  if (limit === undefined || all.length <= limit) return all;
  const picked = new Set(createRng(seed).shuffle(all).slice(0, limit));
  return all.filter((s) => picked.has(s));
}

/**
 * Generates a test set with the model of `settings`: the model is checked first (an unavailable one stops here, with
 * what was found and the fix, before any call); the related sections come from `embeddingModel` (or the methods'
 * model, or the labelled TF-IDF fallback). A generation that yields no question is an error naming the failures.
 */
export async function generateTestSetWithModel(
  corpus: ManualCorpus,
  settings: Pick<TestSetGenerator, 'model' | 'sections' | 'seed'>,
  options: { llm: LlmSettings; embeddingModel?: string; tracker?: LlmUsageTracker; log?: (line: string) => void },
): Promise<{ items: TestItem[]; record: GenerationRecord }> {
  const log = options.log ?? (() => undefined);
  const problem = await unavailableModelsText('the test set was not generated', [settings.model], { allowedHosts: options.llm.allowedHosts, ollamaHost: options.llm.ollamaHost });
  if (problem) throw new ConfigError(problem);
  const sections = generatorSections(corpus, settings.sections, settings.seed);
  const embedder = await resolveEmbedder(options.embeddingModel, log, methodEmbeddingModel());
  try {
    log(`test-set generator: ${settings.model} on ${sections.length} sections (related sections by ${embedder.describe})`);
    const result = await generateLlmTestSet(corpus, settings.model, embedder, {
      sections,
      provider: providerOptionsFrom(options.llm),
      temperature: options.llm.temperature,
      maxRetries: options.llm.maxRetries,
      tracker: options.tracker,
      log,
    });
    const record: GenerationRecord = { generator: `llm:${settings.model}`, embedder: result.embedder, sections: sections.length, questions: result.items.length, failures: result.failures };
    if (result.items.length === 0) throw new Error(`the test-set generator (${settings.model}) gave no question for ${sections.length} sections${result.failures.length ? `: ${result.failures.slice(0, 3).join('; ')}` : ''}`);
    return { items: result.items, record };
  } finally {
    await embedder.close();
  }
}

/** The `llm:` settings of a config as the generator takes them (defaults when the config has none). */
export function generatorLlmSettings(value: unknown): LlmSettings {
  return LlmSettingsSchema.parse(value ?? {});
}
