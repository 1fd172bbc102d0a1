import type { Embedder } from './types.ts';
import { normaliseL2 } from './vectors.ts';
import { hashSeed } from '../domain/rng.ts';

const STOPWORDS = new Set('a an the and or but of to in on at by for with from is are was were be been it its this that i you we they he she me my your do does did not no so as if then'.split(' '));

function words(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !STOPWORDS.has(w));
}

/**
 * The offline fallback embedder: TF-IDF (sublinear tf, smoothed idf) over words, hashed into a
 * fixed number of dimensions with a sign bit (feature hashing), L2-normalised. It measures word
 * overlap, not meaning: labelled "lexical TF-IDF fallback" wherever it is used. The idf is fitted
 * on the first batch it embeds (or on `fit`), so the corpus being compared defines what is rare.
 */
export class TfidfEmbedder implements Embedder {
  readonly kind = 'tfidf' as const;
  readonly describe: string;
  private idf: Map<string, number> | null = null;
  private documents = 0;

  /** `note`: why the fallback runs (e.g. the method's model is not installed), appended to the label */
  constructor(readonly dimensions = 1024, note?: string) {
    this.describe = `lexical TF-IDF fallback (hashed to ${dimensions} dimensions; word overlap, not a sentence-embedding model${note ? `; ${note}` : ''})`;
  }

  fit(texts: readonly string[]): this {
    const df = new Map<string, number>();
    for (const text of texts) for (const word of new Set(words(text))) df.set(word, (df.get(word) ?? 0) + 1);
    this.documents = texts.length;
    this.idf = new Map([...df].map(([word, n]) => [word, Math.log((1 + texts.length) / (1 + n)) + 1]));
    return this;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (!this.idf) this.fit(texts);
    const unseen = Math.log(1 + this.documents) + 1;
    return texts.map((text) => {
      const tf = new Map<string, number>();
      for (const word of words(text)) tf.set(word, (tf.get(word) ?? 0) + 1);
      const vector = new Float32Array(this.dimensions);
      for (const [word, n] of tf) {
        const hash = hashSeed(word); // FNV-1a, 32 bit: the word's bucket in the hashed vector
        const weight = (1 + Math.log(n)) * (this.idf!.get(word) ?? unseen);
        vector[hash % this.dimensions] += hash & 0x80000000 ? -weight : weight;
      }
      return normaliseL2(vector);
    });
  }

  async close(): Promise<void> {}
}
