import { mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../config/yaml.ts';
import { manualFiles } from '../manual/files.ts';
import { ManualCorpus } from '../manual/corpus.ts';
import { generateTestSetWithModel, generatorLlmSettings, generatorNeedsModel, type GenerationRecord } from '../manual/generate.ts';
import { buildManualIndex } from '../manual/manual-index.ts';
import { writeTestSet } from '../manual/testset.ts';
import { ConfigNameSchema } from './api-schemas.ts';
import { ApiError } from './http-util.ts';

/**
 * The bench app's test-set generator action (POST /api/manual/testsets): GEAR's two-call generator with a model on the
 * manual a config names, written as a test set under the workspace (`testsets/`), where a config's `testSet` can name
 * it. The config is read through the app's catalog, so its files pass the one path policy before anything is read.
 */
export const GenerateTestSetBodySchema = z.strictObject({
  configName: ConfigNameSchema,
  /** the generating model; required (absent: 400 model_required, naming this field) */
  model: z.string().trim().max(500).optional(),
  sections: z.number().int().min(1).max(100_000).optional(),
  seed: z.number().int().default(42),
});
export type GenerateTestSetBody = z.infer<typeof GenerateTestSetBodySchema>;

/** The fields of a config the generator reads (a manual-QA config has them; another kind names no manual). */
const ManualSourceSchema = z.object({ manual: z.array(z.string().min(1)).min(1), embeddingModel: z.string().optional(), llm: z.unknown().optional() });

export interface GeneratedTestSet {
  /** the test set file, under the workspace */
  file: string;
  questions: number;
  generation: GenerationRecord;
}

export async function generateTestSetFromConfig(
  request: GenerateTestSetBody,
  deps: { configsDir: string; workspace: string; readValidConfig(name: string): Promise<unknown>; log?: (line: string) => void },
): Promise<GeneratedTestSet> {
  // said first, before any file is read: there is no model to generate with
  if (!request.model) throw new ApiError(400, 'model_required', generatorNeedsModel('model'), [{ path: 'model', message: generatorNeedsModel('model') }]);
  const source = ManualSourceSchema.safeParse(await deps.readValidConfig(request.configName));
  if (!source.success) throw new ApiError(400, 'no_manual', `${request.configName}: names no manual (a manual-QA config's \`manual:\` list); the generator needs one`);
  const resolveIn = (path: string) => resolve(deps.configsDir, path);
  const corpus = new ManualCorpus(await buildManualIndex(manualFiles(source.data.manual.map(resolveIn))));
  let generated;
  try {
    generated = await generateTestSetWithModel(corpus, { model: request.model, sections: request.sections, seed: request.seed }, {
      llm: generatorLlmSettings(source.data.llm),
      embeddingModel: source.data.embeddingModel && resolveIn(source.data.embeddingModel),
      log: deps.log,
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new ApiError(400, 'model_unavailable', error.message, [{ path: 'model', message: error.message }]);
    throw error;
  }
  const dir = join(deps.workspace, 'testsets');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${basename(request.configName).replace(/\.ya?ml$/, '')}-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`);
  const questions = await writeTestSet(file, generated.items);
  return { file, questions, generation: generated.record };
}
