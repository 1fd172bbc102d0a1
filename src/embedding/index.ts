import { existsSync } from 'node:fs';
import { EmbeddingModelMissingError, OnnxSentenceEmbedder } from './onnx.ts';
import { TfidfEmbedder } from './tfidf.ts';
import type { Embedder } from './types.ts';

export type { Embedder } from './types.ts';
export { OnnxSentenceEmbedder, EmbeddingModelMissingError, DEFAULT_SENTENCE_MODEL, locateOnnxModel } from './onnx.ts';
export { TfidfEmbedder } from './tfidf.ts';
export { cosine, meanPool, normaliseL2 } from './vectors.ts';

/**
 * The embedder a run uses: the configured ONNX model when its path is given and present, else
 * the lexical TF-IDF fallback. A configured model that is missing or broken is logged with the
 * fix (never silently replaced), and `describe` of the result says which one runs. Without a
 * configured model, `methodModel` (the sentence-embedding model models/default.yaml names for the
 * methods) is used when its file is installed; when it is not, the fallback's label says so.
 */
export async function resolveEmbedder(model: string | undefined, log: (line: string) => void = () => undefined, methodModel?: string): Promise<Embedder> {
  if (!model && methodModel) {
    if (existsSync(methodModel)) {
      try {
        const embedder = await OnnxSentenceEmbedder.load({ model: methodModel });
        log(`embeddings: ${embedder.describe} (models/default.yaml)`);
        return embedder;
      } catch (error) {
        log(`embeddings: ${(error as Error).message} Using the lexical TF-IDF fallback.`);
      }
    }
    return new TfidfEmbedder(undefined, `the method's model named in models/default.yaml is not installed at ${methodModel}`);
  }
  if (model) {
    try {
      if (!existsSync(model)) throw new EmbeddingModelMissingError(`sentence-embedding model not found at ${model}`);
      const embedder = await OnnxSentenceEmbedder.load({ model });
      log(`embeddings: ${embedder.describe}`);
      return embedder;
    } catch (error) {
      log(`embeddings: ${(error as Error).message} Using the lexical TF-IDF fallback.`);
    }
  }
  const fallback = new TfidfEmbedder();
  if (!model) log(`embeddings: no sentence-embedding model configured; ${fallback.describe}`);
  return fallback;
}
