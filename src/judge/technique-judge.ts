import type { ConversationVerdict, TurnVerdict } from '../domain/conversation.ts';
import { PER_TARGET_LABELS, FAILURE_LABELS, type Dimension, type FailureLabel } from '../domain/taxonomy.ts';
import type { Method } from '../domain/method.ts';
import { createProvider, type LlmUsageTracker, type ProviderOptions } from '../llm/index.ts';
import { parseJudgeRef } from '../llm/modelRef.ts';
import { delimitUntrusted, loadPromptSections, renderTemplate } from '../llm/prompts.ts';
import type { ChatMessage, LlmProvider } from '../llm/types.ts';
import { conversationVerdictFrom, JUDGE_PROMPTS, renderDimensionJudgePrompts, renderTurnJudgePrompt } from './llm.ts';
import { dimensionAnswerSchema, turnAnswerSchema, type AnswerOptions, type DimensionAnswer, type TurnAnswer } from './answers.ts';
import { DEFAULT_SCORING, type Scoring } from './score.ts';
import { runTechnique, TECHNIQUE_PROFILES, type AnswerKind, type Persona, type Technique, type TechniqueQuestion, type TechniqueVote } from '../llm/technique.ts';
import type { ConversationJudgeInput, Judge, TurnJudgeInput } from './types.ts';

export const TECHNIQUE_PROMPT = 'judge/techniques.v1';

function section(name: string): string {
  const text = loadPromptSections(TECHNIQUE_PROMPT)[name];
  if (text === undefined) throw new Error(`prompt "${TECHNIQUE_PROMPT}" has no "=== ${name} ===" section`);
  return text;
}

/** The judge prompt's system part for a technique: a persona's line first (mab, mad), the confidence request last (ar). */
function systemFor(system: string, kind: AnswerKind, persona: Persona | null): string {
  return [persona ? section(`persona-${persona}`) : null, system, kind === 'confidence' ? section('answer-confidence') : null].filter(Boolean).join('\n\n');
}

const debate = (others: string) => renderTemplate(section('debate'), { others: delimitUntrusted('answers', others) }, TECHNIQUE_PROMPT);

/** What an answer of this kind holds besides the verdict: the reasoning techniques give `why` first, ar also a confidence. */
const answerOptions = (kind: AnswerKind): AnswerOptions => ({ why: kind !== 'io', confidence: kind === 'confidence' });

const labelKey = (l: { label: string; targetId: string | null }) => `${l.label}@${l.targetId ?? ''}`;
const PER_TARGET = new Set<FailureLabel>(PER_TARGET_LABELS);

/**
 * The turn verdict of several answers: a label (with its target) is given when the answers giving
 * it hold at least half the vote weight (an even split flags: the bench prefers flagging to missing
 * a failure), at most one per-target label per target (the heaviest, then taxonomy order); a target
 * update when at least half the weight gives that status.
 */
export function aggregateTurnVotes(votes: readonly TechniqueVote<TurnAnswer>[]): Omit<TurnAnswer, 'confidence'> {
  const total = votes.reduce((s, v) => s + v.weight, 0);
  const weights = new Map<string, { weight: number; label: TurnAnswer['labels'][number] }>();
  const updates = new Map<string, { weight: number; update: TurnAnswer['targetUpdates'][number] }>();
  for (const vote of votes) {
    for (const label of new Map(vote.answer.labels.map((l) => [labelKey(l), l])).values()) {
      const entry = weights.get(labelKey(label)) ?? { weight: 0, label };
      entry.weight += vote.weight;
      weights.set(labelKey(label), entry);
    }
    for (const update of vote.answer.targetUpdates) {
      const key = `${update.targetId}=${update.status}`;
      const entry = updates.get(key) ?? { weight: 0, update };
      entry.weight += vote.weight;
      updates.set(key, entry);
    }
  }
  const order = (l: FailureLabel) => FAILURE_LABELS.indexOf(l);
  const held = [...weights.values()].filter((e) => e.weight * 2 >= total).sort((a, b) => b.weight - a.weight || order(a.label.label) - order(b.label.label));
  const perTargetTaken = new Set<string>();
  const labels = held
    .filter(({ label }) => {
      if (!PER_TARGET.has(label.label)) return true;
      if (perTargetTaken.has(label.targetId!)) return false;
      perTargetTaken.add(label.targetId!);
      return true;
    })
    .map((e) => e.label)
    .sort((a, b) => order(a.label) - order(b.label));
  const updateTaken = new Set<string>();
  const targetUpdates = [...updates.values()]
    .filter((e) => e.weight * 2 >= total)
    .sort((a, b) => b.weight - a.weight)
    .filter(({ update }) => !updateTaken.has(update.targetId) && updateTaken.add(update.targetId))
    .map((e) => e.update);
  const chosen = new Set(labels.map(labelKey));
  const agreeing = votes.find((v) => v.answer.labels.length === chosen.size && v.answer.labels.every((l) => chosen.has(labelKey(l))));
  return { labels, targetUpdates, reasoning: (agreeing ?? votes[0]).answer.reasoning };
}

/** The rubric score of several answers: the score with the most vote weight; a tie goes to the lower score (flagging). */
export function aggregateDimensionVotes(votes: readonly TechniqueVote<DimensionAnswer>[]): DimensionAnswer {
  const weight = (score: number) => votes.filter((v) => v.answer.score === score).reduce((s, v) => s + v.weight, 0);
  // ascending, and only a strictly heavier score replaces the best: a tie keeps the lower score
  const score = ([0, 1, 2] as const).reduce<0 | 1 | 2>((best, s) => (weight(s) > weight(best) ? s : best), 0);
  return { score, reasoning: votes.find((v) => v.answer.score === score)!.answer.reasoning };
}

function voteNote(technique: Technique, votes: readonly TechniqueVote<unknown>[], describe: (v: TechniqueVote<unknown>) => string): string {
  return `${technique}: ${votes.length} answer(s) [${votes.map(describe).join('; ')}]`;
}

/** A worked example: the judge's prompt (user part) and the answer as JSON. */
export type WorkedExample = [ChatMessage, ChatMessage];

/** Worked examples for the CoT-n techniques, made by whoever builds the judge (the dialogue kind: src/kinds/dialogue/technique-examples.ts). */
export interface WorkedExamples {
  turns(): Promise<WorkedExample[]>;
  dimensions(): Promise<Record<Dimension, WorkedExample[]>>;
}

export interface TechniqueJudgeOptions {
  /** the CoT-n techniques' worked examples; a cot-n judge without them cannot run */
  workedExamples?: WorkedExamples;
  tracker?: LlmUsageTracker;
  /** base seed; default: the conversation's rngSeed */
  seed?: number;
  maxRetries?: number;
  maxTokens?: number;
  scoring?: Scoring;
  provider?: ProviderOptions;
  /** already built providers (test doubles); default: created from the reference */
  llms?: LlmProvider[];
  /** lab (default) or the paper's technique parameters (SC at temperature 0 after the worked examples, AR-CoT-5; src/llm/technique.ts) */
  method?: Method;
}

/**
 * A campaign judge that runs a prompting technique of src/llm/technique.ts on the LLM judge's
 * questions: for each turn the turn-label question, for each conversation the four rubric
 * questions, each answered by the technique's calls and decided by its vote. It gives turn labels
 * and dimension scores through the same Judge interface as the LLM judge (src/judge/llm.ts), every
 * call recorded by the run's tracker. Reference: `TECHNIQUE:MODEL_REF` (src/llm/modelRef.ts).
 */
class TechniqueJudge implements Judge {
  readonly tier = 'llm' as const;
  readonly prompts = [...Object.values(JUDGE_PROMPTS), TECHNIQUE_PROMPT];
  private readonly scoring: Scoring;
  // the worked examples are the same for every call of the run: picked and rendered once
  private turnExamples?: ReturnType<WorkedExamples['turns']>;
  private dimensionExamples?: ReturnType<WorkedExamples['dimensions']>;

  /** whether this technique shows worked examples: CoT-n always; SC and AR under the paper's profile (their CoT-5 base) */
  private showsExamples(): boolean {
    const profile = TECHNIQUE_PROFILES[this.options.method ?? 'lab'];
    if (this.technique.startsWith('cot-')) return true;
    if (this.technique.startsWith('sc-') || this.technique.startsWith('adaptive-sc-')) return profile.scExamples > 0;
    return this.technique === 'ar' && profile.arExamples > 0;
  }

  /** the worked examples a CoT-n technique shows the model; without them such a judge fails loudly */
  private workedExamples(): WorkedExamples {
    if (!this.options.workedExamples) throw new Error(`${this.ref}: a ${this.technique} judge needs worked examples (createTechniqueJudge's workedExamples); the dialogue kind builds them`);
    return this.options.workedExamples;
  }

  constructor(
    readonly ref: string,
    private readonly technique: Technique,
    private readonly providers: readonly LlmProvider[],
    private readonly options: TechniqueJudgeOptions,
  ) {
    this.scoring = options.scoring ?? DEFAULT_SCORING;
  }

  private run<A>(question: TechniqueQuestion<A>, seed: number, conversationKey: string, schemaName: string) {
    return runTechnique(this.technique, this.providers, question, {
      seed: this.options.seed ?? seed,
      maxRetries: this.options.maxRetries,
      maxTokens: this.options.maxTokens,
      tracker: this.options.tracker,
      conversationKey,
      schemaName,
      method: this.options.method,
    });
  }

  async evaluateTurn(input: TurnJudgeInput): Promise<TurnVerdict> {
    const prompt = renderTurnJudgePrompt(input);
    const targetIds = input.targets.map((t) => t.id);
    const examples = this.showsExamples() ? await (this.turnExamples ??= this.workedExamples().turns()) : [];
    const question: TechniqueQuestion<TurnAnswer> = {
      schema: (kind) => turnAnswerSchema(targetIds, answerOptions(kind)),
      opening: (kind, persona, n) => [{ role: 'system', content: systemFor(prompt.system, kind, persona) }, ...examples.slice(0, n).flat(), { role: 'user', content: prompt.user }],
      debate,
      key: (a) => [...a.labels.map(labelKey)].sort().join(',') || 'no labels',
      describe: (a) => `${a.labels.map((l) => l.label + (l.targetId ? ` (${l.targetId})` : '')).join(', ') || 'no failure'}. ${a.reasoning}`,
    };
    const { votes, errors } = await this.run(question, input.spec.rngSeed, input.spec.key, 'turn_verdict');
    if (votes.length === 0) {
      return { tier: 'llm', judge: this.ref, outcome: 'judge_error', labels: [], targetUpdates: [], reasoning: `technique judge ${this.ref}: ${errors[errors.length - 1] ?? 'no usable answer'}` };
    }
    const verdict = aggregateTurnVotes(votes);
    const note = voteNote(this.technique, votes, (v) => `${question.key(v.answer as TurnAnswer)}${v.weight !== 1 ? ` ×${v.weight}` : ''}`);
    return {
      tier: 'llm',
      judge: this.ref,
      outcome: 'judged',
      labels: verdict.labels.map(({ label, targetId, evidence }) => ({ label, targetId, evidence, tier: 'llm' as const })),
      targetUpdates: verdict.targetUpdates,
      reasoning: `${note}. ${verdict.reasoning}`,
    };
  }

  async evaluateConversation(input: ConversationJudgeInput): Promise<ConversationVerdict> {
    const examples = this.showsExamples() ? await (this.dimensionExamples ??= this.workedExamples().dimensions()) : null;
    const outcomes = await Promise.all(
      renderDimensionJudgePrompts(input).map(async ([dimension, prompt]) => {
        const question: TechniqueQuestion<DimensionAnswer> = {
          schema: (kind) => dimensionAnswerSchema(answerOptions(kind)),
          opening: (kind, persona, n) => [
            { role: 'system', content: systemFor(prompt.system, kind, persona) },
            ...(examples?.[dimension] ?? []).slice(0, n).flat(),
            { role: 'user', content: prompt.user },
          ],
          debate,
          key: (a) => String(a.score),
          describe: (a) => `score ${a.score}. ${a.reasoning}`,
        };
        const { votes, errors } = await this.run(question, input.spec.rngSeed, input.spec.key, `dimension_${dimension}`);
        if (votes.length === 0) return [dimension, { ok: false as const, error: errors[errors.length - 1] ?? 'no usable answer' }] as const;
        const chosen = aggregateDimensionVotes(votes);
        const note = voteNote(this.technique, votes, (v) => `${(v.answer as DimensionAnswer).score}${v.weight !== 1 ? ` ×${v.weight}` : ''}`);
        return [dimension, { ok: true as const, value: { score: chosen.score, reasoning: `${note}. ${chosen.reasoning}` } }] as const;
      }),
    );
    return conversationVerdictFrom(this.ref, input, outcomes satisfies (readonly [Dimension, unknown])[], this.scoring, 'technique judge');
  }
}

/**
 * A technique judge from its reference (`sc-5:ollama:qwen3:14b`, `ar:ollama:a+ollama:b`, …); the
 * reference is validated (JudgeRefError names the accepted forms).
 */
export function createTechniqueJudge(ref: string, options: TechniqueJudgeOptions = {}): Judge {
  const parsed = parseJudgeRef(ref);
  if (!parsed.technique) throw new Error(`createTechniqueJudge: "${ref}" names no technique (a plain model judge is createLlmJudge's)`);
  const providers = options.llms ?? parsed.models.map((model) => createProvider(model, options.provider));
  return new TechniqueJudge(ref, parsed.technique, providers, options);
}

