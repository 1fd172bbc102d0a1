import MiniSearch from 'minisearch';
import type { Embedder } from '../embedding/types.ts';
import { cosine } from '../embedding/vectors.ts';
import type { ManualChunk } from './model.ts';
import { normalise, stem } from './text.ts';

export interface RetrievalHit {
  chunk: ManualChunk;
  score: number;
}

/** How a question finds manual chunks. Every retriever has this shape; `describe` says which one a report used. */
export interface ManualRetriever {
  readonly describe: string;
  search(query: string, k: number): Promise<RetrievalHit[]>;
}

const STOP = new Set(['a', 'an', 'the', 'and', 'or', 'of', 'to', 'in', 'on', 'for', 'with', 'is', 'are', 'what', 'how', 'do', 'i', 'my', 'should', 'know', 'about', 'steps', 'can', 'it', 'this', 'that', 'me']);

/**
 * BM25 (MiniSearch's BM25+ ranking) over the chunks' last heading, heading path and text, with
 * the same light stemming as the deterministic tier. Headings weigh more: a question usually
 * names the topic, and the body text of many sections repeats the same words. The top 50 hits
 * are then re-ranked by how many of their headings the question names word for word (then by
 * fewer headings it does not name; ties keep the BM25 order), so "Activating/deactivating the system" under "Dynamic Stability Control"
 * wins over its parent section that shares most of the words.
 */
export class Bm25Retriever implements ManualRetriever {
  readonly describe = 'bm25 (MiniSearch BM25+, fields heading ×3, heading path ×2, text ×1; re-ranked by headings named)';
  private readonly search_: MiniSearch<{ id: number; heading: string; path: string; text: string }>;

  constructor(private readonly chunks: readonly ManualChunk[]) {
    this.search_ = new MiniSearch({
      fields: ['heading', 'path', 'text'],
      idField: 'id',
      processTerm: (term) => {
        const word = normalise(term);
        return !word || STOP.has(word) ? null : stem(word);
      },
      searchOptions: { boost: { heading: 3, path: 2, text: 1 } },
    });
    this.search_.addAll(
      chunks.map((chunk, id) => ({ id, heading: chunk.headingPath[chunk.headingPath.length - 1] ?? '', path: chunk.headingPath.join(' '), text: chunk.text })),
    );
  }

  async search(query: string, k: number): Promise<RetrievalHit[]> {
    const hits = this.search_.search(query).slice(0, RERANK_DEPTH);
    const phrase = ` ${normalise(query)} `;
    // how many of the chunk's headings the question names word for word: a question that names
    // "Lane keeping › Switching on" means that section, not a sibling with the same words
    const rank = (chunk: ManualChunk) => {
      // longest headings first, and each part of the question names one heading at most
      // ("Speed Limit Info with no-passing indicator" does not also name "No-passing indicator")
      const headings = [...new Set(chunk.headingPath.map(normalise).filter(Boolean))].sort((a, b) => b.length - a.length);
      let rest = phrase;
      let named = 0;
      for (const heading of headings) {
        if (!rest.includes(` ${heading} `)) continue;
        named++;
        rest = rest.replace(` ${heading} `, ' | ');
      }
      return { named, unnamed: headings.length - named };
    };
    return hits
      .map((hit) => ({ chunk: this.chunks[hit.id as number], score: hit.score }))
      .map((hit) => ({ hit, ...rank(hit.chunk) }))
      .sort((a, b) => b.named - a.named || a.unnamed - b.unnamed || b.hit.score - a.hit.score)
      .slice(0, k)
      .map(({ hit }) => hit);
  }
}

/** BM25 hits re-ranked by the headings the question names. */
const RERANK_DEPTH = 50;

/** The text of a chunk an embedder sees: where it stands, then what it says. */
export function chunkEmbeddingText(chunk: ManualChunk): string {
  return `${chunk.headingPath.join(' › ')}\n${chunk.text}`;
}

/** Dense retrieval: cosine similarity of sentence embeddings (whichever embedder is configured; its describe says which). */
export class DenseRetriever implements ManualRetriever {
  readonly describe: string;
  private vectors: Float32Array[] | null = null;

  constructor(
    private readonly chunks: readonly ManualChunk[],
    private readonly embedder: Embedder,
  ) {
    this.describe = `dense (${embedder.describe})`;
  }

  private async chunkVectors(): Promise<Float32Array[]> {
    this.vectors ??= await this.embedder.embed(this.chunks.map(chunkEmbeddingText));
    return this.vectors;
  }

  async search(query: string, k: number): Promise<RetrievalHit[]> {
    // chunks first: an embedder that fits on its first batch (TF-IDF) fits on the manual, not on the question
    const vectors = await this.chunkVectors();
    const [q] = await this.embedder.embed([query]);
    return vectors
      .map((v, i) => ({ chunk: this.chunks[i], score: cosine(q, v) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, k);
  }
}
