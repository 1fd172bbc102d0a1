import { decidingConversationVerdict } from '../../judge/precedence.ts';
import { agreementReport, agreementShares, type AgreementOptions, type AgreementReport } from '../../domain/stats.ts';
import type { ConversationResult } from '../../domain/conversation.ts';
import { DIMENSIONS, type Dimension } from '../../domain/taxonomy.ts';
import type { Rating } from './ratings.ts';

const SCALE = [0, 1, 2];

/** One series of scores against another on one dimension (a rater pair's, and the start of the judge's). */
export interface PairDimensionAgreement {
  dimension: Dimension;
  /** conversations compared (the judge: those with a decisive judge score and at least one rating) */
  items: number;
  /** quadratic-weighted κ (the judge: against the per-conversation majority score) */
  kappa: number | null;
  /** Spearman ρ (the judge: against the mean rater score) */
  spearman: number | null;
  exact: number | null;
  withinOne: number | null;
}

export interface JudgeAgreement extends PairDimensionAgreement {
  /** the judge's pass/fail against the raters' majority vote (a tie counts as fail); positive class: fail */
  passFail: AgreementReport['passFail'] | null;
  /** mean pairwise weighted κ among raters, when the same raters rated every item */
  ratersLightsKappa: number | null;
  /** the paper's RQ0 statistic (Negi et al.): κ, ρ and exact agreement of the judge with each rater, averaged over the judge–rater pairs; null unless the same raters rated every item */
  pairMean: { kappa: number | null; spearman: number | null; exact: number | null; pairs: number } | null;
}

export interface RaterPairAgreement {
  a: string;
  b: string;
  items: number;
  dimensions: PairDimensionAgreement[];
  /** share of conversations where both raters reach the same pass/fail */
  passAgreement: number | null;
}

export interface AgreementView {
  raters: string[];
  ratedConversations: number;
  /** judge (deciding verdict) against the raters, per dimension; pass/fail F1 against the majority vote */
  judgeVsRaters: JudgeAgreement[];
  raterPairs: RaterPairAgreement[];
  /** Negi et al.'s single RQ0 figures: the judge–rater pair means and the rater pairs' κ, ρ, exact, each averaged over the dimensions */
  overall: { judge: MeanAgreement | null; raters: MeanAgreement | null };
}

/** κ, ρ and exact agreement averaged over what defines them (null: nothing does). */
export interface MeanAgreement {
  kappa: number | null;
  spearman: number | null;
  exact: number | null;
}

function meanAgreement(rows: readonly { kappa: number | null; spearman: number | null; exact: number | null }[]): MeanAgreement | null {
  if (rows.length === 0) return null;
  const meanOf = (xs: (number | null)[]) => {
    const defined = xs.filter((x): x is number => x !== null);
    return defined.length ? defined.reduce((a, b) => a + b, 0) / defined.length : null;
  };
  return { kappa: meanOf(rows.map((r) => r.kappa)), spearman: meanOf(rows.map((r) => r.spearman)), exact: meanOf(rows.map((r) => r.exact)) };
}

type Stats = Omit<JudgeAgreement, 'dimension'>;

/**
 * agreementReport (stats.ts) of one series of 0/1/2 scores against items rated by one or more
 * others, quadratic κ, fail as the positive class. A statistic these data do not define is null,
 * not a number: nothing without items, κ, ρ and Light's κ over a single item (agreementShares
 * gives the rest), ρ of a constant series.
 */
function agreement(first: number[], others: number[][], firstPass: boolean[], othersPass: boolean[][], ratersAligned: boolean): Stats {
  if (first.length === 0) return { items: 0, kappa: null, spearman: null, exact: null, withinOne: null, passFail: null, ratersLightsKappa: null, pairMean: null };
  const options: AgreementOptions = { weights: 'quadratic', scale: SCALE, positive: 'fail', judgePass: firstPass, humanPass: othersPass, ratersAligned };
  if (first.length === 1) return { ...agreementShares(first, others, options), kappa: null, spearman: null, ratersLightsKappa: null, pairMean: null };
  const report = agreementReport(first, others, options);
  const finite = (value: number | null) => (value !== null && Number.isFinite(value) ? value : null);
  return {
    items: report.items,
    kappa: finite(report.kappa),
    spearman: finite(report.spearman),
    exact: report.exact,
    withinOne: report.withinOne,
    passFail: report.passFail,
    ratersLightsKappa: finite(report.humanLightsKappa),
    pairMean: report.pairMean && { kappa: finite(report.pairMean.kappa), spearman: finite(report.pairMean.spearman), exact: finite(report.pairMean.exact), pairs: report.pairMean.pairs },
  };
}

/**
 * Agreement between raters and between the judge and the raters over the rated conversations
 * of one run: quadratic-weighted Cohen's κ, Spearman ρ, exact and within-one agreement per
 * dimension, F1 of the judge's pass/fail against the raters' majority vote (positive class: fail).
 * Every statistic comes from agreementReport; two raters are compared as one "judge" against one "rater".
 */
export function computeAgreement(ratings: readonly Rating[], judged: ReadonlyMap<string, ConversationResult>): AgreementView {
  const raters = [...new Set(ratings.map((r) => r.rater))].sort();
  const byKey = new Map<string, Rating[]>();
  for (const rating of ratings) byKey.set(rating.key, [...(byKey.get(rating.key) ?? []), rating]);
  for (const list of byKey.values()) list.sort((x, y) => x.rater.localeCompare(y.rater));

  const judgeVsRaters: JudgeAgreement[] = DIMENSIONS.map((dimension) => {
    const judge: number[] = [];
    const humans: number[][] = [];
    const judgePass: boolean[] = [];
    const humanPass: boolean[][] = [];
    const raterSets = new Set<string>();
    for (const [key, list] of byKey) {
      const result = judged.get(key);
      if (!result) continue;
      const deciding = decidingConversationVerdict(result.verdicts);
      const judgeScore = deciding?.dimensions[dimension]?.score;
      if (judgeScore === undefined || !deciding || deciding.pass === null) continue;
      judge.push(judgeScore);
      humans.push(list.map((r) => r.dimensions[dimension] as number));
      judgePass.push(deciding.pass);
      humanPass.push(list.map((r) => r.pass));
      raterSets.add(list.map((r) => r.rater).join('\u0000'));
    }
    return { dimension, ...agreement(judge, humans, judgePass, humanPass, raterSets.size === 1) };
  });

  const raterPairs: RaterPairAgreement[] = [];
  for (let i = 0; i < raters.length; i++) {
    for (let j = i + 1; j < raters.length; j++) {
      const shared = [...byKey.values()]
        .map((list) => [list.find((r) => r.rater === raters[i]), list.find((r) => r.rater === raters[j])] as const)
        .filter((pair): pair is readonly [Rating, Rating] => pair[0] !== undefined && pair[1] !== undefined);
      const aPass = shared.map(([x]) => x.pass);
      const bPass = shared.map(([, y]) => [y.pass]);
      raterPairs.push({
        a: raters[i],
        b: raters[j],
        items: shared.length,
        passAgreement: shared.length ? shared.filter(([x, y]) => x.pass === y.pass).length / shared.length : null,
        dimensions: DIMENSIONS.map((dimension) => {
          const xs = shared.map(([x]) => x.dimensions[dimension] as number);
          const ys = shared.map(([, y]) => [y.dimensions[dimension] as number]);
          const { items, kappa, spearman, exact, withinOne } = agreement(xs, ys, aPass, bPass, false);
          return { dimension, items, kappa, spearman, exact, withinOne };
        }),
      });
    }
  }
  const overall = {
    judge: meanAgreement(judgeVsRaters.flatMap((row) => (row.pairMean ? [row.pairMean] : []))),
    raters: meanAgreement(raterPairs.flatMap((pair) => pair.dimensions.filter((d) => d.items > 0))),
  };
  return { raters, ratedConversations: byKey.size, judgeVsRaters, raterPairs, overall };
}
