import { z } from 'zod';
import { FailureLabelSchema } from './taxonomy.ts';

/**
 * What a scripted turn (a suite file, a pinned conversation) expects of the head unit's reply, besides
 * what the judges check: structured actions it must carry, and failure labels that must not appear on
 * the turn's deciding verdict. Action types are plain names here (the domain does not import the wire
 * protocol); the suite loader checks them against the bridge's action types (src/suite/format.ts).
 */
export const TurnExpectationSchema = z.strictObject({
  /** action types the reply must carry (e.g. route, refusal) */
  actions: z.array(z.string().min(1)).default([]),
  /** failure labels that must not appear on this turn: a list, or "all" for a turn that must pass clean */
  forbid: z.union([z.literal('all'), z.array(FailureLabelSchema)]).default([]),
});
export type TurnExpectation = z.infer<typeof TurnExpectationSchema>;

/** One checked expectation: what was expected, whether it held, and what the reply did instead. */
export const ExpectationCheckSchema = z.object({
  expected: z.string(),
  met: z.boolean(),
  detail: z.string(),
});
export type ExpectationCheck = z.infer<typeof ExpectationCheckSchema>;

/** A turn's expectations as checked when it ended; `met` is false when any check failed. */
export const ExpectationResultSchema = z.object({
  met: z.boolean(),
  checks: z.array(ExpectationCheckSchema),
});
export type ExpectationResult = z.infer<typeof ExpectationResultSchema>;
