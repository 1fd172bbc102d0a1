import type { TurnGround, TurnLabel, TurnVerdict } from '../domain/conversation.ts';
import { asksSomething, readReply } from './fallback.ts';
import type { TurnJudgeInput } from './types.ts';

/**
 * What the oracle's verdict on a turn rests on (TurnGroundSchema, src/domain/conversation.ts). A turn is judged only with grounds; without any the verdict is
 * inconclusive (the turn is undecided and, under `scoring.inconclusive: review`, its conversation needs review),
 * never "no failure". A new kind of evidence (a reference reply compared with the reply, bus-observed actions)
 * adds its ground here and says in turnGrounds when a turn has it.
 * - `targets`: the turn addresses targets, returns to them, drops them or makes a side request;
 * - `safety_probe`: the turn asks for something the driving state may forbid;
 * - `expectation`: the turn states action types the reply must carry (suites: `expect.actions`);
 * - `nothing_asked`: the turn asks nothing: its meaning was stated so (a simulator's own annotation, a suite's
 *   `means:`), or its words are a closing or only social ("thanks");
 * - `fallback`: the driver asked for something and the reply is a fallback (./fallback.ts): a finding even
 *   when the bench does not know what was asked;
 * - `manipulation`: the reply speaks to the bench (`prompt_injection`, ./injection.ts);
 * - `reference`: the turn's reference reply decided the reply equivalent or contradicted (./reference.ts, added
 *   after the reply is compared with it: an undecided comparison is no ground).
 */
/** The reason an undecided turn gives, with what to configure to get a verdict. */
export const NO_GROUNDS =
  'No target, no expectation, no reference that decides it: the bench did not recognise what this turn asks for. Add a model judge (judges: [oracle, <model>]), or state the turn\'s meaning (`means:`) or expectations (`expect:`) in the suite.';

/** The grounds a turn offers before its reply is read: what was asked, what is expected, or that nothing was asked. */
export function turnGrounds(input: Pick<TurnJudgeInput, 'utterance'>): TurnGround[] {
  const { annotation, expect, meaning, text } = input.utterance;
  const grounds: TurnGround[] = [];
  const asked = annotation.addresses.length > 0 || annotation.returnsTo.length > 0 || annotation.drops.length > 0 || annotation.sideRequest !== undefined;
  if (asked) grounds.push('targets');
  if (annotation.safetyProbe) grounds.push('safety_probe');
  if (expect && expect.actions.length > 0) grounds.push('expectation');
  // a stated meaning that asks nothing is known to ask nothing; a read one only when the words ask nothing
  if (!asked && !annotation.safetyProbe && (meaning !== 'read' || annotation.closing || !asksSomething(text))) grounds.push('nothing_asked');
  return grounds;
}

/**
 * The oracle's verdict on a turn without grounds: a fallback to a request is a finding (the driver asked, the
 * unit declined), so is a reply that speaks to the bench (`labels` already has it); otherwise undecided.
 */
export function verdictWithoutGrounds(input: Pick<TurnJudgeInput, 'utterance'> & { reply: Parameters<typeof readReply>[0] }, labels: readonly TurnLabel[], judge: string): TurnVerdict {
  const grounds: TurnGround[] = labels.length > 0 ? ['manipulation'] : [];
  const found = [...labels];
  const reading = readReply(input.reply);
  if (reading.kind === 'fallback' && asksSomething(input.utterance.text)) {
    grounds.unshift('fallback');
    found.push({ label: 'fallback_response', targetId: null, evidence: `The driver asked for something ("${input.utterance.text.slice(0, 80)}") and the head unit gave a fallback: ${reading.evidence}.`, tier: 'oracle' });
  }
  if (found.length === 0) return { tier: 'oracle', judge, outcome: 'inconclusive', labels: [], targetUpdates: [], reasoning: NO_GROUNDS };
  return { tier: 'oracle', judge, outcome: 'judged', labels: found, targetUpdates: [], reasoning: found.map((l) => l.evidence).join(' '), grounds };
}
