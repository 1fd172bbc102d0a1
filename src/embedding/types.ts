/**
 * The Embedder role: texts → sentence vectors (L2-normalised, so a dot product is the cosine).
 * Implementations: a local ONNX sentence-embedding model (onnx.ts) and the lexical TF-IDF
 * fallback (tfidf.ts). `describe` names which one produced a figure, and every report that uses
 * embeddings prints it, so a lexical result is never mistaken for a model's.
 */
export interface Embedder {
  readonly kind: 'onnx' | 'tfidf';
  /** e.g. "onnx sentence embeddings all-MiniLM-L6-v2 (models/all-MiniLM-L6-v2/onnx/model.onnx)" or "lexical TF-IDF fallback …" */
  readonly describe: string;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}
