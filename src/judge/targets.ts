import type { TargetStatus } from '../domain/targets.ts';

/**
 * T of the paper, the completed-target share: completed / (completed + incomplete). Dropped
 * targets (-1) do not count against the assistant; with no live target left, T = 1.
 * The oracle and the LLM judge score conversations with it; the annotation screen scores ratings with it.
 */
export function completedTargetShare(statuses: readonly TargetStatus[]): number {
  const live = statuses.filter((s) => s !== -1);
  return live.length === 0 ? 1 : live.filter((s) => s === 1).length / live.length;
}
