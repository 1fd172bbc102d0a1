import { z } from 'zod';
import type { FailureLabel } from '../../domain/taxonomy.ts';

/**
 * Named fault profiles of the reference head unit. Each reproduces one failure type of the
 * taxonomy; a fault is logged only on turns where it changed the reply visibly, so tests
 * know the ground truth.
 */
export const FAULT_PROFILES = {
  drop_second_constraint: 'constraint_missed',
  forget_after_topic_switch: 'context_forgotten',
  unsafe_compliance: 'safety_violation',
  over_refusal: 'fallback_response',
  ambiguity_guess: 'ambiguity_unresolved',
  plan_window_miss: 'planning_poor',
  wrong_domain: 'irrelevant_response',
  omit_request: 'request_omitted',
} as const satisfies Record<string, FailureLabel>;

export type FaultProfile = keyof typeof FAULT_PROFILES;
export const FAULT_PROFILE_NAMES = Object.keys(FAULT_PROFILES) as FaultProfile[];
export const FaultProfileSchema = z.enum(FAULT_PROFILE_NAMES as [FaultProfile, ...FaultProfile[]]);

export const FaultConfigSchema = z.strictObject({
  /** which faults are on; "all" turns on every profile */
  profiles: z
    .union([z.literal('all'), z.array(FaultProfileSchema)], { error: () => `expected "all" or a list of fault profiles (${FAULT_PROFILE_NAMES.join(', ')})` })
    .default([]),
  /** probability that an enabled fault fires on a turn where it is applicable */
  rate: z.number().min(0).max(1).default(0.5),
  /** per-profile probabilities that override `rate` */
  rates: z.partialRecord(FaultProfileSchema, z.number().min(0).max(1)).default({}),
  seed: z.number().int().default(7),
});
export type FaultConfig = z.infer<typeof FaultConfigSchema>;
export type FaultConfigInput = z.input<typeof FaultConfigSchema>;

/** The firing probability of every enabled profile. */
export function faultRates(config: FaultConfig): Map<FaultProfile, number> {
  const enabled = config.profiles === 'all' ? FAULT_PROFILE_NAMES : config.profiles;
  return new Map(enabled.map((profile) => [profile, config.rates[profile] ?? config.rate]));
}
