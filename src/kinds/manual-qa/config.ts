import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { HeadUnitConfigSchema } from '../../run/headunit-config.ts';
import { ConfigError, loadYaml } from '../../config/yaml.ts';
import { acceptingRenamedFields } from '../../config/renamed-fields.ts';
import { MANUAL_QA_RENAMED_FIELDS } from './item.ts';
import { ManualFaultConfigSchema, ManualQaSkill } from '../../headunit/reference/manual-skill.ts';
import { resolveEmbedder } from '../../embedding/index.ts';
import { methodEmbeddingModel } from '../../llm/manifest.ts';
import { Bm25Retriever, DenseRetriever } from '../../manual/retrieval.ts';
import { LlmSettingsSchema } from '../../llm/settings.ts';
import { createRng } from '../../domain/rng.ts';
import { MethodSchema } from '../../domain/method.ts';
import { manualFiles } from '../../manual/files.ts';
import { ManualCorpus } from '../../manual/corpus.ts';
import { buildManualIndex } from '../../manual/manual-index.ts';
import { QUESTION_KINDS, QuestionKindSchema, type QuestionKind } from '../../manual/model.ts';
import { generateDeterministicTestSet, onePerSection, readTestSet, type TestItem } from '../../manual/testset.ts';
import { generateTestSetWithModel, TestSetGeneratorSchema, type GenerationRecord } from '../../manual/generate.ts';


/**
 * A manual-QA campaign (`kind: manual-qa`): the questions of a test set go to the head unit as
 * ordinary user turns, every judge tier judges the answers. Paths (manual, testSet, embeddingModel) resolve against this file.
 */
export const ManualQaConfigSchema = acceptingRenamedFields(
  z
    .object({
      kind: z.literal('manual-qa'),
      name: z.string().min(1),
      description: z.string().default(''),
      /** manual files or folders (IBIKUS XML, Markdown, HTML, PDF) */
      manual: z.array(z.string().min(1)).min(1),
      /** a test set file (.jsonl); default: the deterministic test set of the manual */
      testSet: z.string().optional(),
      /** generate the test set with a model when the run starts (GEAR's two-call generator; instead of `testSet`) */
      generate: TestSetGeneratorSchema.optional(),
      /** one question per manual section (a seeded pick among the section's questions), as GEAR samples its evaluation set */
      onePerSection: z.boolean().default(false),
      /** question kinds to ask ("all" or a list) */
      kinds: z.union([z.literal('all'), z.array(QuestionKindSchema).min(1)], { error: () => `expected "all" or a list of question kinds (${QUESTION_KINDS.join(', ')})` }).default('all'),
      /** ask at most this many questions (a seeded sample) */
      limit: z.number().int().min(1).optional(),
      seed: z.number().int().default(42),
      headUnit: HeadUnitConfigSchema.default({ type: 'reference', worldSeed: 1, faults: { profiles: [], rate: 0.5, rates: {}, seed: 7 } }),
      /** the reference unit's manual-QA fault profiles */
      manualFaults: ManualFaultConfigSchema.default({ profiles: [], rate: 0.5, rates: {}, seed: 7 }),
      /** judge tiers in order (the first decides an item's outcome): "oracle" (deterministic) and/or model references; `evaluators` before (docs/configuration.md) */
      judges: z.array(z.string().min(1)).min(1).default(['oracle']),
      /** retrieval of the reference unit's skill and the generator's related sections: bm25, or dense with the embedder below */
      retrieval: z.enum(['bm25', 'dense']).default('bm25'),
      /** a local ONNX sentence-embedding model (file or folder); without one, dense retrieval uses the labelled TF-IDF fallback */
      embeddingModel: z.string().optional(),
      /** the warning-omission search after the planned questions */
      omissionSearch: z.strictObject({ budget: z.number().int().min(1).max(100_000), seed: z.number().int().default(1), exploit: z.number().min(0).max(1).default(0.5) }).strict().optional(),
      concurrency: z.number().int().min(1).max(64).default(4),
      budgetMinutes: z.number().positive().optional(),
      llm: LlmSettingsSchema.prefault({}),
      /** the model family of the assistant under test (e.g. qwen), for GEAR's evaluator-bias test: its family's judge tier against the others */
      assistantFamily: z.string().regex(/^[a-z]+$/, 'a model family in lower-case letters, e.g. qwen, llama, gpt').optional(),
      /** lab (default) or GEAR as published: model tiers judge correctness against the reference key facts ("not mentioned" left out) and actionability on every answer (docs/reproduction.md) */
      method: MethodSchema.default('lab'),
    })
    .strict()
    .refine((c) => !(c.testSet && c.generate), { path: ['generate'], message: 'give either testSet (a file) or generate (a model generates the set at run start), not both' }),
  MANUAL_QA_RENAMED_FIELDS,
);
export type ManualQaConfig = z.infer<typeof ManualQaConfigSchema>;

export interface LoadedManualQa {
  config: ManualQaConfig;
  path: string;
  /** manual files, resolved */
  files: string[];
}

export function loadManualQaConfig(path: string): LoadedManualQa {
  const absolute = resolve(path);
  const config = loadYaml(ManualQaConfigSchema, absolute, 'manual-QA config');
  const base = dirname(absolute);
  const files = manualFiles(config.manual.map((p) => resolve(base, p)));
  const resolved = {
    ...config,
    ...(config.testSet ? { testSet: resolve(base, config.testSet) } : {}),
    ...(config.embeddingModel ? { embeddingModel: resolve(base, config.embeddingModel) } : {}),
  };
  return { config: resolved, path: absolute, files };
}

/** The manual of a config as one corpus (its index built from the files). */
export async function loadManualCorpus(loaded: LoadedManualQa): Promise<ManualCorpus> {
  return new ManualCorpus(await buildManualIndex(loaded.files));
}

/**
 * The questions a run asks, in plan order: the test set (given, generated with the `generate` model, or deterministic),
 * one per section when asked, the kinds asked for, a seeded sample of `limit`. `generation`: what the generator ran with.
 */
export async function planManualQa(loaded: LoadedManualQa, corpus: ManualCorpus, log: (line: string) => void = () => undefined): Promise<{ items: TestItem[]; generation: GenerationRecord | null }> {
  const { config } = loaded;
  const generated = config.generate ? await generateTestSetWithModel(corpus, config.generate, { llm: config.llm, embeddingModel: config.embeddingModel, log }) : null;
  let items = generated ? generated.items : config.testSet ? await readTestSet(config.testSet) : generateDeterministicTestSet(corpus);
  if (config.onePerSection) items = onePerSection(items, config.seed);
  if (config.kinds !== 'all') {
    const kinds = new Set<QuestionKind>(config.kinds);
    items = items.filter((i) => kinds.has(i.kind));
  }
  if (config.limit !== undefined && items.length > config.limit) items = createRng(config.seed).shuffle(items).slice(0, config.limit);
  if (items.length === 0) throw new ConfigError(`${loaded.path}: kinds/limit leave no question to ask`);
  return { items, generation: generated?.record ?? null };
}

/**
 * The reference unit's manual skill a config asks for: BM25, or dense retrieval with the configured
 * ONNX model (the labelled TF-IDF fallback when none is configured or it is missing, said in `log`).
 * `describe` of the result names the retriever and embedder, for the run's record.
 */
export async function manualSkillFor(config: ManualQaConfig, corpus: ManualCorpus, log: (line: string) => void = () => undefined): Promise<{ skill: ManualQaSkill; retrieval: string; close(): Promise<void> }> {
  if (config.retrieval === 'bm25') {
    const skill = new ManualQaSkill(corpus, new Bm25Retriever(corpus.chunks));
    return { skill, retrieval: skill.describe, close: async () => undefined };
  }
  const embedder = await resolveEmbedder(config.embeddingModel, log, methodEmbeddingModel());
  const skill = new ManualQaSkill(corpus, new DenseRetriever(corpus.chunks, embedder));
  return { skill, retrieval: skill.describe, close: () => embedder.close() };
}
