import type { ExpectationCheck, ExpectationResult, TurnExpectation } from '../domain/expectations.ts';
import type { TurnLabel } from '../domain/conversation.ts';
import type { AssistantReply } from '../protocol/bridge.ts';

/**
 * Checks a scripted turn's expectations against the reply and the labels that count on the turn (the
 * deciding verdict's, src/judge/precedence.ts): every expected action type must be among the reply's
 * actions; no forbidden label may be among the labels. An inconclusive turn has no labels, so a
 * forbidden label cannot be found on it; its expected actions are still checked.
 */
export function checkExpectation(expect: TurnExpectation, reply: AssistantReply | null, labels: readonly TurnLabel[]): ExpectationResult {
  const checks: ExpectationCheck[] = [];
  const carried = reply?.actions.map((a) => a.type) ?? [];
  const carriedText = carried.length ? carried.join(', ') : 'no actions';
  for (const type of expect.actions) {
    const met = carried.includes(type as (typeof carried)[number]);
    checks.push({ expected: `action ${type}`, met, detail: met ? `the reply carries ${type}` : `the reply carries ${carriedText}` });
  }
  const forbidden = expect.forbid === 'all' ? labels : labels.filter((l) => (expect.forbid as readonly string[]).includes(l.label));
  if (expect.forbid === 'all' || expect.forbid.length > 0) {
    const expected = expect.forbid === 'all' ? 'no failure label' : `none of ${expect.forbid.join(', ')}`;
    const found = [...new Set(forbidden.map((l) => l.label))];
    checks.push({ expected, met: found.length === 0, detail: found.length === 0 ? 'no such label on the turn' : `labelled ${found.join(', ')}: ${forbidden.map((l) => l.evidence).join(' ')}` });
  }
  return { met: checks.every((c) => c.met), checks };
}
