import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EmbeddingModelMissingError, OnnxSentenceEmbedder, resolveEmbedder, TfidfEmbedder, cosine } from '../../src/embedding/index.ts';
import { DenseRetriever } from '../../src/manual/retrieval.ts';
import type { ManualChunk } from '../../src/manual/model.ts';
import { methodEmbeddingModel } from '../../src/llm/manifest.ts';
import { writeTinySentenceModel, type TinyModel } from '../helpers/tinyOnnx.ts';

/** What sentence-transformers computes: mean of (E[id] + T[type]) over tokens with mask 1, then L2-normalised. */
function expected(model: TinyModel, tokens: string[]): number[] {
  const ids = ['[CLS]', ...tokens, '[SEP]'].map((t) => model.vocab.indexOf(t));
  const dims = model.wordEmbeddings[0].length;
  const sum = new Array<number>(dims).fill(0);
  for (const id of ids) for (let d = 0; d < dims; d++) sum[d] += Math.fround(model.wordEmbeddings[id][d] + model.typeEmbeddings[0][d]);
  const mean = sum.map((x) => x / ids.length);
  const norm = Math.hypot(...mean);
  return mean.map((x) => x / norm);
}

describe('embeddings: the local ONNX sentence model (on a generated tiny model) and the TF-IDF fallback', () => {
  afterEach(() => vi.restoreAllMocks());

  it('tokenises from the model folder, runs the graph, mean-pools over the mask and normalises: matches hand-computed vectors to 1e-6', async () => {
    const model = writeTinySentenceModel(join(mkdtempSync(join(tmpdir(), 'onnx-')), 'tiny-minilm'), 6);
    const embedder = await OnnxSentenceEmbedder.load({ model: model.dir });
    try {
      // one batch of different lengths: the short one is padded, and padding must not count
      const [long, short] = await embedder.embed(['The radar sensors is dirty', 'wash car']);
      const wantLong = expected(model, ['the', 'radar', 'sensor', '##s', 'is', 'dirty']);
      const wantShort = expected(model, ['wash', 'car']);
      expect(long).toHaveLength(6);
      long.forEach((x, d) => expect(Math.abs(x - wantLong[d])).toBeLessThan(1e-6));
      short.forEach((x, d) => expect(Math.abs(x - wantShort[d])).toBeLessThan(1e-6));
      // the same text alone (no padding) gives the same vector
      const [alone] = await embedder.embed(['wash car']);
      alone.forEach((x, d) => expect(Math.abs(x - short[d])).toBeLessThan(1e-6));
      expect(embedder.describe).toMatch(/^onnx sentence embeddings tiny-minilm/);
    } finally {
      await embedder.close();
    }
  });

  it('attempts no network access: fetch and sockets are blocked while the model loads and embeds', async () => {
    const model = writeTinySentenceModel(join(mkdtempSync(join(tmpdir(), 'onnx-')), 'offline-model'));
    const fetchSpy = vi.spyOn(globalThis, 'fetch').mockImplementation(async () => {
      throw new Error('network blocked in this test');
    });
    const connectSpy = vi.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (this: net.Socket) {
      throw new Error('network blocked in this test');
    });
    const embedder = await OnnxSentenceEmbedder.load({ model: join(model.dir, 'onnx', 'model.onnx') });
    const [vector] = await embedder.embed(['brake lights on']);
    await embedder.close();
    expect(vector).toHaveLength(4);
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(connectSpy).not.toHaveBeenCalled();
  });

  it('a missing model fails with the fix; resolveEmbedder then says it uses the labelled TF-IDF fallback', async () => {
    const nowhere = join(mkdtempSync(join(tmpdir(), 'onnx-')), 'all-MiniLM-L6-v2');
    await expect(OnnxSentenceEmbedder.load({ model: nowhere })).rejects.toThrow(EmbeddingModelMissingError);
    await expect(OnnxSentenceEmbedder.load({ model: nowhere })).rejects.toThrow(/not found at .*Fix: place the ONNX export of all-MiniLM-L6-v2 .*never downloads/);
    const lines: string[] = [];
    const fallback = await resolveEmbedder(nowhere, (l) => lines.push(l));
    expect(fallback.kind).toBe('tfidf');
    expect(fallback.describe).toMatch(/lexical TF-IDF fallback/);
    expect(lines.join('\n')).toMatch(/Fix: .*Using the lexical TF-IDF fallback/);
  });

  it('TF-IDF: unit vectors, identical texts cosine 1, shared rare words closer than common ones; dense retrieval over it', async () => {
    const embedder = new TfidfEmbedder(256);
    const [a, b, c, d] = await embedder.embed(['washing the radar sensor', 'washing the radar sensor', 'radar sensor cleaning', 'tire pressure check']);
    expect(cosine(a, b)).toBeCloseTo(1, 6);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    expect(cosine(a, c)).toBeGreaterThan(cosine(a, d));
    const chunk = (id: string, text: string): ManualChunk => ({ id, kind: 'section', source: 'm.md', chapter: 'C', sectionId: id, headingPath: ['C', id], parentSectionId: null, text, steps: [], warningType: null, topicSectionId: null, summary: '' });
    const retriever = new DenseRetriever([chunk('tires', 'Check the tire pressure monthly.'), chunk('radar', 'Keep the radar sensor clean.')], new TfidfEmbedder(256));
    const [hit] = await retriever.search('how do I keep the radar sensor clean', 1);
    expect(hit.chunk.id).toBe('radar');
    expect(retriever.describe).toMatch(/^dense \(lexical TF-IDF fallback/);
  });

  it("without a configured model, the methods' model from models/default.yaml runs when installed; else the fallback's label names it", async () => {
    // the shipped manifest names the paper set's all-MiniLM-L6-v2 export (not installed in this checkout)
    const named = methodEmbeddingModel();
    expect(named).toMatch(/models\/all-MiniLM-L6-v2\/onnx\/model\.onnx$/);
    const missing = await resolveEmbedder(undefined, () => undefined, join(mkdtempSync(join(tmpdir(), 'onnx-')), 'model.onnx'));
    expect(missing.kind).toBe('tfidf');
    expect(missing.describe).toMatch(/lexical TF-IDF fallback .*the method's model named in models\/default\.yaml is not installed at /);
    // a manifest whose method set names an installed model: that model is used
    const dir = mkdtempSync(join(tmpdir(), 'manifest-'));
    writeTinySentenceModel(join(dir, 'tiny'));
    writeFileSync(join(dir, 'models.yaml'), 'version: 1\nsets:\n  paper:\n    embedding: { file: tiny/onnx/model.onnx }\n');
    const installed = await resolveEmbedder(undefined, () => undefined, methodEmbeddingModel(join(dir, 'models.yaml')));
    try {
      expect(installed.kind).toBe('onnx');
    } finally {
      await installed.close();
    }
    // a model the config names wins over the manifest's
    const configured = await resolveEmbedder(join(dir, 'nowhere'), () => undefined, methodEmbeddingModel(join(dir, 'models.yaml')));
    expect(configured.kind).toBe('tfidf');
  });
});
