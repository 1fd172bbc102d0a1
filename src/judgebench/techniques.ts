import { z } from 'zod';
import { generateStructured } from '../llm/structured.ts';
import { loadPromptSections, renderTemplate, delimitUntrusted } from '../llm/prompts.ts';
import type { ChatMessage, ChatRequest, ChatResponse, LlmProvider } from '../llm/types.ts';
import { weekdayOf, type Pair } from './dataset.ts';
import { generateDataset } from './generator.ts';
import { explainVerdict, oracleVerdict } from './oracle.ts';

/**
 * The prompting techniques of Habicht et al. as LLM judges over any LlmProvider:
 * io (direct answer), cot-n (n worked examples with reasoning), sc-n (majority of n sampled
 * reasoning paths), adaptive-sc-n (sc-n that stops once the majority cannot change), mab (three
 * personas, majority), mad (persona debate up to 3 rounds until consensus, then majority), and
 * ar (several models, each with a confidence, calibrated and weighted).
 */

export const TECHNIQUES = ['io', 'cot-1', 'cot-3', 'cot-5', 'sc-3', 'sc-5', 'adaptive-sc-3', 'adaptive-sc-5', 'mab', 'mad', 'ar'] as const;
export const TechniqueSchema = z.enum(TECHNIQUES);
export type Technique = z.infer<typeof TechniqueSchema>;

export const PROMPT_ID = 'judgebench/context-fit.v1';
export const PERSONAS = ['investigator', 'forensic-examiner', 'auditor'] as const;
export const MAD_MAX_ROUNDS = 3;
/** Sampling temperature for the self-consistency paths (single-answer techniques use 0). */
export const SAMPLING_TEMPERATURE = 0.7;

const IoAnswerSchema = z.object({ fits: z.boolean() });
const CotAnswerSchema = z.object({ reasoning: z.string(), fits: z.boolean() });
const ConfidentAnswerSchema = z.object({ reasoning: z.string(), fits: z.boolean(), confidence: z.number().min(0).max(1) });
type CotAnswer = z.infer<typeof CotAnswerSchema>;

/**
 * The paper's calibration step function for AR: a stated confidence becomes a vote weight
 * of 1.0 (≥ 0.9), 0.8 (≥ 0.7), 0.5 (≥ 0.5), 0.3 (≥ 0.3) or 0.1 (below).
 */
export function calibrateConfidence(confidence: number): number {
  if (confidence >= 0.9) return 1.0;
  if (confidence >= 0.7) return 0.8;
  if (confidence >= 0.5) return 0.5;
  if (confidence >= 0.3) return 0.3;
  return 0.1;
}

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

function section(name: string): string {
  const sections = loadPromptSections(PROMPT_ID);
  const text = sections[name];
  if (text === undefined) throw new Error(`prompt "${PROMPT_ID}" has no "=== ${name} ===" section`);
  return text;
}

/** What the LLM judge sees: the context and the utterance, never the structured preferences. */
export function renderPairMessage(pair: Pair): string {
  const { system: s } = pair;
  const recommendation = JSON.stringify(
    {
      name: s.name,
      location: s.location.description,
      cuisine_type: s.cuisine_type,
      menu: s.menu,
      cost: s.cost,
      rating: s.rating,
      opening_hours: s.opening_hours,
      distance_km: s.distance_km,
      duration_min: s.duration_min,
    },
    null,
    1,
  );
  const filled = renderTemplate(
    section('user'),
    {
      location: pair.user.location.description,
      weekday: weekdayOf(pair.user.date),
      date: pair.user.date,
      time: pair.user.time,
      utterance: pair.user.utterance.replace(/<\s*\/?\s*request/gi, '‹request'),
      recommendation: recommendation.replace(/<\s*\/?\s*recommendation/gi, '‹recommendation'),
    },
    PROMPT_ID,
  );
  return filled;
}

function systemPrompt(answer: 'answer-io' | 'answer-cot' | 'answer-confidence', persona?: (typeof PERSONAS)[number]): string {
  return renderTemplate(section('system'), { persona: persona ? `${section(`persona-${persona}`)}\n` : '', answer: section(answer) }, PROMPT_ID);
}

/** Worked examples for CoT-n: fixed pairs from a separate seed, reasoned by the oracle (correct first, then one per error kind). */
const EXAMPLE_ORDER = ['none', 'cuisine', 'time', 'rating', 'location'] as const;
let examplePairs: Pair[] | null = null;
function workedExamples(n: number): ChatMessage[] {
  examplePairs ??= generateDataset({ seed: 20240101, users: 1, includePreferences: true });
  return EXAMPLE_ORDER.slice(0, n).flatMap((category) => {
    const pair = examplePairs!.find((p) => p.error_category === category)!;
    const verdict = oracleVerdict(pair);
    const stripped = { ...pair, user: { ...pair.user, preferences: undefined } };
    return [
      { role: 'user' as const, content: renderPairMessage(stripped) },
      { role: 'assistant' as const, content: JSON.stringify({ reasoning: explainVerdict(pair, verdict), fits: verdict.fits }) },
    ];
  });
}

export interface TechniqueOptions {
  /** retries of a structured call whose output does not validate (default: the provider layer's default) */
  maxRetries?: number;
  /** base seed; sampled paths use seed + index so runs are repeatable where the server honours seeds */
  seed?: number;
  signal?: AbortSignal;
}

type Ask<T> = (messages: ChatMessage[], temperature: number, seed: number) => Promise<T | null>;

function asker<S extends z.ZodType>(provider: LlmProvider, schema: S, options: TechniqueOptions, errors: string[]): Ask<z.output<S>> {
  return async (messages, temperature, seed) => {
    const result = await generateStructured(provider, { messages, temperature, seed, signal: options.signal }, schema, {
      kind: 'judge',
      maxRetries: options.maxRetries,
      schemaName: 'verdict',
    });
    if (result.ok) return result.value;
    errors.push(result.error.message);
    return null;
  };
}

function majority(votes: readonly boolean[]): boolean | null {
  if (votes.length === 0) return null;
  const yes = votes.filter(Boolean).length;
  // an even split counts as "does not fit": the bench prefers flagging to missing a failure
  return yes * 2 > votes.length;
}

/**
 * Self-consistency: n sampled reasoning paths, majority vote. Adaptive: the first ⌈(n+1)/2⌉
 * paths are needed anyway and run together; after that one at a time, stopping as soon as the
 * leader's count exceeds the other's plus the paths left (the majority can no longer change).
 */
async function selfConsistency(ask: Ask<CotAnswer>, messages: ChatMessage[], n: number, adaptive: boolean, seed: number): Promise<boolean[]> {
  const sample = (i: number) => ask(messages, SAMPLING_TEMPERATURE, seed + i).then((a) => a?.fits ?? null);
  if (!adaptive) return (await Promise.all(Array.from({ length: n }, (_, i) => sample(i)))).filter((v): v is boolean => v !== null);
  const needed = Math.ceil((n + 1) / 2);
  const results: (boolean | null)[] = await Promise.all(Array.from({ length: needed }, (_, i) => sample(i)));
  for (let i = needed; i < n; i++) {
    const yes = results.filter((v) => v === true).length;
    const no = results.filter((v) => v === false).length;
    if (Math.abs(yes - no) > n - i) break;
    results.push(await sample(i));
  }
  return results.filter((v): v is boolean => v !== null);
}

function describeAnswer(persona: string, answer: CotAnswer): string {
  return `- ${persona}: ${answer.fits ? 'fits' : 'does not fit'}. ${answer.reasoning}`;
}

/** Runs one technique on one pair. AR needs at least two providers; the others use the first. */
export async function judgePair(technique: Technique, providers: readonly LlmProvider[], pair: Pair, options: TechniqueOptions = {}): Promise<PairJudgment> {
  if (providers.length === 0) throw new Error(`technique ${technique}: no model given`);
  if (technique === 'ar' && providers.length < 2) throw new Error('technique ar (answer routing across models) needs at least two models');
  const usage: Usage = { calls: 0, tokensIn: 0, tokensOut: 0 };
  const errors: string[] = [];
  const models = providers.map((p) => metered(p, usage));
  const seed = options.seed ?? 1;
  const pairMessage: ChatMessage = { role: 'user', content: renderPairMessage(pair) };
  let votes: boolean[];
  let fits: boolean | null;

  if (technique === 'io') {
    const answer = await asker(models[0], IoAnswerSchema, options, errors)([{ role: 'system', content: systemPrompt('answer-io') }, pairMessage], 0, seed);
    votes = answer ? [answer.fits] : [];
    fits = majority(votes);
  } else if (technique.startsWith('cot-')) {
    const n = Number(technique.slice(4));
    const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt('answer-cot') }, ...workedExamples(n), pairMessage];
    const answer = await asker(models[0], CotAnswerSchema, options, errors)(messages, 0, seed);
    votes = answer ? [answer.fits] : [];
    fits = majority(votes);
  } else if (technique.startsWith('sc-') || technique.startsWith('adaptive-sc-')) {
    const adaptive = technique.startsWith('adaptive-');
    const n = Number(technique.slice(technique.lastIndexOf('-') + 1));
    const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt('answer-cot') }, pairMessage];
    votes = await selfConsistency(asker(models[0], CotAnswerSchema, options, errors), messages, n, adaptive, seed);
    fits = majority(votes);
  } else if (technique === 'mab' || technique === 'mad') {
    const ask = asker(models[0], CotAnswerSchema, options, errors);
    const opening = (persona: (typeof PERSONAS)[number]): ChatMessage[] => [{ role: 'system', content: systemPrompt('answer-cot', persona) }, pairMessage];
    let answers = await Promise.all(PERSONAS.map((persona, i) => ask(opening(persona), 0, seed + i)));
    const rounds = technique === 'mab' ? 1 : MAD_MAX_ROUNDS;
    for (let round = 2; round <= rounds; round++) {
      const current = answers.filter((a): a is CotAnswer => a !== null);
      if (current.length > 0 && current.every((a) => a.fits === current[0].fits) && current.length === PERSONAS.length) break;
      const previous = answers;
      answers = await Promise.all(
        PERSONAS.map((persona, i) => {
          const others = PERSONAS.map((p, j) => (j !== i && previous[j] ? describeAnswer(p, previous[j]!) : null)).filter(Boolean).join('\n');
          const debate = renderTemplate(section('debate'), { others: delimitUntrusted('answers', others || '(no usable answers)') }, PROMPT_ID);
          const own = previous[i] ? [{ role: 'assistant' as const, content: JSON.stringify(previous[i]) }] : [];
          return ask([...opening(persona), ...own, { role: 'user', content: debate }], 0, seed + round * 10 + i);
        }),
      );
    }
    votes = answers.filter((a): a is CotAnswer => a !== null).map((a) => a.fits);
    fits = majority(votes);
  } else {
    const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt('answer-confidence') }, pairMessage];
    const answers = await Promise.all(models.map((m, i) => asker(m, ConfidentAnswerSchema, options, errors)(messages, 0, seed + i)));
    const usable = answers.filter((a): a is z.infer<typeof ConfidentAnswerSchema> => a !== null);
    votes = usable.map((a) => a.fits);
    const weightFor = (value: boolean) => usable.filter((a) => a.fits === value).reduce((s, a) => s + calibrateConfidence(a.confidence), 0);
    // equal weights count as "does not fit", as with the other majority votes
    fits = usable.length === 0 ? null : weightFor(true) > weightFor(false);
  }

  return {
    fits,
    votes,
    ...usage,
    ...(fits === null ? { error: errors[errors.length - 1] ?? 'no usable answer' } : {}),
  };
}
