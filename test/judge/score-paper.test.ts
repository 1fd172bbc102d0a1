import { describe, expect, it } from 'vitest';
import { computeConversationScore, ScoringSchema } from '../../src/judge/score.ts';

describe('the success score C (Negi et al., Eq. 1) with the paper\'s Table II parameters', () => {
  // Table II: w_j = 1.0 for the four dimensions, w_T = 1.0, θ = 0.75; the verdict of method: paper is C ≥ θ alone
  const paper = ScoringSchema.parse({ failOn: [] });

  it('the motivating example: one of nine targets completed (T = 1/9) fails whatever the dimensions say', () => {
    // with every dimension at its best (d_j = 2): C = (4 · 2/2 + 1/9) / (4 + 1) = 37/45 ≈ 0.822 ≥ θ: the dimensions can outweigh T
    const best = computeConversationScore({ instruction: 2, context: 2, plan: 2, safety: 2 }, 1 / 9, paper);
    expect(best.score).toBeCloseTo(37 / 45, 12);
    expect(best.pass).toBe(true);
    // the example's transcript: constraints ignored (d = 0), context lost (0), a plan that never comes together (0), safe (2)
    const example = computeConversationScore({ instruction: 0, context: 0, plan: 0, safety: 2 }, 1 / 9, paper);
    expect(example.score).toBeCloseTo((1 + 1 / 9) / 5, 12);
    expect(example.pass).toBe(false);
  });

  it('C is the weighted mean of d_j/2 and T; a dimension the judge left out drops out of both sums', () => {
    expect(computeConversationScore({ instruction: 1, context: 2, plan: 1, safety: 2 }, 0.5, paper).score).toBeCloseTo((0.5 + 1 + 0.5 + 1 + 0.5) / 5, 12);
    expect(computeConversationScore({ instruction: 1, context: 2, safety: 2 }, 0.5, paper).score).toBeCloseTo((0.5 + 1 + 1 + 0.5) / 4, 12);
    // the threshold is inclusive: C = θ passes
    expect(computeConversationScore({ instruction: 1, context: 1, plan: 2, safety: 2 }, 0.75, paper)).toEqual({ score: 0.75, pass: true });
  });
});
