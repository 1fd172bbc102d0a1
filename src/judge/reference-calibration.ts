import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Embedder } from '../embedding/index.ts';
import { compareWithReference, type ReferenceDecision } from './reference.ts';

/**
 * Calibration of the reference comparison (docs/reference-judging.md): a labelled set of (reply, reference,
 * equivalent) pairs, the comparison's decisions on it at candidate similarity thresholds, and the figures those
 * decisions give. `npm run bench:reference` (scripts/calibrate-reference.ts) prints them and picks the threshold.
 */

export const CalibrationPairSchema = z.strictObject({
  id: z.string().min(1),
  /** navigation, poi, weather, schedule, climate, media, courtesy */
  domain: z.string().min(1),
  /** what the pair tests: paraphrase, number_change, place_swap, fallback, refusal_vs_action, … */
  kind: z.string().min(1),
  /** whether the reply says what the reference says (the human label) */
  equivalent: z.boolean(),
  reference: z.string().min(1),
  reply: z.string().min(1),
  note: z.string().default(''),
  /** where the reference came from: "kvret dev excerpt" or "written" */
  source: z.string().min(1),
});
export type CalibrationPair = z.infer<typeof CalibrationPairSchema>;

/** Reads a JSONL calibration set; a bad line is an error naming the file, the line and the field. */
export function loadCalibrationPairs(path: string): CalibrationPair[] {
  const pairs: CalibrationPair[] = [];
  const ids = new Set<string>();
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new Error(`${path}:${i + 1}: not JSON (${(error as Error).message})`);
      }
      const parsed = CalibrationPairSchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new Error(`${path}:${i + 1}: ${issue.path.join('.') || 'the line'}: ${issue.message} (expected an object with id, domain, kind, equivalent, reference, reply, note, source)`);
      }
      if (ids.has(parsed.data.id)) throw new Error(`${path}:${i + 1}: id "${parsed.data.id}" appears twice`);
      ids.add(parsed.data.id);
      pairs.push(parsed.data);
    });
  if (pairs.length === 0) throw new Error(`${path}: no pairs`);
  return pairs;
}

/** The comparison's decision on one pair, with the human label. */
export interface CalibrationOutcome {
  id: string;
  equivalent: boolean;
  decision: ReferenceDecision;
}

/** What the decisions at one threshold come to. Precision is null when nothing was decided that way. */
export interface CalibrationFigures {
  threshold: number;
  pairs: number;
  /** share of decided-equivalent pairs that are equivalent */
  equivalentPrecision: number | null;
  /** share of equivalent pairs decided equivalent */
  equivalentRecall: number;
  /** share of decided-contradicting pairs that are not equivalent */
  contradictionPrecision: number | null;
  /** share of non-equivalent pairs decided contradicting */
  contradictionRecall: number;
  /** share of all pairs left undecided */
  undecidedShare: number;
  /** non-equivalent pairs decided equivalent: the error that would pass a wrong reply */
  falseEquivalent: number;
  /** equivalent pairs decided contradicting: the error that would label a right reply */
  falseContradiction: number;
}

export function calibrationFigures(threshold: number, outcomes: readonly CalibrationOutcome[]): CalibrationFigures {
  const count = (equivalent: boolean, decision: ReferenceDecision) => outcomes.filter((o) => o.equivalent === equivalent && o.decision === decision).length;
  const share = (n: number, of: number) => (of === 0 ? null : n / of);
  const equivalents = outcomes.filter((o) => o.equivalent).length;
  const others = outcomes.length - equivalents;
  const eqRight = count(true, 'equivalent');
  const eqWrong = count(false, 'equivalent');
  const contraRight = count(false, 'contradicts');
  const contraWrong = count(true, 'contradicts');
  return {
    threshold,
    pairs: outcomes.length,
    equivalentPrecision: share(eqRight, eqRight + eqWrong),
    equivalentRecall: share(eqRight, equivalents) ?? 0,
    contradictionPrecision: share(contraRight, contraRight + contraWrong),
    contradictionRecall: share(contraRight, others) ?? 0,
    undecidedShare: share(outcomes.filter((o) => o.decision === 'undecided').length, outcomes.length) ?? 0,
    falseEquivalent: eqWrong,
    falseContradiction: contraWrong,
  };
}

/** The comparison's decisions on every pair at one threshold. */
export async function calibrationOutcomes(pairs: readonly CalibrationPair[], embedder: Embedder, threshold: number): Promise<CalibrationOutcome[]> {
  const outcomes: CalibrationOutcome[] = [];
  for (const pair of pairs) {
    const { decision } = await compareWithReference({ text: pair.reply, actions: [] }, pair.reference, embedder, threshold);
    outcomes.push({ id: pair.id, equivalent: pair.equivalent, decision });
  }
  return outcomes;
}

/**
 * The threshold to use: the lowest candidate whose equivalent precision reaches `targetPrecision` (an
 * "equivalent" is a pass, so it must be near certain; the lowest such threshold decides the most pairs). When
 * none reaches it, the candidate with the highest equivalent precision (the lowest of ties).
 */
export function pickThreshold(figures: readonly CalibrationFigures[], targetPrecision: number): { figures: CalibrationFigures; reached: boolean } {
  if (figures.length === 0) throw new Error('pickThreshold: no candidate thresholds');
  const sorted = [...figures].sort((a, b) => a.threshold - b.threshold);
  const reaching = sorted.find((f) => (f.equivalentPrecision ?? 0) >= targetPrecision);
  if (reaching) return { figures: reaching, reached: true };
  const best = sorted.reduce((a, b) => ((b.equivalentPrecision ?? 0) > (a.equivalentPrecision ?? 0) ? b : a));
  return { figures: best, reached: false };
}
