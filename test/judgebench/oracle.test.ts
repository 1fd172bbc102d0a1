import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readDataset, withoutPreferences } from '../../src/judgebench/dataset.ts';
import { generateDataset } from '../../src/judgebench/generator.ts';
import { oracleVerdict } from '../../src/judgebench/oracle.ts';
import { oracleConfiguration, runConfiguration, summarize } from '../../src/judgebench/runner.ts';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('rule oracle', () => {
  it('scores F1 = 1.0 on a generated 600-pair set', async () => {
    const pairs = generateDataset({ seed: 2024 });
    const oracle = oracleConfiguration();
    const summary = summarize(oracle, await runConfiguration(oracle, pairs));
    expect(summary.pairs).toBe(600);
    expect(summary.f1).toBe(1);
    expect(summary.precision).toBe(1);
    expect(summary.recall).toBe(1);
    expect(Object.values(summary.perCategoryAccuracy).every((a) => a === 1)).toBe(true);
  });

  it('scores F1 = 1.0 on hand-written documented-format edge cases that carry preferences', async () => {
    const pairs = readDataset(fixture('edge-cases.jsonl'));
    for (const pair of pairs) expect({ id: pair.id, fits: oracleVerdict(pair).fits }).toEqual({ id: pair.id, fits: pair.label });
    const oracle = oracleConfiguration();
    expect(summarize(oracle, await runConfiguration(oracle, pairs)).f1).toBe(1);
  });

  it('reads the generated utterances on its own when the preferences are absent', async () => {
    const pairs = withoutPreferences(generateDataset({ seed: 7, users: 30 }));
    const oracle = oracleConfiguration();
    const summary = summarize(oracle, await runConfiguration(oracle, pairs));
    expect(summary.f1).toBe(1);
    expect(pairs.every((p) => oracleVerdict(p).source === 'utterance')).toBe(true);
  });

  it('reports per-category figures on utterance-only sets with unknown paraphrases instead of hiding misses', async () => {
    const pairs = readDataset(fixture('utterance-paraphrases.jsonl'));
    const oracle = oracleConfiguration();
    const summary = summarize(oracle, await runConfiguration(oracle, pairs));
    // each of cuisine, cost and rating has one pair phrased outside the lexicon: that rule goes unchecked and the error is missed
    expect(summary.perCategoryAccuracy).toEqual({ none: 1, location: 1, time: 1, cuisine: 0.5, cost: 0.5, rating: 0.5 });
    expect(summary.perCategory.cuisine.recall).toBe(0.5);
    expect(summary.recall).toBeCloseTo(5 / 8, 12);
    expect(summary.precision).toBe(1);
    expect(oracleVerdict(pairs.find((p) => p.id === 'p3')!).unchecked).toEqual(['cuisine']);
  });
});
