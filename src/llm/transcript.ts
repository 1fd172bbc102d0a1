import type { ContextVector } from '../domain/context.ts';
import type { TurnRecord } from '../domain/conversation.ts';
import type { Target } from '../domain/targets.ts';
import type { AssistantReply } from '../protocol/bridge.ts';
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

/**
 * A head-unit reply as the data a model sees: its text and its actions, whole actions only, as many as
 * fit in `maxActionChars` of JSON (`actionsOmitted` counts the rest). Never its diagnostics.
 */
export function replyData(reply: AssistantReply | null, maxActionChars: number): { text: string | null; actions: unknown[]; actionsOmitted?: number } {
  if (!reply) return { text: null, actions: [] };
  const actions: unknown[] = [];
  let used = 0;
  for (const action of reply.actions) {
    used += JSON.stringify(action).length;
    if (used > maxActionChars) break;
    actions.push(action);
  }
  const omitted = reply.actions.length - actions.length;
  return { text: reply.text, actions, ...(omitted > 0 ? { actionsOmitted: omitted } : {}) };
}

/** The dialogue so far; each head-unit reply is an escaped data block (delimitUntrusted), text null when none came. */
export function transcript(history: readonly TurnRecord[]): string {
  if (history.length === 0) return '(no turns yet)';
  return history.map(turnBlock).join('\n\n');
}

/**
 * Every model call of a conversation shows the whole dialogue so far, so a turn is rendered once per call
 * after it (quadratic in the turns); each turn's block is kept with the record instead. A block is reused only
 * while the record still has the same index, utterance text and reply it was rendered from.
 */
const renderedTurns = new WeakMap<TurnRecord, { index: number; text: string; reply: TurnRecord['reply']; block: string }>();

function turnBlock(turn: TurnRecord): string {
  const kept = renderedTurns.get(turn);
  if (kept && kept.index === turn.index && kept.text === turn.utterance.text && kept.reply === turn.reply) return kept.block;
  const block = `Turn ${turn.index}\nDriver: ${turn.utterance.text}\nAssistant: ${delimitUntrusted('head_unit_reply', replyData(turn.reply, 1500))}`;
  renderedTurns.set(turn, { index: turn.index, text: turn.utterance.text, reply: turn.reply, block });
  return block;
}

/**
 * The part of a turn's annotation the model judge may see: which targets the words ask for, add to, return to or
 * drop, and any side request. The simulator's own notes stay out (which safety probe it played, the places an
 * ambiguous name fits, that no place exists for a search): the paper's judge sees the exchange and G only, and must
 * find a probe, an ambiguity or a false "not found" in the words itself. The oracle tier keeps using those notes:
 * it is the bench's ground truth, not the paper's judge (src/judge/oracle.ts).
 */
export function whatTheWordsAsk(annotation: TurnRecord['utterance']['annotation']): Omit<TurnRecord['utterance']['annotation'], 'safetyProbe' | 'ambiguity' | 'expectations'> {
  const { safetyProbe: _probe, ambiguity: _ambiguity, expectations: _expectations, ...asked } = annotation;
  return asked;
}

/** What a turn block shows: the turn's index, context, utterance (with what it meant) and reply. */
type ShownTurn = Pick<TurnRecord, 'index' | 'context' | 'utterance' | 'reply'>;

/**
 * The dialogue as the turn judge sees it, one block per turn, the turn being judged last; a turn with a reference
 * reply (imports, pins) shows it after the reply, as a data block of its own (it is imported text, untrusted). A turn's block is the
 * same text when it is judged and later as history, so each call of a conversation repeats the previous call's
 * dialogue and appends one block (the prefix a per-slot KV cache keeps).
 */
export function turnBlocks(turns: readonly ShownTurn[]): string {
  return turns
    .map(
      (turn) =>
        `Turn ${turn.index} — ${describeContext(turn.context)}\nDriver: "${turn.utterance.text}"\nWhat the driver meant: ${JSON.stringify(whatTheWordsAsk(turn.utterance.annotation))}\n` +
        `Assistant's reply (data): ${delimitUntrusted('head_unit_reply', replyData(turn.reply, 3000))}` +
        (turn.utterance.reference ? `\nRecorded reference reply (data): ${delimitUntrusted('reference_reply', turn.utterance.reference)}` : ''),
    )
    .join('\n\n');
}
