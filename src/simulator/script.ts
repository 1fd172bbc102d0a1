import type { ConversationSpec, ScriptedTurn, SimulatedUtterance } from '../domain/conversation.ts';
import type { Target } from '../domain/targets.ts';
import { readTypedTurn } from './reader.ts';
import { SimulatorError, type SimulatorSession, type SimulatorTurnInput, type UserSimulator } from './types.ts';

/** Where a scripted user's turns come from: a suite case's list, or a technician typing them live. null = no more turns. */
export type ScriptSource = (turnIndex: number) => Promise<ScriptedTurn | null>;

/**
 * The scripted user (simulator ref "script"): plays the turns a conversation spec carries (a suite case,
 * src/suite/format.ts) or that a live session hands it, in order, and ends the conversation after the
 * last one. A turn without a stated meaning is read from its words (src/simulator/reader.ts). Its targets
 * are the spec's requests under the spec's target ids (t1, t2, … by default).
 */
export class ScriptedSimulator implements UserSimulator {
  readonly kind = 'script' as const;
  readonly describe = 'script';
  readonly prompts: readonly string[] = [];

  /** `sourceFor`: a live session's turn source; default the spec's own `script` */
  constructor(private readonly sourceFor?: (spec: ConversationSpec) => ScriptSource) {}

  startConversation(spec: ConversationSpec): SimulatorSession {
    const source = this.sourceFor?.(spec) ?? scriptOf(spec);
    return new ScriptedSession(spec, source);
  }
}

function scriptOf(spec: ConversationSpec): ScriptSource {
  const script = spec.script;
  if (!script || script.length === 0) throw new SimulatorError(`conversation ${spec.key}: the scripted user has no turns to play (the spec carries no script)`);
  return async (turnIndex) => script[turnIndex] ?? null;
}

class ScriptedSession implements SimulatorSession {
  constructor(
    private readonly spec: ConversationSpec,
    private readonly source: ScriptSource,
  ) {}

  async extractTargets(): Promise<Target[]> {
    const ids = this.spec.targetIds;
    return this.spec.seed.requests.map((request, i) => ({ id: ids?.[i] ?? `t${i + 1}`, request, status: 0 as const, introducedTurn: null, completedTurn: null }));
  }

  async openingUtterance(targets: readonly Target[]): Promise<SimulatedUtterance> {
    const utterance = await this.play(0, targets);
    if (!utterance) throw new SimulatorError(`conversation ${this.spec.key}: the scripted user has no first turn`);
    return utterance;
  }

  async nextUtterance(input: SimulatorTurnInput): Promise<SimulatedUtterance | null> {
    return this.play(input.turnIndex, input.targets);
  }

  private async play(turnIndex: number, targets: readonly Target[]): Promise<SimulatedUtterance | null> {
    const turn = await this.source(turnIndex);
    return turn ? scriptedUtterance(turn, targets) : null;
  }
}

/** A scripted turn as the user's utterance: its stated meaning, or the one read from its words (`meaning: read`), and its recorded reference reply. */
export function scriptedUtterance(turn: ScriptedTurn, targets: readonly Target[]): SimulatedUtterance {
  const stated = turn.annotation;
  const annotation = stated ?? readTypedTurn(turn.text, targets, turn.context);
  return { text: turn.text, strategy: null, annotation, ...(turn.expect ? { expect: turn.expect } : {}), ...(stated ? {} : { meaning: 'read' as const }), ...(turn.reference ? { reference: turn.reference } : {}) };
}
