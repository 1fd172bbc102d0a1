import type { BusObservation } from '../domain/bus-observation.ts';
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
  /**
   * the head unit announced structured actions (capabilities.structuredActions): a reply without actions
   * then shows that nothing was done. false: it may have acted without saying so, and the oracle cannot
   * tell. Absent: true (the reference unit; bridge units say it in their hello).
   */
  structuredReplies?: boolean;
  /** what the bench saw the unit do on the CAN bus during the turn (vehicle.observe); absent when it does not watch */
  observed?: BusObservation;
}

export interface ConversationJudgeInput {
  spec: ConversationSpec;
  turns: readonly TurnRecord[];
  targets: readonly Target[];
}

/**
 * A judge (the oracle or a model-driven judge) labels every turn (EvaluateTurn) and scores the
 * whole conversation (EvaluateConversation). Every verdict carries its tier and the judge's `ref`;
 * a judge that cannot decide returns outcome "inconclusive", one that fails "judge_error".
 */
export interface Judge {
  readonly tier: JudgeTier;
  /**
   * the judge's reference as it reports itself, recorded on every verdict it gives: "oracle",
   * "ollama:qwen3:14b", "openai-compat:http://127.0.0.1:8080/v1#m", … (ensembles name themselves too)
   */
  readonly ref: string;
  /** the prompt files (ids under prompts/, version included) it sends; none for the oracle */
  readonly prompts: readonly string[];
  evaluateTurn(input: TurnJudgeInput): Promise<TurnVerdict>;
  evaluateConversation(input: ConversationJudgeInput): Promise<ConversationVerdict>;
}
