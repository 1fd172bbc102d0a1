import { z } from 'zod';
import type { Method } from '../domain/method.ts';
import { runTechnique, type AnswerKind, type Persona, type Technique, type TechniqueQuestion } from '../llm/technique.ts';
import { loadPromptSections, renderTemplate, delimitUntrusted, untrustedJson } from '../llm/prompts.ts';
import type { ChatMessage, ChatRequest, ChatResponse, LlmProvider } from '../llm/types.ts';
import { weekdayOf, type Pair } from './dataset.ts';
import { generateDataset } from './generator.ts';
import { explainVerdict, oracleVerdict } from './oracle.ts';

/**
 * The judge benchmark's question ("does this recommendation fit the request?") for the technique
 * engine of src/llm/technique.ts, which campaign judges share: the prompts, the worked examples
 * of CoT-n and the vote (a majority of fits; AR weighs each model's calibrated confidence).
 */
export { TECHNIQUES, TechniqueSchema, PERSONAS, MAD_MAX_ROUNDS, SAMPLING_TEMPERATURE, calibrateConfidence, type Technique } from '../llm/technique.ts';

/**
 * The judge's prompt per method. The lab's names the request's weekday and describes places by their district; the
 * paper's is Habicht et al.'s Table 3 template with the rules of their §5.4: the User Block as the paper passes it
 * (utterance, location with coordinates and district label, date, time, no weekday), the Recommendation with its
 * coordinates.
 */
export const PROMPT_IDS: Record<Method, string> = { lab: 'judgebench/context-fit.v2', paper: 'judgebench/context-fit-paper.v1' };

const IoAnswerSchema = z.object({ fits: z.boolean() });
const CotAnswerSchema = z.object({ reasoning: z.string(), fits: z.boolean() });
const ConfidentAnswerSchema = z.object({ reasoning: z.string(), fits: z.boolean(), confidence: z.number().min(0).max(1) });
type PairAnswer = { fits: boolean; reasoning?: string; confidence?: number };

export interface Usage {
  calls: number;
  tokensIn: number;
  tokensOut: number;
  /** tokens by model reference, for pricing */
  byModel?: Record<string, { tokensIn: number; tokensOut: number }>;
}

export interface PairJudgment extends Usage {
  /** the judge's verdict, or null when every model call for this pair failed */
  fits: boolean | null;
  error?: string;
  /** votes behind the verdict, for the JSON output */
  votes?: boolean[];
}

/** Counts every chat call (failed ones too) and its tokens, per pair. */
function metered(provider: LlmProvider, usage: Usage): LlmProvider {
  return {
    ref: provider.ref,
    kind: provider.kind,
    close: () => provider.close(),
    async chat(request: ChatRequest): Promise<ChatResponse> {
      usage.calls++;
      const response = await provider.chat(request);
      usage.tokensIn += response.promptTokens;
      usage.tokensOut += response.completionTokens;
      usage.byModel ??= {};
      const own = (usage.byModel[provider.ref] ??= { tokensIn: 0, tokensOut: 0 });
      own.tokensIn += response.promptTokens;
      own.tokensOut += response.completionTokens;
      return response;
    },
  };
}

function section(method: Method, name: string): string {
  const id = PROMPT_IDS[method];
  const text = loadPromptSections(id)[name];
  if (text === undefined) throw new Error(`prompt "${id}" has no "=== ${name} ===" section`);
  return text;
}

/** The recommendation as the judge sees it; the lab's prompt gives its place by name only, the paper's with coordinates. */
function recommendationView(pair: Pair, method: Method): Record<string, unknown> {
  const { system: s } = pair;
  return {
    name: s.name,
    location: method === 'paper' ? s.location : s.location.description,
    cuisine_type: s.cuisine_type,
    menu: s.menu,
    cost: s.cost,
    rating: s.rating,
    opening_hours: s.opening_hours,
    distance_km: s.distance_km,
    duration_min: s.duration_min,
    // what the assistant said along with it (the injection set appends instructions here)
    ...(s.note !== undefined ? { note: s.note } : {}),
  };
}

/** What the LLM judge sees: the context and the utterance, never the structured preferences. */
export function renderPairMessage(pair: Pair, method: Method = 'lab'): string {
  const recommendation = delimitUntrusted('recommendation', recommendationView(pair, method));
  if (method === 'paper') {
    const { location, date, time, utterance } = pair.user;
    return renderTemplate(section(method, 'user'), { userBlock: untrustedJson({ utterance, location, date, time }), recommendation }, PROMPT_IDS[method]);
  }
  return renderTemplate(
    section(method, 'user'),
    {
      location: pair.user.location.description,
      weekday: weekdayOf(pair.user.date),
      date: pair.user.date,
      time: pair.user.time,
      utterance: pair.user.utterance.replace(/<\s*\/?\s*request/gi, '‹request'),
      recommendation,
    },
    PROMPT_IDS[method],
  );
}

function systemPrompt(method: Method, answer: AnswerKind, persona: Persona | null): string {
  const instructions = { io: 'answer-io', cot: 'answer-cot', confidence: 'answer-confidence' }[answer];
  return renderTemplate(section(method, 'system'), { persona: persona ? `${section(method, `persona-${persona}`)}\n` : '', answer: section(method, instructions) }, PROMPT_IDS[method]);
}

/**
 * Worked examples for CoT-n: fixed pairs from a separate seed, reasoned by the oracle (correct
 * first, then one per error kind). Cost and time come first among the errors: they are the kinds
 * the paper's judges missed most (Habicht et al., RQ3), so CoT-3 already shows both.
 */
export const EXAMPLE_ORDER = ['none', 'cost', 'time', 'cuisine', 'location', 'rating'] as const;
let examplePairs: Pair[] | null = null;
function workedExamples(method: Method, n: number): ChatMessage[] {
  examplePairs ??= generateDataset({ seed: 20240101, users: 1, includePreferences: true });
  return EXAMPLE_ORDER.slice(0, n).flatMap((category) => {
    const pair = examplePairs!.find((p) => p.error_category === category)!;
    const verdict = oracleVerdict(pair);
    const stripped = { ...pair, user: { ...pair.user, preferences: undefined } };
    return [
      { role: 'user' as const, content: renderPairMessage(stripped, method) },
      { role: 'assistant' as const, content: JSON.stringify({ reasoning: explainVerdict(pair, verdict), fits: verdict.fits }) },
    ];
  });
}

export interface TechniqueOptions {
  /** lab (default) or the paper's technique parameters (src/llm/technique.ts, TECHNIQUE_PROFILES) */
  method?: Method;
  /** retries of a structured call whose output does not validate (default: the provider layer's default) */
  maxRetries?: number;
  /** base seed; sampled paths use seed + index so runs are repeatable where the server honours seeds */
  seed?: number;
  signal?: AbortSignal;
}

/** The benchmark's question about one pair. */
function pairQuestion(pair: Pair, method: Method): TechniqueQuestion<PairAnswer> {
  const pairMessage: ChatMessage = { role: 'user', content: renderPairMessage(pair, method) };
  return {
    schema: (kind) => ({ io: IoAnswerSchema, cot: CotAnswerSchema, confidence: ConfidentAnswerSchema })[kind],
    opening: (kind, persona, examples) => [{ role: 'system', content: systemPrompt(method, kind, persona) }, ...workedExamples(method, examples), pairMessage],
    debate: (others) => renderTemplate(section(method, 'debate'), { others: delimitUntrusted('answers', others) }, PROMPT_IDS[method]),
    key: (answer) => String(answer.fits),
    describe: (answer) => `${answer.fits ? 'fits' : 'does not fit'}${answer.confidence !== undefined ? ` (confidence ${answer.confidence})` : ''}. ${answer.reasoning ?? ''}`,
  };
}

/** Runs one technique on one pair. AR needs at least two providers; the others use the first. */
export async function judgePair(technique: Technique, providers: readonly LlmProvider[], pair: Pair, options: TechniqueOptions = {}): Promise<PairJudgment> {
  const usage: Usage = { calls: 0, tokensIn: 0, tokensOut: 0 };
  const models = providers.map((p) => metered(p, usage));
  const { votes: weighted, errors } = await runTechnique(technique, models, pairQuestion(pair, options.method ?? 'lab'), { maxRetries: options.maxRetries, seed: options.seed ?? 1, signal: options.signal, method: options.method });
  const votes = weighted.map((v) => v.answer.fits);
  const weightFor = (value: boolean) => weighted.filter((v) => v.answer.fits === value).reduce((s, v) => s + v.weight, 0);
  // a majority (AR: of calibrated confidence); an even split counts as "does not fit": the bench prefers flagging to missing a failure
  const fits = weighted.length === 0 ? null : weightFor(true) > weightFor(false);
  return {
    fits,
    votes,
    ...usage,
    ...(fits === null ? { error: errors[errors.length - 1] ?? 'no usable answer' } : {}),
  };
}
