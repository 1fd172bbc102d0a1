import { z } from 'zod';
import type { ContextVector } from '../domain/context.ts';
import { SimulatedUtteranceSchema, type ConversationSpec, type SimulatedUtterance } from '../domain/conversation.ts';
import type { Target } from '../domain/targets.ts';
import { DEFAULT_CONSECUTIVE_LIMITS, STRATEGIES, StrategySchema, type Strategy } from '../domain/taxonomy.ts';
import { createProvider, generateStructured, type LlmUsageTracker, type ProviderOptions } from '../llm/index.ts';
import { DIALOGUE_SYSTEM_PROMPT, loadPromptSections, renderDialoguePrompt } from '../llm/prompts.ts';
import { describeContext, describeTargets, dialogue } from '../llm/transcript.ts';
import type { LlmProvider } from '../llm/types.ts';
import { ExtractedTargetsSchema, utteranceAnswerSchema } from './answers.ts';
import { SimulatorError, type SimulatorSession, type SimulatorTurnInput, type UserSimulator } from './types.ts';

/** Prompt files (prompts/<id>.md) this simulator uses; a new prompt version is a new file. */
export const SIMULATOR_PROMPTS = {
  system: DIALOGUE_SYSTEM_PROMPT,
  extractTargets: 'simulator/extract-targets.v3',
  opening: 'simulator/opening-utterance.v4',
  next: 'simulator/select-and-generate.v5',
  strategies: 'simulator/strategies.v3',
  personas: 'simulator/personas.v1',
} as const;

export interface LlmSimulatorOptions {
  tracker?: LlmUsageTracker;
  /** paper default 0 */
  temperature?: number;
  /** default: the conversation's rngSeed, so each conversation is reproducible and repeats differ */
  seed?: number;
  maxRetries?: number;
  maxTokens?: number;
  consecutiveLimits?: Partial<Record<Strategy, number>>;
  provider?: ProviderOptions;
  /** an already built provider (shared with the judge, or a test double) instead of one built from the ref */
  llm?: LlmProvider;
}

class LlmSimulatorSession implements SimulatorSession {
  constructor(
    private readonly simulator: LlmSimulator,
    private readonly spec: ConversationSpec,
  ) {}

  async extractTargets(): Promise<Target[]> {
    const prompt = renderDialoguePrompt(SIMULATOR_PROMPTS.extractTargets, {
      seed: this.spec.seed.text,
      city: this.spec.seed.city ?? this.spec.context.location.city,
      context: describeContext(this.spec.context),
    });
    const value = await this.simulator.ask(this.spec, prompt, ExtractedTargetsSchema, 'targets', 'ExtractTargets');
    return value.targets.map((request, i) => ({ id: `g${i + 1}`, request, status: 0, introducedTurn: null, completedTurn: null }));
  }

  async openingUtterance(targets: readonly Target[], context: ContextVector): Promise<SimulatedUtterance> {
    const prompt = renderDialoguePrompt(SIMULATOR_PROMPTS.opening, {
      persona: this.spec.persona,
      personaStyle: personaStyle(this.spec.persona),
      seed: this.spec.seed.text,
      context: describeContext(context),
      targets: describeTargets(targets),
    });
    const schema = utteranceAnswerSchema(targets.map((t) => t.id), null);
    const value = await this.simulator.ask(this.spec, prompt, schema, 'utterance', 'GenerateUtterance');
    return SimulatedUtteranceSchema.parse({ text: value.text, strategy: null, annotation: value.annotation });
  }

  async nextUtterance(input: SimulatorTurnInput): Promise<SimulatedUtterance> {
    const allowed = this.spec.mode === 'baseline' ? [] : this.simulator.allowedStrategies(input);
    const prompt = renderDialoguePrompt(SIMULATOR_PROMPTS.next, {
      dialogue: dialogue(input.history),
      persona: this.spec.persona,
      personaStyle: personaStyle(this.spec.persona),
      turn: String(input.turnIndex + 1),
      maxTurns: String(this.spec.maxTurns),
      context: describeContext(input.context),
      targets: describeTargets(input.targets),
      strategies: describeStrategies(allowed),
    });
    const schema = utteranceAnswerSchema(input.targets.map((t) => t.id), allowed);
    const value = await this.simulator.ask(this.spec, prompt, schema, 'next_utterance', 'SelectAndGenerate');
    return SimulatedUtteranceSchema.parse(value);
  }
}

/** The strategies available now, each with what it asks of the driver, in taxonomy order; none: pursue the targets plainly. */
function describeStrategies(allowed: readonly Strategy[]): string {
  const sections = loadPromptSections(SIMULATOR_PROMPTS.strategies);
  if (!allowed.length) return sections.none;
  return STRATEGIES.filter((s) => allowed.includes(s))
    .map((s) => `${s} (${sections[s]})`)
    .join('; ');
}

function personaStyle(persona: string): string {
  return loadPromptSections(SIMULATOR_PROMPTS.personas)[persona] ?? 'plain, clear requests.';
}

class LlmSimulator implements UserSimulator {
  readonly kind = 'llm' as const;
  readonly describe: string;
  readonly prompts = Object.values(SIMULATOR_PROMPTS);
  private readonly limits: Record<Strategy, number>;

  constructor(
    private readonly provider: LlmProvider,
    private readonly options: LlmSimulatorOptions,
  ) {
    this.describe = provider.ref;
    this.limits = { ...DEFAULT_CONSECUTIVE_LIMITS, ...options.consecutiveLimits };
  }

  startConversation(spec: ConversationSpec): SimulatorSession {
    return new LlmSimulatorSession(this, spec);
  }

  /** Π minus the strategies that hit their consecutive-use limit (paper: safety 1, constraint 2). */
  allowedStrategies(input: SimulatorTurnInput): Strategy[] {
    return input.activeStrategies.filter((s) => StrategySchema.safeParse(s).success && (input.consecutiveUses[s] ?? 0) < this.limits[s]);
  }

  async ask<S extends z.ZodType>(spec: ConversationSpec, prompt: { system: string; user: string }, schema: S, schemaName: string, step: string): Promise<z.output<S>> {
    const result = await generateStructured(
      this.provider,
      {
        messages: [
          { role: 'system', content: prompt.system },
          { role: 'user', content: prompt.user },
        ],
        temperature: this.options.temperature ?? 0,
        seed: this.options.seed ?? spec.rngSeed,
        ...(this.options.maxTokens ? { maxTokens: this.options.maxTokens } : {}),
        repeat: spec.repeat,
      },
      schema,
      { kind: 'simulator', tracker: this.options.tracker, maxRetries: this.options.maxRetries, schemaName, conversationKey: spec.key },
    );
    if (!result.ok) throw new SimulatorError(`LLM simulator ${this.provider.ref}, ${step}: ${result.error.message}`, result.error);
    return result.value;
  }
}

/** The model-driven user simulator (Algorithm 1: ExtractTargets, GenerateUtterance, SelectAndGenerate). */
export function createLlmSimulator(ref: string, options: LlmSimulatorOptions = {}): UserSimulator {
  return new LlmSimulator(options.llm ?? createProvider(ref, options.provider), options);
}
