import type { ContextVector } from '../domain/context.ts';
import type { ConversationSpec, ConversationVerdict, SimulatedUtterance, TurnRecord, TurnVerdict } from '../domain/conversation.ts';
import type { Target } from '../domain/targets.ts';
import type { JudgeTier } from '../domain/taxonomy.ts';
import type { AssistantReply } from '../protocol/bridge.ts';

export interface TurnJudgeInput {
  spec: ConversationSpec;
  /** H_t: the turns before this one */
  history: readonly TurnRecord[];
  utterance: SimulatedUtterance;
  reply: AssistantReply;
  /** G: the targets before this turn's update */
  targets: readonly Target[];
  /** context at the time of the turn */
  context: ContextVector;
  turnIndex: number;
}

export interface ConversationJudgeInput {
  spec: ConversationSpec;
  turns: readonly TurnRecord[];
  targets: readonly Target[];
}

/**
 * A judge tier (oracle or LLM) labels every turn (EvaluateTurn) and scores the
 * whole conversation (EvaluateConversation). Verdicts carry their tier; a tier
 * that cannot decide returns outcome "inconclusive", one that fails "judge_error".
 */
export interface Judge {
  readonly tier: JudgeTier;
  readonly describe: string;
  evaluateTurn(input: TurnJudgeInput): Promise<TurnVerdict>;
  evaluateConversation(input: ConversationJudgeInput): Promise<ConversationVerdict>;
}
