import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Embedder } from './types.ts';
import { meanPool } from './vectors.ts';

/** The method's model (Reimers & Gurevych; 384 dimensions), in the sentence-transformers ONNX export layout. */
export const DEFAULT_SENTENCE_MODEL = 'all-MiniLM-L6-v2';

export class EmbeddingModelMissingError extends Error {
  constructor(what: string) {
    super(
      `${what}. Fix: place the ONNX export of ${DEFAULT_SENTENCE_MODEL} (tokenizer.json, tokenizer_config.json, onnx/model.onnx — ` +
        `the layout of the model's Hugging Face repository) in models/${DEFAULT_SENTENCE_MODEL}/, or set the embedding entry of your ` +
        `model set in models/*.yaml to the model file; icabench never downloads models. Without one, the lexical TF-IDF fallback is used.`,
    );
    this.name = 'EmbeddingModelMissingError';
  }
}

export interface OnnxEmbedderOptions {
  /** the .onnx file, or the model folder (then onnx/model.onnx or model.onnx inside it) */
  model: string;
  /** longest input in tokens (longer texts are truncated, as sentence-transformers does); MiniLM: 256 */
  maxTokens?: number;
  batchSize?: number;
}

/** The model file and the folder holding its tokenizer (the file's folder or its parent: the HF layout keeps the model in onnx/). */
export function locateOnnxModel(model: string): { file: string; tokenizerDir: string } {
  const path = resolve(model);
  if (!existsSync(path)) throw new EmbeddingModelMissingError(`sentence-embedding model not found at ${path}`);
  const file = statSync(path).isDirectory() ? [join(path, 'onnx', 'model.onnx'), join(path, 'model.onnx')].find(existsSync) : path;
  if (!file) throw new EmbeddingModelMissingError(`${path} holds no onnx/model.onnx or model.onnx`);
  const tokenizerDir = [dirname(file), dirname(dirname(file))].find((dir) => existsSync(join(dir, 'tokenizer.json')));
  if (!tokenizerDir) throw new EmbeddingModelMissingError(`no tokenizer.json beside ${file} or in its parent folder`);
  return { file, tokenizerDir };
}

type Tokenizer = (texts: string[], options: { padding: boolean; truncation: boolean; max_length: number }) => Record<string, { data: BigInt64Array; dims: number[] }>;

/**
 * A local ONNX sentence-embedding model: the tokenizer from the model folder (transformers.js,
 * remote models switched off, so nothing is ever fetched), the graph through onnxruntime-node, then
 * mean pooling over the attention mask and L2 normalisation, as sentence-transformers does.
 */
export class OnnxSentenceEmbedder implements Embedder {
  readonly kind = 'onnx' as const;

  private constructor(
    readonly describe: string,
    private readonly tokenizer: Tokenizer,
    private readonly session: import('onnxruntime-node').InferenceSession,
    private readonly ort: typeof import('onnxruntime-node'),
    private readonly maxTokens: number,
    private readonly batchSize: number,
  ) {}

  static async load(options: OnnxEmbedderOptions): Promise<OnnxSentenceEmbedder> {
    const { file, tokenizerDir } = locateOnnxModel(options.model);
    const transformers = await import('@huggingface/transformers');
    transformers.env.allowRemoteModels = false;
    transformers.env.allowLocalModels = true;
    transformers.env.localModelPath = `${dirname(tokenizerDir)}/`;
    const tokenizer = (await transformers.AutoTokenizer.from_pretrained(basename(tokenizerDir), { local_files_only: true })) as unknown as Tokenizer;
    const ort = await import('onnxruntime-node');
    let session;
    try {
      session = await ort.InferenceSession.create(file, { graphOptimizationLevel: 'all' });
    } catch (error) {
      throw new EmbeddingModelMissingError(`${file} could not be loaded as an ONNX model (${(error as Error).message.split('\n')[0]})`);
    }
    for (const input of ['input_ids', 'attention_mask']) {
      if (!session.inputNames.includes(input)) throw new EmbeddingModelMissingError(`${file} has no input "${input}" (inputs: ${session.inputNames.join(', ')}); expected a BERT-style sentence encoder`);
    }
    if (!session.outputNames.includes('last_hidden_state')) throw new EmbeddingModelMissingError(`${file} has no output "last_hidden_state" (outputs: ${session.outputNames.join(', ')})`);
    const name = basename(tokenizerDir);
    return new OnnxSentenceEmbedder(`onnx sentence embeddings ${name} (${file}; mean pooling, L2-normalised)`, tokenizer, session, ort, options.maxTokens ?? 256, options.batchSize ?? 32);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      const batch = texts.slice(start, start + this.batchSize);
      const encoded = this.tokenizer([...batch], { padding: true, truncation: true, max_length: this.maxTokens });
      const [rows, tokens] = encoded.input_ids.dims;
      const feeds: Record<string, import('onnxruntime-node').Tensor> = {};
      for (const name of this.session.inputNames) {
        const data = encoded[name]?.data ?? (name === 'token_type_ids' ? new BigInt64Array(rows * tokens) : undefined);
        if (!data) throw new Error(`onnx embedder: the model wants input "${name}", which the tokenizer does not produce`);
        feeds[name] = new this.ort.Tensor('int64', data, [rows, tokens]);
      }
      const result = await this.session.run(feeds);
      const hidden = result.last_hidden_state;
      const dims = hidden.dims[2];
      out.push(...meanPool(hidden.data as Float32Array, encoded.attention_mask.data, rows, tokens, dims));
    }
    return out;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
