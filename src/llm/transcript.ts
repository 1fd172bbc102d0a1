import type { ContextVector } from '../domain/context.ts';
import type { TurnRecord } from '../domain/conversation.ts';
import type { Target } from '../domain/targets.ts';
import { delimitUntrusted } from './prompts.ts';

/**
 * How a conversation is shown to a model: the context line, the targets and the transcript. One rendering for
 * every prompt that shows a dialogue (the LLM judge and the LLM simulator), so both see the same text.
 */

export function describeContext(context: ContextVector): string {
  const vehicle = context.vehicle ? `, vehicle ${context.vehicle.speedKmh} km/h gear ${context.vehicle.gear}` : ', driving';
  return `${context.location.district}, ${context.location.city}; ${context.date} ${context.time}${vehicle}`;
}

export function describeTargets(targets: readonly Target[]): string {
  return JSON.stringify(targets.map((t) => ({ id: t.id, status: t.status, request: t.request })));
}

/** The dialogue so far; the head unit's words are delimited as untrusted data. */
export function transcript(history: readonly TurnRecord[]): string {
  if (history.length === 0) return '(no turns yet)';
  return history
    .map((turn) => {
      const reply = turn.reply ? turn.reply.text : '(no reply)';
      const actions = turn.reply?.actions.length ? `\nactions: ${JSON.stringify(turn.reply.actions).slice(0, 1500)}` : '';
      return `Turn ${turn.index}\nDriver: ${turn.utterance.text}\nAssistant:\n${delimitUntrusted('head_unit_reply', reply + actions)}`;
    })
    .join('\n\n');
}
