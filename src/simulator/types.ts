import type { ContextVector } from '../domain/context.ts';
import type { ConversationSpec, SimulatedUtterance, TurnRecord } from '../domain/conversation.ts';
import type { Target } from '../domain/targets.ts';
import type { Strategy } from '../domain/taxonomy.ts';

/** The user simulator's view of the conversation so far when it picks its next move. */
export interface SimulatorTurnInput {
  /** H: the exchanges so far (utterance, context, reply); verdicts and targetsAfter are empty, what was judged comes through targets and Π */
  history: readonly TurnRecord[];
  targets: readonly Target[];
  /**
   * Whether `targets` carry the judges' statuses (evaluator feedback, default). False in the paper's baseline: G then
   * holds only what the user said, and the user learns whether a request was met by reading the replies in H.
   */
  targetsJudged?: boolean;
  /** Π: strategies still available (those whose failure was already provoked are removed) */
  activeStrategies: readonly Strategy[];
  /** how many turns in a row each strategy has just been used */
  consecutiveUses: Readonly<Partial<Record<Strategy, number>>>;
  context: ContextVector;
  turnIndex: number;
}

/** One simulated user for one conversation (Algorithm 1: ExtractTargets, GenerateUtterance, SelectAndGenerate). */
export interface SimulatorSession {
  /** ExtractTargets(s): the targets g_k derived from the seed phrase */
  extractTargets(): Promise<Target[]>;
  /** GenerateUtterance(s, c): the opening utterance u0 */
  openingUtterance(targets: readonly Target[], context: ContextVector): Promise<SimulatedUtterance>;
  /** SelectAndGenerate(H, G, Π, c): the next utterance u_{t+1}; null when a scripted user has nothing more to say */
  nextUtterance(input: SimulatorTurnInput): Promise<SimulatedUtterance | null>;
}

/** Every simulator implementation (template-driven, LLM-driven) has this shape. */
export interface UserSimulator {
  /** script: a scripted user (suite turns, a technician's live turns) that plays every turn and ends the conversation itself */
  readonly kind: 'template' | 'llm' | 'script';
  /** a short description for reports, e.g. "template" or "ollama:qwen2.5:14b" */
  readonly describe: string;
  /** the prompt files (ids under prompts/, version included) it sends; none for the template simulator */
  readonly prompts: readonly string[];
  startConversation(spec: ConversationSpec): SimulatorSession;
}

/** Raised when a simulator cannot produce a valid utterance; recorded as a simulator_error conversation. */
export class SimulatorError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SimulatorError';
  }
}
