import type { ConversationVerdict, TurnVerdict } from '../domain/conversation.ts';
import { DIMENSIONS, type Dimension } from '../domain/taxonomy.ts';
import { createProvider, generateStructured, type LlmUsageTracker, type ProviderOptions } from '../llm/index.ts';
import { DIALOGUE_SYSTEM_PROMPT, loadPromptSections, renderDialoguePrompt } from '../llm/prompts.ts';
import type { LlmProvider } from '../llm/types.ts';
import { describeTargets, dialogue } from '../llm/transcript.ts';
import { dimensionAnswerSchema, turnAnswerSchema } from './answers.ts';
import { computeConversationScore, DEFAULT_SCORING, type Scoring } from './score.ts';
import type { ConversationJudgeInput, Judge, TurnJudgeInput } from './types.ts';
import { completedTargetShare, describeT, targetsCountedInT } from './targets.ts';

export const JUDGE_PROMPTS = {
  system: DIALOGUE_SYSTEM_PROMPT,
  turn: 'judge/turn-labels.v6',
  dimension: 'judge/dimension.v5',
  rubrics: 'judge/rubrics.v2',
} as const;

export interface LlmJudgeOptions {
  tracker?: LlmUsageTracker;
  temperature?: number;
  /** default: the conversation's rngSeed */
  seed?: number;
  maxRetries?: number;
  maxTokens?: number;
  scoring?: Scoring;
  provider?: ProviderOptions;
  /** an already built provider (shared with the simulator, or a test double) */
  llm?: LlmProvider;
}

/** The turn judge's prompt (EvaluateTurn), shared by the LLM judge and the technique judges: the dialogue with the judged turn last, then the task. */
export function renderTurnJudgePrompt(input: TurnJudgeInput): { system: string; user: string } {
  const judged = { index: input.turnIndex, context: input.context, utterance: input.utterance, reply: input.reply };
  return renderDialoguePrompt(JUDGE_PROMPTS.turn, {
    dialogue: dialogue([...input.history, judged]),
    targets: describeTargets(input.targets),
    turn: String(input.turnIndex + 1),
  });
}

/**
 * The four rubric evaluators' prompts (EvaluateConversation), one per dimension, shared by the LLM judge and the technique
 * judges: a conversation's four requests are the same text up to the last part, the dimension's rubric.
 */
export function renderDimensionJudgePrompts(input: ConversationJudgeInput): [Dimension, { system: string; user: string }][] {
  const rubrics = loadPromptSections(JUDGE_PROMPTS.rubrics);
  const shared = { persona: input.spec.persona, targets: describeTargets(input.targets), dialogue: dialogue(input.turns) };
  return DIMENSIONS.map((dimension) => [dimension, renderDialoguePrompt(JUDGE_PROMPTS.dimension, { ...shared, rubric: rubrics[dimension] })]);
}

/** The conversation verdict from the four dimension answers (or their errors): C from the shared scorer; any failed dimension makes it a judge_error. */
export function conversationVerdictFrom(
  judge: string,
  input: ConversationJudgeInput,
  outcomes: readonly (readonly [Dimension, { ok: true; value: { score: 0 | 1 | 2; reasoning: string } } | { ok: false; error: string }])[],
  scoring: Scoring,
  describe: string,
): ConversationVerdict {
  const counted = targetsCountedInT(input.targets, input.turns, judge);
  const completedShare = completedTargetShare(counted.statuses);
  const dimensions: ConversationVerdict['dimensions'] = {};
  const failures: string[] = [];
  for (const [dimension, result] of outcomes) {
    if (result.ok) dimensions[dimension] = { score: result.value.score, reasoning: result.value.reasoning };
    else failures.push(`${dimension}: ${result.error}`);
  }
  if (failures.length) {
    return { tier: 'llm', judge, outcome: 'judge_error', dimensions, completedShare, score: null, pass: null, reasoning: `${describe} ${judge}: ${failures.join('; ')}` };
  }
  const scores = Object.fromEntries(Object.entries(dimensions).map(([d, s]) => [d, s.score])) as Partial<Record<Dimension, 0 | 1 | 2>>;
  const { score, pass } = computeConversationScore(scores, completedShare, scoring);
  return { tier: 'llm', judge, outcome: 'judged', dimensions, completedShare, score, pass, reasoning: describeT(completedShare, counted) };
}

class LlmJudge implements Judge {
  readonly tier = 'llm' as const;
  readonly ref: string;
  readonly prompts = Object.values(JUDGE_PROMPTS);
  private readonly scoring: Scoring;

  constructor(
    private readonly provider: LlmProvider,
    private readonly options: LlmJudgeOptions,
  ) {
    this.ref = provider.ref;
    this.scoring = options.scoring ?? DEFAULT_SCORING;
  }

  private request(system: string, user: string, seed: number, repeat: number) {
    return {
      messages: [
        { role: 'system' as const, content: system },
        { role: 'user' as const, content: user },
      ],
      temperature: this.options.temperature ?? 0,
      seed: this.options.seed ?? seed,
      ...(this.options.maxTokens ? { maxTokens: this.options.maxTokens } : {}),
      repeat,
    };
  }

  async evaluateTurn(input: TurnJudgeInput): Promise<TurnVerdict> {
    const prompt = renderTurnJudgePrompt(input);
    const result = await generateStructured(
      this.provider,
      this.request(prompt.system, prompt.user, input.spec.rngSeed, input.spec.repeat),
      turnAnswerSchema(input.targets.map((t) => t.id)),
      { kind: 'judge', tracker: this.options.tracker, maxRetries: this.options.maxRetries, schemaName: 'turn_verdict', conversationKey: input.spec.key },
    );
    if (!result.ok) {
      return { tier: 'llm', judge: this.ref, outcome: 'judge_error', labels: [], targetUpdates: [], reasoning: `LLM judge ${this.ref}: ${result.error.message}` };
    }
    return {
      tier: 'llm',
      judge: this.ref,
      outcome: 'judged',
      labels: result.value.labels.map(({ label, targetId, evidence }) => ({ label, targetId, evidence, tier: 'llm' as const })),
      targetUpdates: result.value.targetUpdates,
      reasoning: result.value.reasoning,
    };
  }

  /** Four independent evaluators, one call each; C comes from the shared scorer. Any failed evaluator makes the verdict a judge_error. */
  async evaluateConversation(input: ConversationJudgeInput): Promise<ConversationVerdict> {
    const outcomes = await Promise.all(
      renderDimensionJudgePrompts(input).map(async ([dimension, prompt]) => {
        const result = await generateStructured(this.provider, this.request(prompt.system, prompt.user, input.spec.rngSeed, input.spec.repeat), dimensionAnswerSchema(), {
          kind: 'judge',
          tracker: this.options.tracker,
          maxRetries: this.options.maxRetries,
          schemaName: `dimension_${dimension}`,
          conversationKey: input.spec.key,
        });
        return [dimension, result.ok ? result : { ok: false as const, error: result.error.message }] as const;
      }),
    );
    return conversationVerdictFrom(this.ref, input, outcomes, this.scoring, 'LLM judge');
  }
}

/** The model-driven judge tier (turn labels with the paper's taxonomy; four rubric evaluators per conversation). */
export function createLlmJudge(ref: string, options: LlmJudgeOptions = {}): Judge {
  return new LlmJudge(options.llm ?? createProvider(ref, options.provider), options);
}
