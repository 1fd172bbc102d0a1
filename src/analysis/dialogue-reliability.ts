import { conversationPlanOfKey } from '../domain/plan-key.ts';
import { reliability, type Reliability } from './reliability.ts';

/**
 * pass^k / pass@k of a dialogue run: the repeats of each conversation plan are its trials (in
 * repeat order, as the store streams them), a trial passes when its combined outcome is pass. Only
 * when some plan ran more than once (a campaign with `repeats`); summary.json's `reliability`.
 */
export function dialogueReliability(rows: readonly { key: string; outcome: string }[]): { reliability?: Reliability } {
  const plans = new Map<string, boolean[]>();
  for (const row of rows) {
    const plan = conversationPlanOfKey(row.key);
    plans.set(plan, [...(plans.get(plan) ?? []), row.outcome === 'pass']);
  }
  const result = reliability(plans);
  return result.maxTrials > 1 ? { reliability: result } : {};
}
