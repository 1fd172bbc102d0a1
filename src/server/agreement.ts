import { combinedVerdict } from '../analysis/verdict.ts';
import { cohensKappa, exactAgreement, lightsKappa, majorityScore, mean, precisionRecallF1, spearman, withinOneAgreement, type ClassificationScores } from '../analysis/stats.ts';
import type { ConversationResult } from '../domain/conversation.ts';
import { DIMENSIONS, type Dimension } from '../domain/taxonomy.ts';
import type { Rating } from './annotations.ts';

const SCALE = [0, 1, 2] as const;

export interface JudgeAgreement {
  dimension: Dimension;
  /** conversations with both a decisive judge score and at least one rating */
  items: number;
  /** quadratic-weighted κ of the judge against the per-conversation majority score */
  kappa: number | null;
  /** ρ of the judge against the mean rater score */
  spearman: number | null;
  exact: number | null;
  withinOne: number | null;
  /** the judge's pass/fail against the raters' majority vote (a tie counts as fail); positive class: fail */
  passFail: ClassificationScores | null;
  /** mean pairwise weighted κ among raters, when the same raters rated every item */
  ratersLightsKappa: number | null;
}

export interface PairDimensionAgreement {
  dimension: Dimension;
  items: number;
  kappa: number | null;
  spearman: number | null;
  exact: number | null;
  withinOne: number | null;
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
}

/**
 * A statistic that is undefined for these data (ρ of a constant series, κ over fewer than two
 * items, where chance agreement cannot be estimated) is reported as null, not as a number.
 */
function defined(items: number, compute: () => number): number | null {
  if (items < 2) return null;
  try {
    const value = compute();
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Agreement between raters and between the judge and the raters over the rated conversations
 * of one run: quadratic-weighted Cohen's κ, Spearman ρ, exact and within-one agreement per
 * dimension, F1 of the judge's pass/fail against the raters' majority vote (positive class: fail).
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
      const deciding = combinedVerdict(result);
      const judgeScore = deciding.verdict?.dimensions[dimension]?.score;
      if (judgeScore === undefined || deciding.verdict?.pass === null || deciding.verdict === null) continue;
      judge.push(judgeScore);
      humans.push(list.map((r) => r.dimensions[dimension] as number));
      judgePass.push(deciding.verdict.pass as boolean);
      humanPass.push(list.map((r) => r.pass));
      raterSets.add(list.map((r) => r.rater).join('\u0000'));
    }
    const majority = humans.map((h) => majorityScore(h));
    const aligned = raterSets.size === 1 && humans.length > 0 && humans[0].length >= 2;
    // majority vote on pass/fail; a tie counts as fail, as in agreementReport (stats.ts)
    const humansPass = humanPass.map((votes) => votes.filter(Boolean).length * 2 > votes.length);
    return {
      dimension,
      items: judge.length,
      kappa: defined(judge.length, () => cohensKappa(judge, majority, { weights: 'quadratic', categories: SCALE })),
      spearman: defined(judge.length, () => spearman(judge, humans.map((h) => mean(h)))),
      exact: judge.length ? exactAgreement(judge, majority) : null,
      withinOne: judge.length ? withinOneAgreement(judge, majority) : null,
      passFail: judge.length ? precisionRecallF1(judgePass.map((p) => !p), humansPass.map((p) => !p)) : null,
      ratersLightsKappa: aligned
        ? defined(judge.length, () => lightsKappa(Array.from({ length: humans[0].length }, (_, r) => humans.map((h) => h[r])), { weights: 'quadratic', categories: SCALE }))
        : null,
    };
  });

  const raterPairs: RaterPairAgreement[] = [];
  for (let i = 0; i < raters.length; i++) {
    for (let j = i + 1; j < raters.length; j++) {
      const shared = [...byKey.values()]
        .map((list) => [list.find((r) => r.rater === raters[i]), list.find((r) => r.rater === raters[j])] as const)
        .filter((pair): pair is readonly [Rating, Rating] => pair[0] !== undefined && pair[1] !== undefined);
      raterPairs.push({
        a: raters[i],
        b: raters[j],
        items: shared.length,
        passAgreement: shared.length ? shared.filter(([x, y]) => x.pass === y.pass).length / shared.length : null,
        dimensions: DIMENSIONS.map((dimension) => {
          const xs = shared.map(([x]) => x.dimensions[dimension] as number);
          const ys = shared.map(([, y]) => y.dimensions[dimension] as number);
          return {
            dimension,
            items: shared.length,
            kappa: defined(xs.length, () => cohensKappa(xs, ys, { weights: 'quadratic', categories: SCALE })),
            spearman: defined(xs.length, () => spearman(xs, ys)),
            exact: xs.length ? exactAgreement(xs, ys) : null,
            withinOne: xs.length ? withinOneAgreement(xs, ys) : null,
          };
        }),
      });
    }
  }
  return { raters, ratedConversations: byKey.size, judgeVsRaters, raterPairs };
}
