import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyseDiversity, compareDiversity, DiversityConfigSchema, DiversitySectionSchema, diversityCollector, renderConversation, type DiversityItem } from '../../src/analysis/diversity.ts';
import { combinedVerdict } from '../../src/analysis/verdict.ts';
import { OnnxSentenceEmbedder, TfidfEmbedder } from '../../src/embedding/index.ts';
import { runMany } from '../kinds/dialogue/helpers.ts';
import { diversitySection } from '../../src/report/diversity-section.ts';
import { writeTinySentenceModel } from '../helpers/tinyOnnx.ts';

/** Three failure families; within a family the texts differ by one word, across families they share nothing. */
const FAMILIES = [
  ['navigation route munich airport detour', 'ignored', 'hallucinated_information'],
  ['play jazz radio volume louder speakers', 'wrong song', 'task_not_executed'],
  ['heating seat temperature warmer cabin climate', 'set fan', 'wrong_parameter'],
];
function item(run: string, family: number, variant: number): DiversityItem {
  const [request, reply, label] = FAMILIES[family];
  return { key: `${run}-${family}-${variant}`, run, text: `user: ${request} ${[1, 2, 3, 4].map((w) => `v${variant}w${w}`).join(' ')}\nassistant: ${reply}\nlabels: ${label}` };
}

describe('diversity analysis: unique failing conversations, k-medoids coverage, projection', () => {
  it('renders a failing conversation as user turns, replies and the deciding labels', async () => {
    const results = await runMany(12, { profiles: 'all', rate: 0.8, seed: 3 });
    const failing = results.find((r) => combinedVerdict(r).outcome === 'fail')!;
    const text = renderConversation(failing);
    const lines = text.split('\n');
    expect(lines[0]).toBe(`user: ${failing.turns[0].utterance.text}`);
    expect(lines[1]).toBe(`assistant: ${failing.turns[0].reply!.text.trim() || '(no reply)'}`);
    expect(lines.filter((l) => l.startsWith('user: '))).toHaveLength(failing.turns.length);
    expect(text).toMatch(/^labels: [a-z_]+(, [a-z_]+)*$/m);
  }, 60_000);

  it('deduplicates at the threshold, lists each duplicate with its nearest twin, and finds the three families', async () => {
    // run A: 4 variants of each family; exact repeats of A-0-0 and A-2-1 are duplicates
    const items = [...[0, 1, 2].flatMap((f) => [0, 1, 2, 3].map((v) => item('A', f, v))), { ...item('A', 0, 0), key: 'A-dup-1' }, { ...item('A', 2, 1), key: 'A-dup-2' }];
    const section = DiversitySectionSchema.parse(await analyseDiversity(items, new TfidfEmbedder(), DiversityConfigSchema.parse({ kMax: 6 })));
    expect(section.embedderKind).toBe('tfidf');
    expect(section.embedder).toMatch(/lexical TF-IDF fallback/);
    expect(section.failing).toBe(14);
    expect(section.unique).toEqual({ A: 12 });
    expect(section.duplicates.map((d) => [d.key, d.twin])).toEqual([
      ['A-dup-1', 'A-0-0'],
      ['A-dup-2', 'A-2-1'],
    ]);
    expect(section.duplicates[0].similarity).toBeCloseTo(1, 6);
    // every repetition picks k = 3 and clusters by family
    expect(section.clustering.runs.map((r) => r.k)).toEqual(new Array(10).fill(3));
    const clusterOf = new Map(section.conversations.map((c) => [c.key, c.cluster]));
    for (const f of [0, 1, 2]) expect(new Set([0, 1, 2, 3].map((v) => clusterOf.get(`A-${f}-${v}`))).size).toBe(1);
    expect(new Set(clusterOf.values()).size).toBe(3);
    expect(section.clusters.map((c) => c.size)).toEqual([4, 4, 4]);
    for (const cluster of section.clusters) expect(section.conversations.find((c) => c.key === cluster.medoid)!.cluster).toBe(cluster.id);
    expect(section.coverage.A).toMatchObject({ mean: 1, std: 0 });
    // a stricter threshold keeps near-duplicates apart; a looser one folds the variants of a family together
    const loose = await analyseDiversity(items, new TfidfEmbedder(), DiversityConfigSchema.parse({ threshold: 0.3, kMax: 6 }));
    expect(loose.unique.A).toBe(3);
  });

  it('is reproducible: the same items and seed give the same section, twice', async () => {
    const items = [0, 1, 2].flatMap((f) => [0, 1, 2, 3, 4].map((v) => item(v % 2 ? 'A' : 'B', f, v)));
    const config = DiversityConfigSchema.parse({ kMax: 8, seed: 5 });
    const first = await analyseDiversity(items, new TfidfEmbedder(), config);
    const second = await analyseDiversity(items, new TfidfEmbedder(), config);
    expect(second).toEqual(first);
  });

  it('samples above sampleSize (seeded) and still assigns every conversation to a cluster', async () => {
    const items = [0, 1, 2].flatMap((f) => Array.from({ length: 12 }, (_, v) => item('A', f, v)));
    const config = DiversityConfigSchema.parse({ sampleSize: 10, kMax: 5 });
    const section = await analyseDiversity(items, new TfidfEmbedder(), config);
    expect(section.clustering.sampled).toBe(10);
    expect(section.conversations).toHaveLength(36);
    expect(section.conversations.every((c) => c.cluster >= 0 && c.cluster < section.clusters.length)).toBe(true);
    expect(await analyseDiversity(items, new TfidfEmbedder(), config)).toEqual(section);
  });

  it('compare: unique ratio from each run, coverage of the union clusters (A reaches all three families, B one)', async () => {
    const runA = [0, 1, 2].flatMap((f) => [0, 1, 2].map((v) => item('guided', f, v)));
    const runB = [...[5, 6, 7].map((v) => item('baseline', 1, v)), { ...item('baseline', 1, 5), key: 'baseline-dup' }];
    const config = DiversityConfigSchema.parse({ kMax: 5 });
    const a = await analyseDiversity(runA, new TfidfEmbedder(), config);
    const b = await analyseDiversity(runB, new TfidfEmbedder(), config);
    const comparison = await compareDiversity(a, b, new TfidfEmbedder(), config);
    expect(comparison.uniqueA).toBe(9);
    expect(comparison.uniqueB).toBe(3);
    expect(comparison.uniqueRatio).toBe(3);
    expect(comparison.duplicateShareA).toBe(0);
    expect(comparison.duplicateShareB).toBe(0.25);
    expect(comparison.union.clustering.runs.every((r) => r.k === 3)).toBe(true);
    expect(comparison.coverageA).toMatchObject({ mean: 1, std: 0 });
    expect(comparison.coverageB.mean).toBeCloseTo(1 / 3, 10);
    expect(comparison.note).toBeNull();
  });

  it('runs on the ONNX sentence embedder (generated tiny model), labelled as such', async () => {
    const model = writeTinySentenceModel(join(mkdtempSync(join(tmpdir(), 'onnx-')), 'tiny-minilm'), 6);
    const embedder = await OnnxSentenceEmbedder.load({ model: model.dir });
    try {
      const texts = ['the radar sensor is dirty', 'the radar sensor is dirty', 'wash car', 'brake lights on', 'clean car', 'warning brake lights'];
      const section = await analyseDiversity(texts.map((text, i) => ({ key: `k${i}`, run: 'A', text })), embedder, DiversityConfigSchema.parse({ kMax: 3 }));
      expect(section.embedderKind).toBe('onnx');
      expect(section.embedder).toMatch(/^onnx sentence embeddings tiny-minilm/);
      expect(section.duplicates[0]).toMatchObject({ key: 'k1', twin: 'k0' });
      expect(section.unique.A).toBeLessThanOrEqual(5);
      expect(await analyseDiversity(texts.map((text, i) => ({ key: `k${i}`, run: 'A', text })), embedder, DiversityConfigSchema.parse({ kMax: 3 }))).toEqual(section);
    } finally {
      await embedder.close();
    }
  });

  it('the collector keeps the failing conversations and those with findings; too few to cluster gives one cluster per conversation', async () => {
    const results = await runMany(6, { profiles: 'all', rate: 0.8, seed: 3 });
    const collector = diversityCollector('run-1');
    for (const r of results) collector.add(r);
    const { failing: section, findings } = await collector.finish(new TfidfEmbedder());
    expect(section.failing).toBe(results.filter((r) => combinedVerdict(r).outcome === 'fail').length);
    expect(findings.failing).toBe(results.filter((r) => r.status === 'completed' && combinedVerdict(r).findings.length > 0).length);
    expect(findings.population).toBe('findings');
    expect(section.failing).toBeGreaterThan(0);
    expect(Object.keys(section.unique)).toEqual(['run-1']);
  }, 60_000);

  it('the report section escapes what the head unit said, plots every unique conversation and names the medoids', async () => {
    const items = [0, 1, 2].flatMap((f) => [0, 1, 2].map((v) => item('A', f, v)));
    items[0] = { ...items[0], text: `${items[0].text}\nassistant: <script>alert(1)</script>` };
    const section = await analyseDiversity(items, new TfidfEmbedder(), DiversityConfigSchema.parse({ kMax: 4 }));
    const { title, html } = diversitySection(section);
    expect(title).toBe('Failure diversity');
    expect(html).not.toContain('<script>');
    expect(html.match(/<circle /g)).toHaveLength(2 * section.conversations.length);
    for (const cluster of section.clusters) expect(html).toContain(cluster.medoid);
    expect(html).toContain('lexical TF-IDF fallback');
    expect(html).toContain('a run reaches all of its own clusters');
  });

  it('rejects bad settings with the field named', () => {
    expect(() => DiversityConfigSchema.parse({ threshold: 1.2 })).toThrow(/threshold/);
    expect(() => DiversityConfigSchema.parse({ kMin: 9, kMax: 3 })).toThrow(/kMin must not exceed kMax/);
    expect(() => DiversityConfigSchema.parse({ treshold: 0.7 })).toThrow(/treshold/);
  });
});
