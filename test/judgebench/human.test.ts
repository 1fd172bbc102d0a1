import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cohensKappa, fleissKappa, categoryCounts, lightsKappa, majorityScore } from '../../src/domain/stats.ts';
import { parseCsv } from '../../src/domain/csv.ts';
import { humanAgreementStudy, parseRatings, type RatingRow } from '../../src/judgebench/human.ts';
import { dataPath } from '../helpers/repoData.ts';

describe('ratings import', () => {
  it('parses RFC 4180 CSV with quoted commas, quotes and line breaks', () => {
    const rows = parseCsv('a,b\r\n"x, y","say ""hi"""\n"two\nlines",3\n');
    expect(rows).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['x, y', 'say "hi"'] },
      { line: 3, fields: ['two\nlines', '3'] },
    ]);
  });

  it('reads CSV and JSON ratings with pass/fail, and names the line of a bad row', () => {
    const csv = 'rater,conversation,dimension,score,pass\nann,c1,overall,2,pass\nbob,c1,overall,1,fail\n';
    expect(parseRatings(csv, 'r.csv')).toEqual([
      { rater: 'ann', conversation: 'c1', dimension: 'overall', score: 2, pass: true },
      { rater: 'bob', conversation: 'c1', dimension: 'overall', score: 1, pass: false },
    ]);
    const json = JSON.stringify([{ rater: 'ann', conversation: 'c1', dimension: 'overall', score: 2, extra: 1 }]);
    expect(parseRatings(json, 'r.json')).toEqual([{ rater: 'ann', conversation: 'c1', dimension: 'overall', score: 2 }]);
    expect(() => parseRatings('conversation,dimension,score\nc1,overall,good\n', 'bad.csv')).toThrow(/bad\.csv:2: score/);
    expect(() => parseRatings('rater,score\nann,1\n', 'cols.csv')).toThrow(/cols\.csv:1: missing column "conversation"/);
    expect(() => parseRatings('[{"conversation": "c"}]', 'j.json')).toThrow(/j\.json\[0\]: dimension/);
  });
});

// FED (Mehri & Eskenazi 2020): 5 ratings per item; we treat the 5 positions as raters r1..r5.
const fed = JSON.parse(readFileSync(dataPath('fed/fed_data.json'), 'utf8')) as Array<{
  annotations: Record<string, unknown[]>;
}>;

describe('human-agreement study (Table III) on FED ratings', () => {
  const dimensions = ['Interesting', 'Engaging'];
  const humans: RatingRow[] = [];
  const judge: RatingRow[] = [];
  const majorities = new Map<string, number>();
  fed.forEach((item, i) => {
    for (const dimension of dimensions) {
      const scores = item.annotations[dimension];
      if (!Array.isArray(scores) || scores.length !== 5 || !scores.every((s) => typeof s === 'number')) continue;
      scores.forEach((score, r) => humans.push({ rater: `r${r + 1}`, conversation: `fed-${i}`, dimension, score: score as number }));
      // a judge that agrees with the human majority except on every 4th item, where it is one point lower
      const majority = majorityScore(scores as number[]);
      majorities.set(`${dimension}/fed-${i}`, majority);
      judge.push({ rater: 'judge', conversation: `fed-${i}`, dimension, score: i % 4 === 0 ? Math.max(0, majority - 1) : majority });
    }
  });

  it('reports κ, ρ, F1, exact and within-one per dimension, with the human baseline', () => {
    const study = humanAgreementStudy(humans, judge, { scale: [0, 1, 2] });
    expect(study.map((d) => d.dimension)).toEqual([...dimensions].sort());
    for (const d of study) {
      expect(d.items).toBeGreaterThan(300);
      expect(d.raters).toBe(5);
      const own = judge.filter((j) => j.dimension === d.dimension);
      const same = own.filter((j) => j.score === majorities.get(`${d.dimension}/${j.conversation}`)).length;
      expect(d.withinOne).toBe(1);
      expect(d.exact).toBeCloseTo(same / own.length, 12);
      expect(d.exact).toBeLessThan(1);
      expect(d.kappa).toBeGreaterThan(0.5);
      expect(d.kappa).toBeLessThan(1);
      expect(d.spearman).toBeGreaterThan(0.5);
      // the human baseline equals Light's κ over the five rater columns and Fleiss' κ over the items
      const rows = fed
        .map((item) => item.annotations[d.dimension])
        .filter((s): s is number[] => Array.isArray(s) && s.length === 5 && s.every((v) => typeof v === 'number'));
      const columns = [0, 1, 2, 3, 4].map((r) => rows.map((row) => row[r]));
      expect(d.humanLightsKappa).toBeCloseTo(lightsKappa(columns, { weights: 'quadratic', categories: [0, 1, 2] }), 12);
      expect(d.humanFleissKappa).toBeCloseTo(fleissKappa(categoryCounts(rows, [0, 1, 2])), 12);
      // the paper's RQ0 statistic (Negi et al.): the judge against each of the five raters, averaged over the pairs
      const judgeOf = new Map(own.map((j) => [j.conversation, j.score]));
      const pairKappas = ['r1', 'r2', 'r3', 'r4', 'r5'].map((rater) => {
        const rated = humans.filter((h) => h.dimension === d.dimension && h.rater === rater);
        return cohensKappa(rated.map((h) => judgeOf.get(h.conversation)!), rated.map((h) => h.score), { weights: 'quadratic', categories: [0, 1, 2] });
      });
      expect(d.pairMean).toMatchObject({ pairs: 5 });
      expect(d.pairMean!.kappa).toBeCloseTo(pairKappas.reduce((a, b) => a + b, 0) / 5, 10);
      expect(d.pairMean!.kappa).not.toBeCloseTo(d.kappa, 3);
    }
    expect(study.some((d) => d.pairMean !== null)).toBe(true);
  });

  it('uses explicit pass/fail when every rating carries it', () => {
    const h: RatingRow[] = [
      { rater: 'a', conversation: 'c1', dimension: 'overall', score: 2, pass: false },
      { rater: 'b', conversation: 'c1', dimension: 'overall', score: 2, pass: false },
      { rater: 'a', conversation: 'c2', dimension: 'overall', score: 0, pass: true },
      { rater: 'b', conversation: 'c2', dimension: 'overall', score: 1, pass: true },
    ];
    const j: RatingRow[] = [
      { rater: 'judge', conversation: 'c1', dimension: 'overall', score: 2, pass: false },
      { rater: 'judge', conversation: 'c2', dimension: 'overall', score: 0, pass: true },
    ];
    const [report] = humanAgreementStudy(h, j, { scale: [0, 1, 2] });
    // by score threshold c1 would pass and c2 fail; the explicit flags say the opposite and the judge matches them
    expect(report.passFail.f1).toBe(1);
    expect(report.passFail.truePositives).toBe(1);
    expect(report.exact).toBe(1);
  });
});
