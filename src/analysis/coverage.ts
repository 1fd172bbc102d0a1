import { z } from 'zod';
import type { ConversationResult } from '../domain/conversation.ts';
import { DRIVING_STATES, drivingState, type DrivingState } from '../domain/safety-policy.ts';
import { STRATEGIES, type Strategy } from '../domain/taxonomy.ts';

/**
 * Coverage: which situations a run tested. Every turn counts once, by the strategy its utterance used
 * (`none` for plain progress: openings, follow-ups, every baseline turn), its position in the
 * conversation and the driving state the bench recorded for it, so a technician sees the empty cells:
 * what was not tested. See docs/reports.md, "Coverage".
 */

/** Turn positions, by 1-based turn number: two turns per band, the last one open. */
export const TURN_BANDS = ['1-2', '3-4', '5-6', '7-8', '9+'] as const;
export type TurnBand = (typeof TURN_BANDS)[number];

export function turnBand(turnIndex: number): TurnBand {
  return TURN_BANDS[Math.min(TURN_BANDS.length - 1, Math.floor(turnIndex / 2))];
}

export const COVERAGE_MOVES = [...STRATEGIES, 'none'] as const;
export type CoverageMove = (typeof COVERAGE_MOVES)[number];

const count = z.number().int().min(0);
const byState = z.record(z.enum(DRIVING_STATES), count);

export const CoverageSchema = z.object({
  /** turns per strategy (or `none`) × turn band × driving state */
  turns: z.record(z.enum(COVERAGE_MOVES), z.record(z.enum(TURN_BANDS), byState)),
  /** turns per driving state, all moves together */
  drivingStates: byState,
  /** returns to an earlier request after a topic switch, by what they return to; route forgetting can only show on a route return */
  contextReturns: z.object({ search: count, route: count }),
  /** for each strategy the run used, the driving states of the run it never met */
  gaps: z.array(z.object({ strategy: z.enum(STRATEGIES), drivingState: z.enum(DRIVING_STATES) })),
});
export type Coverage = z.infer<typeof CoverageSchema>;

const zeroStates = () => Object.fromEntries(DRIVING_STATES.map((s) => [s, 0])) as Record<DrivingState, number>;

/** Counts a run's coverage one conversation at a time. */
export class CoverageCounter {
  private readonly turns = Object.fromEntries(
    COVERAGE_MOVES.map((m) => [m, Object.fromEntries(TURN_BANDS.map((b) => [b, zeroStates()]))]),
  ) as Coverage['turns'];
  private readonly contextReturns = { search: 0, route: 0 };

  add(result: ConversationResult): void {
    for (const turn of result.turns) {
      this.turns[turn.utterance.strategy ?? 'none'][turnBand(turn.index)][drivingState(turn.context)] += 1;
      for (const id of turn.utterance.annotation.returnsTo) {
        const target = turn.targetsAfter.find((t) => t.id === id);
        if (target) this.contextReturns[target.request.intent === 'navigate' ? 'route' : 'search'] += 1;
      }
    }
  }

  finish(): Coverage {
    const total = (move: CoverageMove, state: DrivingState) => TURN_BANDS.reduce((sum, band) => sum + this.turns[move][band][state], 0);
    const drivingStates = zeroStates();
    for (const move of COVERAGE_MOVES) for (const state of DRIVING_STATES) drivingStates[state] += total(move, state);
    const seen = DRIVING_STATES.filter((s) => drivingStates[s] > 0);
    const used = STRATEGIES.filter((s) => seen.some((state) => total(s, state) > 0));
    const gaps = used.flatMap((strategy: Strategy) => seen.filter((state) => total(strategy, state) === 0).map((state) => ({ strategy, drivingState: state })));
    return { turns: this.turns, drivingStates, contextReturns: { ...this.contextReturns }, gaps };
  }
}
