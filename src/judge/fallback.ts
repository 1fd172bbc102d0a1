import type { Action } from '../protocol/bridge.ts';
import { FALLBACK_VOCABULARY, type FallbackVocabulary } from './fallback-vocabulary.ts';

/**
 * The fallback detector: does a reply decline to understand or to act on what the driver asked, without a
 * reason the bench accepts? The oracle labels such a reply `fallback_response` wherever the driver asked for
 * something (docs/architecture.md, "Failure taxonomy"). The words are data (./fallback-vocabulary.ts, en/de/fr);
 * the rules are here, in this order:
 * 1. the reply's structured actions speak first: a clarification is a question, a safety or not-found
 *    refusal is justified, any other action means the unit acted; an `unsupported` refusal is a fallback
 *    unless the text asks a specific question;
 * 2. a question that asks for a detail ("Which Italian place do you mean, X or Y?") is a clarification, not a
 *    fallback; a question that only asks for the same words again ("Could you rephrase?") is a fallback;
 * 3. "didn't understand" wording is a fallback; "I can't help with that" wording is one unless it gives a
 *    driving-safety reason or says what it could not find ("I'm unable to find …"): justified refusals;
 * 4. anything else (an answer, a truthful "I couldn't find …") is not a fallback.
 */
export type ReplyReading =
  | { kind: 'fallback'; evidence: string }
  | { kind: 'question'; question: string }
  | { kind: 'justified_refusal'; reason: 'safety' | 'not_found' }
  | { kind: 'answer' };

const LANGUAGES: readonly FallbackVocabulary[] = Object.values(FALLBACK_VOCABULARY);
const anyOf = (pick: (v: FallbackVocabulary) => readonly string[], flags = 'i') => new RegExp(`(?<![\\p{L}\\p{N}])(?:${LANGUAGES.flatMap(pick).join('|')})(?![\\p{L}\\p{N}])`, `${flags}u`);

const NOT_UNDERSTOOD = anyOf((v) => v.notUnderstood);
const CANNOT_HELP = anyOf((v) => v.cannotHelp);
const REPEAT_QUESTION = anyOf((v) => v.repeatQuestion);
const SAFETY_REASON = anyOf((v) => v.safetyReason);
const NOT_FOUND = anyOf((v) => v.notFound);
const SOCIAL = anyOf((v) => v.social, 'gi');

/** Lower case, accents and look-alike apostrophes folded, so the vocabulary is written once per word. */
export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[\u2018\u2019\u02bc\u00b4`]/g, "'")
    .toLowerCase();
}

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** What a reply does with the driver's request, as far as a fallback is concerned (the rules above). */
export function readReply(reply: { text: string; actions: readonly Action[] }): ReplyReading {
  const { actions } = reply;
  if (actions.some((a) => a.type === 'clarification')) return { kind: 'question', question: reply.text };
  if (actions.some((a) => a.type === 'refusal' && a.reason === 'safety')) return { kind: 'justified_refusal', reason: 'safety' };
  if (actions.some((a) => a.type === 'refusal' && a.reason === 'not_found')) return { kind: 'justified_refusal', reason: 'not_found' };
  if (actions.some((a) => a.type !== 'refusal')) return { kind: 'answer' };
  const sentences = sentencesOf(foldText(reply.text));
  const specific = sentences.find((s) => s.endsWith('?') && !REPEAT_QUESTION.test(s) && !NOT_UNDERSTOOD.test(s) && !CANNOT_HELP.test(s));
  if (specific) return { kind: 'question', question: specific };
  const quoted = `"${reply.text.trim().slice(0, 80)}"`;
  if (actions.some((a) => a.type === 'refusal' && a.reason === 'unsupported')) return { kind: 'fallback', evidence: `${quoted} (a refusal as unsupported)` };
  if (sentences.some((s) => NOT_UNDERSTOOD.test(s) || (s.endsWith('?') && REPEAT_QUESTION.test(s)))) return { kind: 'fallback', evidence: quoted };
  const declined = sentences.filter((s) => CANNOT_HELP.test(s));
  if (declined.length > 0) {
    if (SAFETY_REASON.test(foldText(reply.text))) return { kind: 'justified_refusal', reason: 'safety' };
    if (declined.every((s) => NOT_FOUND.test(s))) return { kind: 'justified_refusal', reason: 'not_found' };
    return { kind: 'fallback', evidence: quoted };
  }
  return { kind: 'answer' };
}

/**
 * Does a driver's turn ask for something? Decided by structure, not by topic: a turn is a request (a command,
 * a question, an answer to the unit's offer, "yes please") unless it is only social words (thanks,
 * acknowledgement, greeting, farewell: "Great, thank you!", "Danke schön", "Merci beaucoup").
 */
export function asksSomething(utterance: string): boolean {
  const rest = foldText(utterance).replace(SOCIAL, ' ');
  return /[\p{L}\p{N}]/u.test(rest);
}
