import type { TurnRecord } from '../domain/conversation.ts';
import type { Target, TargetStatus } from '../domain/targets.ts';

/**
 * T of the paper (Negi et al., Eq. 1): T = |{g ∈ G : σ_g = 1}| / |G|, the completed share of all counted targets.
 * A dropped target (σ = -1) is in G and not completed, so it counts against T: a conversation whose every target
 * was dropped has T = 0. With no target counted at all there is nothing the assistant could miss: T = 1.
 * The oracle and the LLM judge score conversations with it (over `targetsCountedInT`); the annotation screen
 * scores ratings with it.
 */
export function completedTargetShare(statuses: readonly TargetStatus[]): number {
  return statuses.length === 0 ? 1 : statuses.filter((s) => s === 1).length / statuses.length;
}

/** The targets the driver asked for: those some turn's utterance addresses or returns to. */
export function askedTargetIds(turns: readonly Pick<TurnRecord, 'utterance'>[]): Set<string> {
  return new Set(turns.flatMap((turn) => [...turn.utterance.annotation.addresses, ...turn.utterance.annotation.returnsTo]));
}

/**
 * The open targets `judge` left undecided: its latest word on each was an undecided claim (`undecidedTargets` of its
 * turn verdict, e.g. a "not found" the bench cannot check without the unit's world), not a label or a status update.
 */
export function undecidedTargetIds(turns: readonly Pick<TurnRecord, 'verdicts'>[], judge: string): Set<string> {
  const undecided = new Set<string>();
  for (const verdict of turns.flatMap((turn) => turn.verdicts.filter((v) => v.judge === judge))) {
    for (const label of verdict.labels) if (label.targetId) undecided.delete(label.targetId);
    for (const update of verdict.targetUpdates) undecided.delete(update.targetId);
    for (const claim of verdict.undecidedTargets ?? []) undecided.add(claim.targetId);
  }
  return undecided;
}

/** Which targets T counts for `judge`, and why the others do not. */
export interface CountedTargets {
  statuses: TargetStatus[];
  /** targets no turn asked for (a seed request the simulator never raised): not a task the unit could fail */
  notAsked: string[];
  /** open targets whose only verdict is undecided: neither completed nor failed */
  undecided: string[];
}

/**
 * The targets T is taken over: the ones the driver asked for, less the open ones `judge` could not decide.
 * Dropped targets stay in and count as not completed (completedTargetShare).
 */
export function targetsCountedInT(targets: readonly Target[], turns: readonly Pick<TurnRecord, 'utterance' | 'verdicts'>[], judge: string): CountedTargets {
  const asked = askedTargetIds(turns);
  const open = undecidedTargetIds(turns, judge);
  const notAsked = targets.filter((t) => !asked.has(t.id)).map((t) => t.id);
  const undecided = targets.filter((t) => asked.has(t.id) && t.status === 0 && open.has(t.id)).map((t) => t.id);
  const left = new Set([...notAsked, ...undecided]);
  return { statuses: targets.filter((t) => !left.has(t.id)).map((t) => t.status), notAsked, undecided };
}

/** "T = 0.50", with the targets left out of it and why. */
export function describeT(share: number, counted: CountedTargets): string {
  const out = [
    ...(counted.notAsked.length ? [`never asked for: ${counted.notAsked.join(', ')}`] : []),
    ...(counted.undecided.length ? [`undecided: ${counted.undecided.join(', ')}`] : []),
  ];
  return `T = ${share.toFixed(2)}${out.length ? ` (not counted: ${out.join('; ')})` : ''}`;
}
