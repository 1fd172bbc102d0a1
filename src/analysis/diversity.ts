import { z } from 'zod';
import type { ConversationResult } from '../domain/conversation.ts';
import { describeZodError } from '../domain/validation.ts';
import type { Embedder } from '../embedding/types.ts';
import { createRng, hashSeed } from '../domain/rng.ts';
import { kMedoids, silhouetteScore, type DistanceMatrix } from './kmedoids.ts';
import { pcaProjection, toSparse, type SparseVector } from './projection.ts';
import { combinedVerdict, turnLabels } from './verdict.ts';

/**
 * Failure diversity as STELLAR measures it (the method's RQ2): the failing conversations of a run
 * rendered as text (renderConversation), embedded, deduplicated at a cosine threshold (unique
 * failing conversations; each duplicate listed with its nearest twin), clustered with k-medoids at
 * the silhouette-selected k, repeated with different seeds, and the share of clusters each run
 * reaches (coverage, mean ± std over the repetitions). The distance is STELLAR's d = (1 − cos)/2.
 * See docs/diversity.md.
 */

export const DiversityConfigSchema = z
  .strictObject({
    /** two failing conversations with cosine similarity above this are duplicates */
    threshold: z.number().gt(0).lt(1).default(0.8),
    /** the range of k the silhouette selects from */
    kMin: z.number().int().min(2).default(2),
    kMax: z.number().int().min(2).default(20),
    /** seeded k-medoids repetitions; coverage is reported as mean ± std over them */
    repetitions: z.number().int().min(1).max(100).default(10),
    seed: z.number().int().default(1),
    /** k-medoids and the silhouette run on at most this many conversations per repetition (a seeded sample; the rest are assigned to the nearest medoid) */
    sampleSize: z.number().int().min(10).max(5000).default(400),
    /** a local ONNX sentence-embedding model (file or folder, e.g. models/all-MiniLM-L6-v2); without one the labelled lexical TF-IDF fallback runs */
    embeddingModel: z.string().optional(),
  })
  .refine((c) => c.kMin <= c.kMax, { message: 'kMin must not exceed kMax', path: ['kMin'] });
export type DiversityConfig = z.infer<typeof DiversityConfigSchema>;
export const DEFAULT_DIVERSITY_CONFIG: DiversityConfig = DiversityConfigSchema.parse({});

/** The diversity settings stored with a run's config (`diversity:`), or the defaults. */
export function diversityConfigOfStoredConfig(config: unknown): DiversityConfig {
  const stored = (config as { diversity?: unknown } | null)?.diversity;
  const parsed = DiversityConfigSchema.safeParse(stored ?? {});
  if (!parsed.success) throw new Error(`the run's stored config has invalid diversity settings: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/**
 * The text a failing conversation is embedded as: one line per user turn, head-unit reply and the
 * turn's deciding labels, in order —
 *   user: <utterance>
 *   assistant: <reply text, or "(no reply)">
 *   labels: <label>, <label>        (only on turns that got labels)
 * Context, actions and evidence are left out: two conversations are "the same failure" when the
 * exchange and the failure types match, whatever the car was doing.
 */
export function renderConversation(result: Pick<ConversationResult, 'turns'>): string {
  const lines: string[] = [];
  for (const turn of result.turns) {
    lines.push(`user: ${turn.utterance.text}`);
    lines.push(`assistant: ${turn.reply?.text.trim() || '(no reply)'}`);
    const labels = [...new Set(turnLabels(turn).map((l) => l.label))];
    if (labels.length) lines.push(`labels: ${labels.join(', ')}`);
  }
  return lines.join('\n');
}

export interface DiversityItem {
  key: string;
  /** the run (or side of a comparison) the conversation belongs to */
  run: string;
  text: string;
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
/** sample standard deviation (n − 1); 0 for a single value */
const std = (xs: readonly number[]) => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));

const MeanStdSchema = z.object({ mean: z.number(), std: z.number(), values: z.array(z.number()) });

/**
 * Which conversations a diversity analysis runs over: `failing` (combined outcome fail, STELLAR's
 * unique failing conversations) or `findings` (completed conversations with at least one labelled
 * failure, whatever their verdict: under the paper's pure-score rule most of them pass).
 */
export const DiversityPopulationSchema = z.enum(['failing', 'findings']);
export type DiversityPopulation = z.infer<typeof DiversityPopulationSchema>;

/** Whether a conversation belongs to a population. */
export function inPopulation(result: ConversationResult, population: DiversityPopulation, combined = combinedVerdict(result)): boolean {
  return population === 'failing' ? combined.outcome === 'fail' : result.status === 'completed' && combined.findings.length > 0;
}

export const DiversitySectionSchema = z.object({
  /** the conversations analysed (absent in sections written before there were two: failing) */
  population: DiversityPopulationSchema.default('failing'),
  /** which embedder produced the vectors: "lexical TF-IDF fallback …" or "onnx sentence embeddings …" */
  embedder: z.string(),
  embedderKind: z.enum(['onnx', 'tfidf']),
  threshold: z.number(),
  distance: z.literal('(1 - cos) / 2'),
  /** conversations of the population (failing ones, or ones with findings) */
  failing: z.number().int().min(0),
  /** those conversations after deduplication, per run */
  unique: z.record(z.string(), z.number().int().min(0)),
  duplicates: z.array(z.object({ key: z.string(), run: z.string(), twin: z.string(), similarity: z.number() })),
  clustering: z.object({
    algorithm: z.string(),
    kRange: z.tuple([z.number().int(), z.number().int()]),
    repetitions: z.number().int(),
    seed: z.number().int(),
    sampled: z.number().int().describe('conversations k-medoids ran on per repetition'),
    /** per repetition: the k the silhouette chose and its silhouette */
    runs: z.array(z.object({ k: z.number().int(), silhouette: z.number() })),
    /** the repetition shown in the plot and cluster table (the best silhouette) */
    shown: z.number().int(),
  }),
  /** share of the clusters each run reaches, over the repetitions */
  coverage: z.record(z.string(), MeanStdSchema),
  clusters: z.array(z.object({ id: z.number().int(), size: z.number().int(), perRun: z.record(z.string(), z.number().int()), medoid: z.string(), example: z.string() })),
  /** the unique failing conversations: rendering, 2-D PCA projection and cluster (of the shown repetition) */
  conversations: z.array(z.object({ key: z.string(), run: z.string(), text: z.string(), x: z.number(), y: z.number(), cluster: z.number().int() })),
});
export type DiversitySection = z.infer<typeof DiversitySectionSchema>;

/** One dimension's posting list: the rows with a non-zero entry there and their values, in growable typed arrays. */
class Posting {
  rows = new Int32Array(8);
  values = new Float64Array(8);
  length = 0;
  push(row: number, value: number): void {
    if (this.length === this.rows.length) {
      const rows = new Int32Array(this.length * 2);
      const values = new Float64Array(this.length * 2);
      rows.set(this.rows);
      values.set(this.values);
      this.rows = rows;
      this.values = values;
    }
    this.rows[this.length] = row;
    this.values[this.length++] = value;
  }
}

/** Similarities of rows against an indexed set, through an inverted index over the non-zero entries. */
class CosineIndex {
  private readonly postings = new Map<number, Posting>();
  private count = 0;
  add(vector: SparseVector): number {
    const row = this.count++;
    for (let k = 0; k < vector.indices.length; k++) {
      let posting = this.postings.get(vector.indices[k]);
      if (!posting) this.postings.set(vector.indices[k], (posting = new Posting()));
      posting.push(row, vector.values[k]);
    }
    return row;
  }
  /** cosine (dot product of unit vectors) of `vector` with every indexed row */
  similarities(vector: SparseVector, out = new Float64Array(this.count)): Float64Array {
    out.fill(0);
    for (let k = 0; k < vector.indices.length; k++) {
      const posting = this.postings.get(vector.indices[k]);
      if (!posting) continue;
      const v = vector.values[k];
      const { rows, values, length } = posting;
      for (let p = 0; p < length; p++) out[rows[p]] += v * values[p];
    }
    return out;
  }
  get size(): number {
    return this.count;
  }
}

/** d = (1 − cos) / 2 of every pair of rows. */
function distanceMatrix(rows: readonly SparseVector[]): DistanceMatrix {
  const n = rows.length;
  const index = new CosineIndex();
  for (const row of rows) index.add(row);
  const data = new Float32Array(n * n);
  const buffer = new Float64Array(n);
  rows.forEach((row, i) => {
    index.similarities(row, buffer);
    for (let j = 0; j < n; j++) data[i * n + j] = i === j ? 0 : Math.max(0, (1 - Math.min(1, buffer[j])) / 2);
  });
  return { n, data };
}

/**
 * Lets other work run between the analysis' slices (the bench app computes summaries inside its
 * server; a 10,000-conversation analysis takes seconds of CPU): one event-loop turn.
 */
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** conversations deduplicated between two yields */
const DEDUP_SLICE = 250;

/** Duplicates within each run, in the items' order: an item is a duplicate when its cosine with an earlier unique item of its run exceeds the threshold. */
async function deduplicate(items: readonly DiversityItem[], vectors: readonly SparseVector[], threshold: number): Promise<{ uniqueIdx: number[]; duplicates: DiversitySection['duplicates'] }> {
  const perRun = new Map<string, { index: CosineIndex; members: number[] }>();
  const uniqueIdx: number[] = [];
  const duplicates: DiversitySection['duplicates'] = [];
  const buffer = new Float64Array(items.length);
  for (const [i, item] of items.entries()) {
    if (i > 0 && i % DEDUP_SLICE === 0) await yieldTurn();
    let run = perRun.get(item.run);
    if (!run) perRun.set(item.run, (run = { index: new CosineIndex(), members: [] }));
    let best = -1;
    let bestSimilarity = -Infinity;
    if (run.index.size > 0) {
      const sims = run.index.similarities(vectors[i], buffer.subarray(0, run.index.size));
      for (let j = 0; j < sims.length; j++) if (sims[j] > bestSimilarity) [bestSimilarity, best] = [sims[j], j];
    }
    if (best >= 0 && bestSimilarity > threshold) {
      duplicates.push({ key: item.key, run: item.run, twin: items[run.members[best]].key, similarity: Math.min(1, bestSimilarity) });
    } else {
      run.index.add(vectors[i]);
      run.members.push(i);
      uniqueIdx.push(i);
    }
  }
  return { uniqueIdx, duplicates };
}

/**
 * The diversity analysis over failing conversations of one or more runs (a comparison passes two).
 * Deterministic for the same items, embedder and config: every random choice comes from `seed`.
 */
export async function analyseDiversity(
  items: readonly DiversityItem[],
  embedder: Embedder,
  config: DiversityConfig = DEFAULT_DIVERSITY_CONFIG,
  population: DiversityPopulation = 'failing',
): Promise<DiversitySection> {
  const runs = [...new Set(items.map((i) => i.run))];
  const raw = await embedder.embed(items.map((i) => i.text));
  const dimensions = raw[0]?.length ?? 0;
  const embedded = raw.map(toSparse);
  const { uniqueIdx, duplicates } = await deduplicate(items, embedded, config.threshold);
  const unique = uniqueIdx.map((i) => items[i]);
  const vectors = uniqueIdx.map((i) => embedded[i]);
  const m = unique.length;
  const base = {
    population,
    embedder: embedder.describe,
    embedderKind: embedder.kind,
    threshold: config.threshold,
    distance: '(1 - cos) / 2' as const,
    failing: items.length,
    unique: Object.fromEntries(runs.map((r) => [r, unique.filter((u) => u.run === r).length])),
    duplicates,
  };
  const kMax = Math.min(config.kMax, Math.min(m, config.sampleSize) - 1);
  const algorithm = 'k-medoids (FasterPAM from a seeded k-medoids++ start), k by mean silhouette';
  if (kMax < config.kMin) {
    // too few unique failures to cluster: every conversation is its own cluster
    const projection = pcaProjection(vectors, dimensions);
    return {
      ...base,
      clustering: { algorithm, kRange: [config.kMin, config.kMax], repetitions: 0, seed: config.seed, sampled: m, runs: [], shown: -1 },
      coverage: Object.fromEntries(runs.map((r) => [r, { mean: m === 0 ? 0 : unique.filter((u) => u.run === r).length / m, std: 0, values: [] }])),
      clusters: unique.map((u, id) => ({ id, size: 1, perRun: { [u.run]: 1 }, medoid: u.key, example: u.text })),
      conversations: unique.map((u, i) => ({ key: u.key, run: u.run, text: u.text, x: projection[i].x, y: projection[i].y, cluster: i })),
    };
  }

  const whole = m <= config.sampleSize ? distanceMatrix(vectors) : null;
  const repetitions: { k: number; silhouette: number; medoids: number[]; assignment: Int32Array; coverage: Record<string, number> }[] = [];
  for (let r = 0; r < config.repetitions; r++) {
    const rng = createRng(hashSeed('diversity', config.seed, r));
    const sample = whole ? Array.from({ length: m }, (_, i) => i) : rng.shuffle(Array.from({ length: m }, (_, i) => i)).slice(0, config.sampleSize).sort((a, b) => a - b);
    const matrix = whole ?? distanceMatrix(sample.map((i) => vectors[i]));
    let best: { k: number; silhouette: number; medoids: number[] } | null = null;
    for (let k = config.kMin; k <= kMax; k++) {
      await yieldTurn();
      const result = kMedoids(matrix, k, rng);
      const silhouette = silhouetteScore(matrix, result.assignment, k);
      // ties keep the smaller k
      if (!best || silhouette > best.silhouette + 1e-12) best = { k, silhouette, medoids: result.medoids.map((i) => sample[i]) };
    }
    const chosen = best!;
    const medoidIndex = new CosineIndex();
    for (const medoid of chosen.medoids) medoidIndex.add(vectors[medoid]);
    const assignment = new Int32Array(m);
    vectors.forEach((vector, i) => {
      const sims = medoidIndex.similarities(vector);
      let c = 0;
      for (let j = 1; j < sims.length; j++) if (sims[j] > sims[c]) c = j;
      assignment[i] = c;
    });
    chosen.medoids.forEach((medoid, c) => (assignment[medoid] = c));
    const coverage = Object.fromEntries(
      runs.map((run) => {
        const reached = new Set<number>();
        unique.forEach((u, i) => u.run === run && reached.add(assignment[i]));
        return [run, reached.size / chosen.k];
      }),
    );
    repetitions.push({ ...chosen, assignment, coverage });
  }
  const shown = repetitions.reduce((b, rep, i) => (rep.silhouette > repetitions[b].silhouette + 1e-12 ? i : b), 0);
  const view = repetitions[shown];
  const projection = pcaProjection(vectors, dimensions);
  return {
    ...base,
    clustering: {
      algorithm,
      kRange: [config.kMin, kMax],
      repetitions: config.repetitions,
      seed: config.seed,
      sampled: Math.min(m, config.sampleSize),
      runs: repetitions.map((rep) => ({ k: rep.k, silhouette: rep.silhouette })),
      shown,
    },
    coverage: Object.fromEntries(
      runs.map((run) => {
        const values = repetitions.map((rep) => rep.coverage[run]);
        return [run, { mean: mean(values), std: std(values), values }];
      }),
    ),
    clusters: view.medoids.map((medoid, id) => {
      const perRun: Record<string, number> = {};
      let size = 0;
      unique.forEach((u, i) => {
        if (view.assignment[i] !== id) return;
        size++;
        perRun[u.run] = (perRun[u.run] ?? 0) + 1;
      });
      return { id, size, perRun, medoid: unique[medoid].key, example: unique[medoid].text };
    }),
    conversations: unique.map((u, i) => ({ key: u.key, run: u.run, text: u.text, x: projection[i].x, y: projection[i].y, cluster: view.assignment[i] })),
  };
}

/**
 * Collects a run's conversations of both populations (failing ones and those with findings, src/analysis/verdict.ts)
 * as rendered text in one pass over the store, rendering each conversation once for both; `finish` runs the analysis
 * of each. When both populations hold the same conversations (under the lab gate every conversation with a finding
 * fails) the second analysis would repeat the first on the same input (the embedder fitted on it, every choice
 * seeded): its section is the first one's, under its own population name.
 */
export function diversityCollector(run: string) {
  const items: Record<DiversityPopulation, DiversityItem[]> = { failing: [], findings: [] };
  return {
    add(result: ConversationResult, combined = combinedVerdict(result)) {
      let item: DiversityItem | null = null;
      for (const population of DiversityPopulationSchema.options) {
        if (!inPopulation(result, population, combined)) continue;
        item ??= { key: result.spec.key, run, text: renderConversation(result) };
        items[population].push(item);
      }
    },
    async finish(embedder: Embedder, config: DiversityConfig = DEFAULT_DIVERSITY_CONFIG): Promise<Record<DiversityPopulation, DiversitySection>> {
      const failing = await analyseDiversity(items.failing, embedder, config, 'failing');
      const same = items.findings.length === items.failing.length && items.findings.every((item, i) => item === items.failing[i]);
      const findings = same ? { ...failing, population: 'findings' as const } : await analyseDiversity(items.findings, embedder, config, 'findings');
      return { failing, findings };
    },
  };
}

export const DiversityComparisonSchema = z.object({
  population: DiversityPopulationSchema.default('failing'),
  embedder: z.string(),
  /** the embedders the two runs' own analyses used, when they differ from the comparison's */
  note: z.string().nullable(),
  uniqueA: z.number().int(),
  uniqueB: z.number().int(),
  /** unique failing conversations of A / those of B (STELLAR: guided 2,394 vs baseline 1,084 = 2.21×); null when B has none */
  uniqueRatio: z.number().nullable(),
  duplicateShareA: z.number().nullable(),
  duplicateShareB: z.number().nullable(),
  /** k-medoids over the union of both runs' unique failing conversations, and the share of those clusters each side reaches */
  union: DiversitySectionSchema.omit({ conversations: true }),
  coverageA: MeanStdSchema,
  coverageB: MeanStdSchema,
});
export type DiversityComparison = z.infer<typeof DiversityComparisonSchema>;

/**
 * Guided vs baseline (any A vs B): the ratio of unique failing conversations (each run's own
 * deduplication) and the coverage of the clusters of the union of both runs' unique failing
 * conversations, clustered together with the same settings.
 */
export async function compareDiversity(a: DiversitySection, b: DiversitySection, embedder: Embedder, config: DiversityConfig = DEFAULT_DIVERSITY_CONFIG): Promise<DiversityComparison> {
  const sideItems = (section: DiversitySection, side: 'A' | 'B') => section.conversations.map((c) => ({ key: c.key, run: side, text: c.text }));
  const union = await analyseDiversity([...sideItems(a, 'A'), ...sideItems(b, 'B')], embedder, config, a.population);
  const total = (s: DiversitySection) => Object.values(s.unique).reduce((x, y) => x + y, 0);
  const share = (s: DiversitySection) => (s.failing === 0 ? null : s.duplicates.length / s.failing);
  const differing = [a.embedder, b.embedder].filter((d) => d !== embedder.describe);
  const { conversations: _dropped, ...unionWithoutTexts } = union;
  return {
    population: a.population,
    embedder: embedder.describe,
    note: differing.length ? `the runs' own analyses used ${[...new Set(differing)].join(' / ')}; the union is embedded again with ${embedder.describe}` : null,
    uniqueA: total(a),
    uniqueB: total(b),
    uniqueRatio: total(b) === 0 ? null : total(a) / total(b),
    duplicateShareA: share(a),
    duplicateShareB: share(b),
    union: unionWithoutTexts,
    coverageA: union.coverage.A ?? { mean: 0, std: 0, values: [] },
    coverageB: union.coverage.B ?? { mean: 0, std: 0, values: [] },
  };
}
