import { describeManipulation, examineUnitOutput } from '../domain/manipulation.ts';
import type { AssistantReply } from '../protocol/bridge.ts';

/** The reply's fields the driver hears or reads; every other string of it is a data field (names, districts, state). */
const FREE_TEXT = new Set(['text', 'recognizedText']);

/**
 * Does a head-unit reply speak to the bench (its judge, its evaluator, the "system") instead of the driver, in
 * any field? Every string of the reply is examined (text, result names and details, action payloads, state)
 * by the one detector of src/domain/manipulation.ts; the oracle labels such a reply `prompt_injection` with
 * the fields and their normalised text as evidence. Only the diagnostics are left out: they are the unit's
 * report to the bench, which no judge reads.
 */
export function replyManipulation(reply: AssistantReply): string | null {
  const { diagnostics: _selfReport, ...sent } = reply;
  const findings = examineUnitOutput(sent, { freeText: (path) => FREE_TEXT.has(path) });
  return findings.length > 0 ? describeManipulation(findings) : null;
}
