/**
 * Failure-diversity figures (npm run bench:diversity): the whole analysis of src/analysis/diversity.ts
 * (lexical TF-IDF embedding, deduplication, k-medoids at the silhouette-selected k over 10 seeded
 * repetitions, PCA projection) on synthetic failing conversations rendered like real ones, at
 * 1,000 and 10,000 conversations, with the time of each step measured on its own and the peak RSS.
 */
import { analyseDiversity, DEFAULT_DIVERSITY_CONFIG, type DiversityItem } from '../src/analysis/diversity.ts';
import { kMedoids, silhouetteScore } from '../src/analysis/kmedoids.ts';
import { pcaProjection, toSparse } from '../src/analysis/projection.ts';
import { FAILURE_LABELS } from '../src/domain/taxonomy.ts';
import { TfidfEmbedder } from '../src/embedding/index.ts';
import { createRng } from '../src/domain/rng.ts';

const REQUESTS = [
  'find an italian restaurant near the station that is open after ten',
  'navigate to the airport but avoid the motorway please',
  'play some jazz on the radio and turn it up',
  'set the temperature to twenty one degrees on my side',
  'plan a stop at a charging station and then a bakery on the way home',
  'show me the video my friend sent while I drive',
  'read out my last five messages in full',
  'turn off lane keeping assist for the next hour',
  'remind me where we were going before the detour',
  'is the pharmacy on the market square open on sunday',
  'book a table for four at the steak house at eight',
  'how far is the next rest area with a playground',
];
const REPLIES = [
  'Here are three restaurants nearby.',
  'Sorry, I cannot help with that.',
  'Starting route guidance now.',
  'Playing your video.',
  'I have set the temperature.',
  'Which one do you mean?',
  'The pharmacy is closed.',
  'Here is the weather for today.',
];

/** `n` failing conversations of 3–8 turns, from a fixed seed: requests and replies mixed with filler words. */
function synthetic(n: number, seed: number): DiversityItem[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => {
    const turns = rng.int(3, 8);
    const lines: string[] = [];
    for (let t = 0; t < turns; t++) {
      lines.push(`user: ${rng.pick(REQUESTS)} ${rng.pick(['now', 'please', 'quickly', 'again', 'too', 'then'])} ${rng.int(1, 60)} minutes`);
      lines.push(`assistant: ${rng.pick(REPLIES)}`);
      if (rng.chance(0.5)) lines.push(`labels: ${rng.pick(FAILURE_LABELS)}`);
    }
    return { key: `conv-${i}`, run: i % 2 ? 'guided' : 'baseline', text: lines.join('\n') };
  });
}

/** Wall time and this process's CPU time (the machine is shared: wall time includes waiting for a core). */
async function timed<T>(label: string, run: () => Promise<T> | T): Promise<T> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const value = await run();
  const used = process.cpuUsage(cpu);
  console.log(`${label.padEnd(70)} ${(performance.now() - started).toFixed(0).padStart(8)} ms wall ${((used.user + used.system) / 1000).toFixed(0).padStart(8)} ms CPU`);
  return value;
}

let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
for (const n of [1_000, 10_000]) {
  const items = synthetic(n, 7);
  const embedder = new TfidfEmbedder();
  const vectors = await timed(`${n} conversations: TF-IDF embedding`, () => embedder.embed(items.map((i) => i.text)));
  const sparse = vectors.map(toSparse);
  await timed(`${n} conversations: PCA projection`, () => pcaProjection(sparse, vectors[0].length));
  const section = await timed(`${n} conversations: whole analysis (default settings, 10 repetitions)`, () => analyseDiversity(items, new TfidfEmbedder(), DEFAULT_DIVERSITY_CONFIG));
  const dup = section.duplicates.length;
  console.log(
    `  failing ${section.failing}, unique ${Object.values(section.unique).reduce((a, b) => a + b, 0)} (duplicates ${dup}), k per repetition ${section.clustering.runs.map((r) => r.k).join(',')}, ` +
      `sample ${section.clustering.sampled}, coverage ${Object.entries(section.coverage).map(([r, c]) => `${r} ${(c.mean * 100).toFixed(1)}% ± ${(c.std * 100).toFixed(1)}%`).join(', ')}`,
  );
}
// one k-medoids run and one silhouette on a 1,000-point distance matrix (the per-repetition sample), for scale
{
  const n = 1000;
  const rng = createRng(3);
  const points = Array.from({ length: n }, () => [rng.next(), rng.next()]);
  const data = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) data[i * n + j] = Math.hypot(points[i][0] - points[j][0], points[i][1] - points[j][1]);
  const matrix = { n, data };
  const result = await timed('k-medoids (FasterPAM), k = 12, 1,000 points', () => kMedoids(matrix, 12, createRng(1)));
  await timed('silhouette, k = 12, 1,000 points', () => silhouetteScore(matrix, result.assignment, 12));
}
clearInterval(sampler);
console.log(`peak RSS ${(Math.max(peak, process.memoryUsage().rss) / 2 ** 20).toFixed(0)} MiB`);
