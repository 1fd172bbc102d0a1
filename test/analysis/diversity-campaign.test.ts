import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiversitySectionSchema } from '../../src/analysis/diversity.ts';
import { RunComparisonSchema } from '../../src/analysis/compare.ts';
import { writeTinySentenceModel } from '../helpers/tinyOnnx.ts';

const CLI = resolve('bin/icabench.js');
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

/** paper-guided / paper-baseline with fewer conversations, written to a temp folder (the seed pool by absolute path). */
function paperConfig(dir: string, name: 'paper-guided' | 'paper-baseline', conversations: number): string {
  const path = join(dir, `${name}.yaml`);
  const text = readFileSync(`bench-configs/${name}.yaml`, 'utf8')
    .replace('seeds: seeds/in-car.yaml', `seeds: ${resolve('bench-configs/seeds/in-car.yaml')}`)
    .replace(/^conversations: \d+$/m, `conversations: ${conversations}`);
  writeFileSync(path, text);
  return path;
}

describe('failure diversity of paper-guided vs paper-baseline: summary.json, report.html, icabench compare', () => {
  it('reports unique failing conversations and coverage (lexical embedder, labelled), reproducibly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-diversity-'));
    for (const name of ['paper-guided', 'paper-baseline'] as const) {
      const result = run(['run', paperConfig(dir, name, 60), '--out', join(dir, name), '--workspace', join(dir, 'ws'), '--no-progress']);
      expect(result.status, result.stderr).toBe(0);
    }
    const guided = JSON.parse(readFileSync(join(dir, 'paper-guided', 'summary.json'), 'utf8'));
    const diversity = DiversitySectionSchema.parse(guided.diversity);
    expect(diversity.embedderKind).toBe('tfidf');
    expect(diversity.failing).toBe(guided.failed);
    expect(diversity.unique['paper-guided'] + diversity.duplicates.length).toBe(diversity.failing);
    expect(diversity.clustering.runs).toHaveLength(10);
    expect(diversity.clusters.reduce((n, c) => n + c.size, 0)).toBe(diversity.unique['paper-guided']);
    const html = readFileSync(join(dir, 'paper-guided', 'report.html'), 'utf8');
    expect(html).toContain('<h2>Failure diversity</h2>');
    expect(html).toContain('lexical TF-IDF fallback');
    expect(html).toMatch(/<svg role="img" aria-label="PCA projection of the unique failing conversations, coloured by cluster"/);
    // the same analysis over every conversation with findings, whatever its verdict (paper-* judge by C alone)
    const findings = DiversitySectionSchema.parse(guided.findingsDiversity);
    expect(findings.population).toBe('findings');
    expect(findings.failing).toBe(guided.conversationsWithFindings);
    expect(findings.failing).toBeGreaterThan(diversity.failing);
    expect(findings.unique['paper-guided'] + findings.duplicates.length).toBe(findings.failing);
    expect(html).toContain('<h2>Failure diversity over conversations with findings</h2>');
    const baseline = JSON.parse(readFileSync(join(dir, 'paper-baseline', 'summary.json'), 'utf8'));
    // the baseline hardly fails by C, but its findings are there to count
    expect(baseline.findingsDiversity.failing).toBe(baseline.conversationsWithFindings);
    expect(baseline.findingsDiversity.failing).toBeGreaterThan(baseline.diversity.failing);

    const compared = run(['compare', join(dir, 'paper-guided'), join(dir, 'paper-baseline'), '--out', join(dir, 'cmp')]);
    expect(compared.status, compared.stderr).toBe(0);
    expect(compared.stdout).toMatch(/unique failing conversations: A \d+, B \d+, ratio A\/B/);
    expect(compared.stdout).toMatch(/coverage of the union's failure clusters: A \d+\.\d% ± \d+\.\d%, B \d+\.\d% ± \d+\.\d% \(lexical TF-IDF fallback/);
    expect(compared.stdout).toMatch(/unique conversations with findings: A \d+, B \d+, ratio A\/B/);
    expect(compared.stdout).toMatch(/coverage of the union's clusters of conversations with findings: A \d+\.\d% ± \d+\.\d%, B \d+\.\d% ± \d+\.\d%/);
    const comparison = RunComparisonSchema.parse(JSON.parse(readFileSync(join(dir, 'cmp', 'comparison.json'), 'utf8')));
    expect(comparison.diversity!.uniqueA).toBe(diversity.unique['paper-guided']);
    expect(comparison.diversity!.coverageA.mean).toBeGreaterThan(comparison.diversity!.coverageB.mean);
    expect(comparison.findingsDiversity).toMatchObject({ population: 'findings', uniqueA: findings.unique['paper-guided'], uniqueB: baseline.findingsDiversity.unique['paper-baseline'] });
    expect(readFileSync(join(dir, 'cmp', 'comparison.html'), 'utf8')).toContain('coverage of the union clusters');

    // the same config again: the same diversity section (seeded)
    const again = run(['run', paperConfig(dir, 'paper-guided', 60), '--out', join(dir, 'again'), '--workspace', join(dir, 'ws-again'), '--no-progress']);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'again', 'summary.json'), 'utf8')).diversity).toEqual(guided.diversity);
    const comparedAgain = run(['compare', join(dir, 'again'), join(dir, 'paper-baseline'), '--json']);
    expect(JSON.parse(comparedAgain.stdout).diversity).toEqual(comparison.diversity);
  }, 180_000); // three 60-conversation campaigns with a drive in child processes on a loaded machine

  it('uses the ONNX sentence model named in diversity.embeddingModel; a missing one is reported with the fix and the labelled fallback runs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-diversity-onnx-'));
    const model = writeTinySentenceModel(join(dir, 'tiny-minilm'), 8);
    const config = (embeddingModel: string, name: string) => {
      const path = join(dir, `${name}.yaml`);
      writeFileSync(path, readFileSync(paperConfig(dir, 'paper-guided', 20), 'utf8') + `diversity: { embeddingModel: ${JSON.stringify(embeddingModel)}, kMax: 4 }\n`);
      return path;
    };
    const onnx = run(['run', config(model.dir, 'onnx'), '--out', join(dir, 'onnx'), '--workspace', join(dir, 'ws'), '--no-progress']);
    expect(onnx.status, onnx.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'onnx', 'summary.json'), 'utf8'));
    expect(summary.diversity.embedderKind).toBe('onnx');
    expect(summary.diversity.embedder).toMatch(/^onnx sentence embeddings tiny-minilm/);
    expect(summary.diversity.clustering.kRange[1]).toBeLessThanOrEqual(4);
    const missing = run(['run', config(join(dir, 'nowhere'), 'missing'), '--out', join(dir, 'missing'), '--workspace', join(dir, 'ws2'), '--no-progress']);
    expect(missing.status, missing.stderr).toBe(0);
    expect(missing.stderr).toMatch(/embeddings: sentence-embedding model not found at .*nowhere.*Fix: .*Using the lexical TF-IDF fallback/);
    expect(JSON.parse(readFileSync(join(dir, 'missing', 'summary.json'), 'utf8')).diversity.embedderKind).toBe('tfidf');
    // compare with the ONNX model: the union is embedded with it, and the note says the runs' own analyses differed
    const compared = run(['compare', join(dir, 'onnx'), join(dir, 'missing'), '--json', '--embedding-model', model.dir]);
    expect(compared.status, compared.stderr).toBe(0);
    const diversity = JSON.parse(compared.stdout).diversity;
    expect(diversity.embedder).toMatch(/^onnx sentence embeddings tiny-minilm/);
    expect(diversity.union.embedderKind).toBe('onnx');
    expect(diversity.note).toMatch(/the runs' own analyses used lexical TF-IDF fallback/);
    expect(diversity.coverageA.values).toHaveLength(diversity.union.clustering.repetitions);
  }, 120_000);
});
