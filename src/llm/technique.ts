import { z } from 'zod';
import type { Method } from '../domain/method.ts';
import { generateStructured } from './structured.ts';
import type { ChatMessage, LlmProvider } from './types.ts';
import type { LlmUsageTracker } from './usage.ts';

/**
 * The prompting techniques of Habicht et al. as one engine over any question a judge asks a model
 * (the judge benchmark's "does this recommendation fit", a campaign judge's turn labels or rubric
 * score): io (one direct answer), cot-n (n worked examples, reasoned answer), sc-n (majority of n
 * sampled reasoning paths), adaptive-sc-n (sc-n that stops once the majority cannot change), mab
 * (three personas, majority), mad (persona debate up to 3 rounds until consensus, then majority)
 * and ar (several models, each with a stated confidence, calibrated into vote weights). The
 * question supplies the prompts, the answer schema and what counts as the same answer; the
 * engine supplies the calls and the votes. src/judgebench/techniques.ts and
 * src/judge/technique-judge.ts are its two users.
 */

export const TECHNIQUES = ['io', 'cot-1', 'cot-3', 'cot-5', 'sc-3', 'sc-5', 'adaptive-sc-3', 'adaptive-sc-5', 'mab', 'mad', 'ar'] as const;
export const TechniqueSchema = z.enum(TECHNIQUES);
export type Technique = z.infer<typeof TechniqueSchema>;

export const PERSONAS = ['investigator', 'forensic-examiner', 'auditor'] as const;
export type Persona = (typeof PERSONAS)[number];
/** R: the most discussion rounds of MAD and (paper) AR, the first answers included */
export const MAD_MAX_ROUNDS = 3;
/** Sampling temperature of the lab's self-consistency paths (single-answer techniques use 0; the paper samples everything at 0). */
export const SAMPLING_TEMPERATURE = 0.7;

/**
 * How a technique runs, lab or as Habicht et al. publish it. The paper samples everything at
 * temperature 0 (§5 "Setup") and builds SC and AR on CoT prompts: SC's paths and AR's agents see
 * the worked examples (AR-CoT-5, Table 4), and AR's agents discuss up to R rounds until they agree.
 * The lab samples SC's paths at 0.7 without examples (diverse paths, shorter prompts) and asks AR's
 * models once.
 */
export interface TechniqueProfile {
  scTemperature: number;
  /** worked examples before SC's paths and AR's agents */
  scExamples: number;
  arExamples: number;
  /** AR: rounds including the first answers (1 = one shot) */
  arRounds: number;
}
export const TECHNIQUE_PROFILES: Record<Method, TechniqueProfile> = {
  lab: { scTemperature: SAMPLING_TEMPERATURE, scExamples: 0, arExamples: 0, arRounds: 1 },
  paper: { scTemperature: 0, scExamples: 5, arExamples: 5, arRounds: MAD_MAX_ROUNDS },
};

/**
 * The paper's calibration of AR's stated confidence p into a vote weight f(p) (Habicht et al.,
 * §3.3.3): 1.0 when p = 1, 0.8 for 0.9 ≤ p < 1, 0.5 for 0.8 ≤ p < 0.9, 0.3 for 0.6 ≤ p < 0.8,
 * 0.1 below 0.6.
 */
export function calibrateConfidence(confidence: number): number {
  if (confidence >= 1) return 1.0;
  if (confidence >= 0.9) return 0.8;
  if (confidence >= 0.8) return 0.5;
  if (confidence >= 0.6) return 0.3;
  return 0.1;
}

/** How the model is asked to answer: directly (io), with its reasoning first (cot, sc, mab, mad), or with reasoning and a confidence (ar). */
export type AnswerKind = 'io' | 'cot' | 'confidence';

export function answerKindOf(technique: Technique): AnswerKind {
  return technique === 'io' ? 'io' : technique === 'ar' ? 'confidence' : 'cot';
}

/** Worked examples a cot-n technique puts before the question (0 for the others). */
export function workedExamplesOf(technique: Technique): number {
  return technique.startsWith('cot-') ? Number(technique.slice(4)) : 0;
}

/** What one judge asks: prompts, the answer's schema, and which answers are the same vote. */
export interface TechniqueQuestion<A> {
  /** the schema of an answer of this kind; for "confidence" it includes `confidence` (0..1) */
  schema(kind: AnswerKind): z.ZodType<A>;
  /** the system prompt (with the persona's text when given), `examples` worked examples, then the question */
  opening(kind: AnswerKind, persona: Persona | null, examples: number): ChatMessage[];
  /** the user message of a debate round: the other personas' answers, already described */
  debate(others: string): string;
  /** answers with the same key are the same vote (adaptive SC stops and MAD ends on agreement of keys) */
  key(answer: A): string;
  /** one line for the other debaters */
  describe(answer: A): string;
}

export interface TechniqueRunOptions {
  /** retries of a structured call whose output does not validate (default: the provider layer's default) */
  maxRetries?: number;
  /** base seed; sampled paths use seed + index so runs are repeatable where the server honours seeds */
  seed?: number;
  signal?: AbortSignal;
  maxTokens?: number;
  /** every model call is recorded here (campaign judges); the judge benchmark meters its providers instead */
  tracker?: LlmUsageTracker;
  conversationKey?: string;
  schemaName?: string;
  /** lab (default) or the paper's parameters (TECHNIQUE_PROFILES) */
  method?: Method;
}

export interface TechniqueVote<A> {
  answer: A;
  /** 1, or AR's calibrated confidence */
  weight: number;
}

export interface TechniqueOutcome<A> {
  /** the usable answers (a call whose output never validated gives none) */
  votes: TechniqueVote<A>[];
  /** why calls failed, in order */
  errors: string[];
}

type Ask<A> = (provider: LlmProvider, messages: ChatMessage[], temperature: number, seed: number) => Promise<A | null>;

/**
 * Self-consistency: n sampled reasoning paths. Adaptive: the first ⌈(n+1)/2⌉ paths are needed
 * anyway and run together; after that one at a time, stopping as soon as the leading answer's count
 * exceeds the runner-up's plus the paths left (the majority can no longer change).
 */
async function selfConsistency<A>(sample: (i: number) => Promise<A | null>, key: (a: A) => string, n: number, adaptive: boolean): Promise<A[]> {
  const usable = (results: (A | null)[]) => results.filter((a): a is A => a !== null);
  if (!adaptive) return usable(await Promise.all(Array.from({ length: n }, (_, i) => sample(i))));
  const needed = Math.ceil((n + 1) / 2);
  const results: (A | null)[] = await Promise.all(Array.from({ length: needed }, (_, i) => sample(i)));
  for (let i = needed; i < n; i++) {
    const counts = [...tally(usable(results), key).values()].sort((a, b) => b - a);
    if ((counts[0] ?? 0) - (counts[1] ?? 0) > n - i) break;
    results.push(await sample(i));
  }
  return usable(results);
}

function tally<A>(answers: readonly A[], key: (a: A) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(key(a), (counts.get(key(a)) ?? 0) + 1);
  return counts;
}

/** Runs one technique on one question. AR needs at least two providers; the others use the first. */
export async function runTechnique<A>(technique: Technique, providers: readonly LlmProvider[], question: TechniqueQuestion<A>, options: TechniqueRunOptions = {}): Promise<TechniqueOutcome<A>> {
  if (providers.length === 0) throw new Error(`technique ${technique}: no model given`);
  if (technique === 'ar' && providers.length < 2) throw new Error('technique ar (answer routing across models) needs at least two models');
  const errors: string[] = [];
  const seed = options.seed ?? 1;
  const kind = answerKindOf(technique);
  const schema = question.schema(kind);
  const ask: Ask<A> = async (provider, messages, temperature, callSeed) => {
    const result = await generateStructured(
      provider,
      { messages, temperature, seed: callSeed, signal: options.signal, ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}) },
      schema,
      { kind: 'judge', maxRetries: options.maxRetries, schemaName: options.schemaName ?? 'verdict', tracker: options.tracker, conversationKey: options.conversationKey },
    );
    if (result.ok) return result.value as A;
    errors.push(result.error.message);
    return null;
  };
  const once = (answers: (A | null)[]) => answers.filter((a): a is A => a !== null).map((answer) => ({ answer, weight: 1 }));
  const [model] = providers;
  const profile = TECHNIQUE_PROFILES[options.method ?? 'lab'];

  if (technique === 'io' || technique.startsWith('cot-')) {
    return { votes: once([await ask(model, question.opening(kind, null, workedExamplesOf(technique)), 0, seed)]), errors };
  }
  if (technique.startsWith('sc-') || technique.startsWith('adaptive-sc-')) {
    const n = Number(technique.slice(technique.lastIndexOf('-') + 1));
    const messages = question.opening(kind, null, profile.scExamples);
    const answers = await selfConsistency((i) => ask(model, messages, profile.scTemperature, seed + i), question.key, n, technique.startsWith('adaptive-'));
    return { votes: once(answers), errors };
  }
  if (technique === 'mab' || technique === 'mad') {
    const seats = PERSONAS.map((persona) => ({ name: persona, provider: model, opening: question.opening(kind, persona, 0) }));
    return { votes: once(await discuss(seats, technique === 'mab' ? 1 : MAD_MAX_ROUNDS, question, ask, seed)), errors };
  }
  // AR: one seat per model, each with the same prompt (paper: the CoT-5 examples), discussing until they agree or R rounds pass
  const opening = question.opening(kind, null, profile.arExamples);
  const seats = providers.map((provider) => ({ name: provider.ref, provider, opening }));
  const answers = await discuss(seats, profile.arRounds, question, ask, seed);
  return {
    votes: answers.filter((a): a is A => a !== null).map((answer) => ({ answer, weight: calibrateConfidence((answer as { confidence?: number }).confidence ?? 0) })),
    errors,
  };
}

/**
 * MAD's and AR's discussion (Habicht et al., §3.3.2–3.3.3): every seat answers; while they disagree
 * and rounds are left, each seat sees its own last answer and the others' (as described by the
 * question) and answers again. Returns the last round's answers (null for a seat whose call failed).
 */
async function discuss<A>(
  seats: ReadonlyArray<{ name: string; provider: LlmProvider; opening: ChatMessage[] }>,
  rounds: number,
  question: TechniqueQuestion<A>,
  ask: Ask<A>,
  seed: number,
): Promise<(A | null)[]> {
  let answers: (A | null)[] = await Promise.all(seats.map((seat, i) => ask(seat.provider, seat.opening, 0, seed + i)));
  for (let round = 2; round <= rounds; round++) {
    const current = answers.filter((a): a is A => a !== null);
    if (current.length === seats.length && tally(current, question.key).size === 1) break;
    const previous = answers;
    answers = await Promise.all(
      seats.map((seat, i) => {
        const others = seats.map((other, j) => (j !== i && previous[j] ? `- ${other.name}: ${question.describe(previous[j]!)}` : null)).filter(Boolean).join('\n');
        const own = previous[i] ? [{ role: 'assistant' as const, content: JSON.stringify(previous[i]) }] : [];
        return ask(seat.provider, [...seat.opening, ...own, { role: 'user', content: question.debate(others || '(no usable answers)') }], 0, seed + round * 10 + i);
      }),
    );
  }
  return answers;
}
