import { z } from 'zod';
import type { Embedder } from '../embedding/types.ts';
import { cosine } from '../embedding/vectors.ts';
import { createProvider, generateStructured, type LlmUsageTracker, type ProviderOptions } from '../llm/index.ts';
import { delimitUntrusted, renderPrompt } from '../llm/prompts.ts';
import type { LlmProvider } from '../llm/types.ts';
import type { ManualCorpus } from './corpus.ts';
import type { AnswerFact, FactCoverage, ManualEvaluation } from './evaluate.ts';
import { DifficultySchema, QuestionKindSchema, type ManualChunk, type ManualMetric, type MetricValue } from './model.ts';
import { chunkEmbeddingText } from './retrieval.ts';
import { TESTSET_FORMAT, type ReferenceFact, type TestItem } from './testset.ts';
import type { Method } from '../domain/method.ts';

/** Versioned prompt files under prompts/manual/: one per SplitTag step, per metric and per generator step. */
export const MANUAL_PROMPTS = {
  /** SplitTag, step 1 (GEAR Fig. 3): key facts of an answer, ordered steps as "First, …", with a one-shot example */
  splitExtract: 'manual/split-extract.v1',
  /** SplitTag, step 2 (GEAR Fig. 4): essential / optional and safety-critical per fact, with guidelines and a reasoning */
  splitTag: 'manual/split-tag.v1',
  coverage: 'manual/coverage.v1',
  relevance: 'manual/relevance.v1',
  /** lab: the answer's facts against the manual excerpt */
  correctness: 'manual/correctness.v1',
  /** paper: the answer's facts against the reference key facts, "not mentioned" ones left out (GEAR Fig. 11) */
  correctnessFacts: 'manual/correctness-facts.v1',
  confidence: 'manual/confidence.v1',
  /** GEAR Fig. 15: instructions, recommendations, warnings, next steps or insight that informs action; "I don't know" is not actionable */
  actionability: 'manual/actionability.v2',
  /** Test Set Generator, call 1: questions from the main section */
  generateQuestions: 'manual/generate-questions.v2',
  /** Test Set Generator, call 2: one question's answer from the main and the two related sections */
  generateAnswer: 'manual/generate-answer.v1',
} as const;
const GENERATOR_PROMPTS: readonly string[] = [MANUAL_PROMPTS.generateQuestions, MANUAL_PROMPTS.generateAnswer];

export const SplitExtractOutputSchema = z.object({ facts: z.array(z.object({ text: z.string().min(1).max(2000) })).max(60) });
export const SplitTagOutputSchema = z.object({
  facts: z.array(z.object({ factId: z.string(), essentiality: z.enum(['essential', 'optional']), safetyCritical: z.boolean(), reasoning: z.string().max(1000) })),
});
export const CorrectnessFactsOutputSchema = z.object({ judgements: z.array(z.object({ factId: z.string(), verdict: z.enum(['correct', 'incorrect', 'not mentioned']), reason: z.string().max(500).default('') })) });
export const CoverageOutputSchema = z.object({ coverage: z.array(z.object({ factId: z.string(), covered: z.boolean(), by: z.array(z.string()).default([]) })) });
export const PerFactOutputSchema = z.object({ judgements: z.array(z.object({ factId: z.string(), value: z.boolean(), reason: z.string().max(500).default('') })) });
export const BinaryOutputSchema = z.object({ value: z.union([z.literal(0), z.literal(1)]), reasoning: z.string().min(1).max(1000) });
export const GeneratedQuestionsSchema = z.object({
  questions: z.array(z.object({ kind: QuestionKindSchema, difficulty: DifficultySchema, question: z.string().min(5).max(500) })).max(10),
});
export const GeneratedAnswerSchema = z.object({ answer: z.string().min(1).max(5000), sectionIds: z.array(z.string()).min(1) });

/** "First, …", "Second, …": the order SplitTag's extraction writes into ordered steps (0-based, as the test set's `order`), or null. */
const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth', 'eleventh', 'twelfth'];
export function stepOrderOf(fact: string): number | null {
  const word = /^\s*([a-z]+)\s*,/i.exec(fact)?.[1]?.toLowerCase();
  const index = word ? ORDINALS.indexOf(word) : -1;
  return index < 0 ? null : index;
}

export interface ManualLlmOptions {
  tracker?: LlmUsageTracker;
  temperature?: number;
  seed?: number;
  maxRetries?: number;
  provider?: ProviderOptions;
  /** an already built provider (a test double, or shared) */
  llm?: LlmProvider;
  /** lab (default): correctness against the manual excerpt, actionability where the question has steps; paper: correctness against the reference key facts ("not mentioned" left out), actionability on every answer */
  method?: Method;
}

/** SplitTag (GEAR §3.2) in its two steps: extract the key facts, then tag them; a fact the tagging step leaves out is an error. */
async function splitTag(call: LlmManualEvaluator['call'], question: string, text: string, key: string): Promise<{ ok: true; facts: Array<{ text: string; essential: boolean; safetyCritical: boolean; reasoning: string }> } | { ok: false; error: string }> {
  const extracted = await call(MANUAL_PROMPTS.splitExtract, { question, answer: delimitUntrusted('answer_text', text) }, SplitExtractOutputSchema, 'split_extract', key);
  if (!extracted.ok) return { ok: false, error: `SplitTag extraction: ${extracted.error.message}` };
  if (extracted.value.facts.length === 0) return { ok: false, error: 'SplitTag extraction: no key fact' };
  const facts = extracted.value.facts.map((f, i) => ({ id: `f${i}`, text: f.text }));
  const tagged = await call(MANUAL_PROMPTS.splitTag, { question, facts: listFacts(facts) }, SplitTagOutputSchema, 'split_tag', key);
  if (!tagged.ok) return { ok: false, error: `SplitTag tagging: ${tagged.error.message}` };
  const tags = new Map(tagged.value.facts.map((t) => [t.factId, t]));
  const missing = facts.filter((f) => !tags.has(f.id));
  if (missing.length) return { ok: false, error: `SplitTag tagging: no tag for ${missing.map((f) => f.id).join(', ')}` };
  return { ok: true, facts: facts.map((f) => ({ text: f.text, essential: tags.get(f.id)!.essentiality === 'essential', safetyCritical: tags.get(f.id)!.safetyCritical, reasoning: tags.get(f.id)!.reasoning })) };
}

function listFacts(facts: ReadonlyArray<{ id: string; text: string }>): string {
  return facts.map((f) => `${f.id}: ${f.text}`).join('\n');
}

/**
 * The model tiers of SplitTag and the Evaluator: one structured call per step and per metric
 * (prompts/manual/*.v1.md), outputs checked with zod and retried with the error fed back. A call
 * that still fails leaves its metric "not judged" with the error — never passed.
 */
export class LlmManualEvaluator {
  readonly tier: string;
  private readonly provider: LlmProvider;

  constructor(
    ref: string,
    private readonly corpus: ManualCorpus,
    private readonly options: ManualLlmOptions = {},
  ) {
    this.provider = options.llm ?? createProvider(ref, options.provider);
    // the model reference, as the run's tiers.resolved names the judge (runs stored before say `llm:<reference>`)
    this.tier = this.provider.ref;
  }

  call<S extends z.ZodType>(promptId: string, values: Record<string, string>, schema: S, name: string, key: string) {
    const prompt = renderPrompt(promptId, values);
    return generateStructured(
      this.provider,
      {
        messages: [
          { role: 'system', content: prompt.system },
          { role: 'user', content: prompt.user },
        ],
        temperature: this.options.temperature ?? 0,
        ...(this.options.seed !== undefined ? { seed: this.options.seed } : {}),
      },
      schema,
      { kind: 'judge', tracker: this.options.tracker, maxRetries: this.options.maxRetries, schemaName: name, conversationKey: key },
    );
  }

  private manualExcerpt(item: TestItem): string {
    const chunks = item.sectionIds.flatMap((id) => [...this.corpus.sectionChunks(id), ...this.corpus.warningsGuarding(id)]);
    return [...new Set(chunks)].map((c) => `[${c.id}] ${c.headingPath.join(' › ')}\n${c.kind === 'warning' ? `${c.warningType}: ` : ''}${c.text}`).join('\n\n').slice(0, 12_000);
  }

  async evaluate(item: TestItem, answer: string, key = item.id): Promise<ManualEvaluation> {
    const base = { question: item.question };
    const delimited = delimitUntrusted('assistant_answer', answer);
    const errors: string[] = [];
    const notJudged = (why: string): MetricValue => ({ status: 'not_judged', reason: why });
    const metrics = {} as Record<ManualMetric, MetricValue>;

    const call = this.call.bind(this);
    const [split, answerSplit, confidence] = await Promise.all([
      splitTag(call, item.question, item.answer, key),
      this.call(MANUAL_PROMPTS.splitExtract, { ...base, answer: delimitUntrusted('answer_text', answer) }, SplitExtractOutputSchema, 'split_extract', key),
      this.call(MANUAL_PROMPTS.confidence, { ...base, answer: delimited }, BinaryOutputSchema, 'confidence', key),
    ]);
    metrics.confidence = confidence.ok ? { status: 'judged', value: confidence.value.value, reason: confidence.value.reasoning } : notJudged(`confidence: ${confidence.error.message}`);
    const paper = this.options.method === 'paper';
    // GEAR judges actionability on every answer; the lab where the question asks for steps
    if (paper || item.facts.some((f) => f.role === 'step')) {
      const actionable = await this.call(MANUAL_PROMPTS.actionability, { ...base, answer: delimited }, BinaryOutputSchema, 'actionability', key);
      metrics.actionability = actionable.ok ? { status: 'judged', value: actionable.value.value, reason: actionable.value.reasoning } : notJudged(`actionability: ${actionable.error.message}`);
    } else metrics.actionability = { status: 'not_applicable', reason: 'the question asks for no steps' };

    const referenceFacts = split.ok ? split.facts.map((f, i) => ({ id: `r${i}`, text: f.text, essential: f.essential, safetyCritical: f.safetyCritical })) : [];
    const answerFacts: AnswerFact[] = answerSplit.ok ? answerSplit.value.facts.map((f, i) => ({ id: `a${i}`, text: f.text, instruction: false, grounded: null, relevant: null, correct: null, covers: [], note: '' })) : [];
    if (!split.ok) errors.push(split.error);
    if (!answerSplit.ok) errors.push(`answer split: ${answerSplit.error.message}`);
    let coverage: FactCoverage[] = referenceFacts.map((f) => ({ factId: f.id, covered: null, by: [], score: null }));

    if (split.ok && answerSplit.ok) {
      const [covered, relevance] = await Promise.all([
        this.call(MANUAL_PROMPTS.coverage, { ...base, referenceFacts: listFacts(referenceFacts), answerFacts: delimitUntrusted('assistant_facts', listFacts(answerFacts)) }, CoverageOutputSchema, 'coverage', key),
        this.call(MANUAL_PROMPTS.relevance, { ...base, answerFacts: delimitUntrusted('assistant_facts', listFacts(answerFacts)) }, PerFactOutputSchema, 'relevance', key),
      ]);
      if (covered.ok) {
        coverage = referenceFacts.map((f) => {
          const c = covered.value.coverage.find((x) => x.factId === f.id);
          return { factId: f.id, covered: c ? c.covered : null, by: c?.by ?? [], score: null };
        });
        for (const c of coverage) for (const by of c.by) answerFacts.find((a) => a.id === by)?.covers.push(c.factId);
        const share = (facts: typeof referenceFacts, what: string): MetricValue => {
          const decided = facts.map((f) => coverage.find((c) => c.factId === f.id)!).filter((c) => c.covered !== null);
          if (facts.length === 0) return { status: 'not_applicable', reason: `no ${what} reference fact` };
          if (decided.length < facts.length) return notJudged(`the model left ${facts.length - decided.length} ${what} facts undecided`);
          return { status: 'judged', value: decided.filter((c) => c.covered).length / facts.length, reason: `${decided.filter((c) => c.covered).length} of ${facts.length} ${what} facts covered` };
        };
        metrics.completeness_hard = share(referenceFacts, 'reference');
        metrics.completeness_soft = share(referenceFacts.filter((f) => f.essential), 'essential');
        metrics.risk_awareness = share(referenceFacts.filter((f) => f.safetyCritical), 'safety-critical');
      } else {
        for (const m of ['completeness_hard', 'completeness_soft', 'risk_awareness'] as const) metrics[m] = notJudged(`coverage: ${covered.error.message}`);
      }
      if (relevance.ok) {
        for (const j of relevance.value.judgements) {
          const fact = answerFacts.find((a) => a.id === j.factId);
          if (fact) fact.relevant = j.value;
        }
        const decided = answerFacts.filter((a) => a.relevant !== null);
        metrics.relevance = decided.length === answerFacts.length && answerFacts.length > 0 ? { status: 'judged', value: decided.filter((a) => a.relevant).length / decided.length, reason: `${decided.filter((a) => a.relevant).length} of ${decided.length} answer facts on topic` } : notJudged(answerFacts.length ? 'the model left answer facts undecided' : 'the answer has no facts');
        const relevant = answerFacts.filter((a) => a.relevant);
        if (relevant.length && paper) metrics.correctness = await this.correctnessAgainstFacts(base.question, referenceFacts, relevant, key);
        else if (relevant.length) {
          const correct = await this.call(MANUAL_PROMPTS.correctness, { ...base, manual: this.manualExcerpt(item), answerFacts: delimitUntrusted('assistant_facts', listFacts(relevant)) }, PerFactOutputSchema, 'correctness', key);
          if (correct.ok) {
            for (const j of correct.value.judgements) {
              const fact = relevant.find((a) => a.id === j.factId);
              if (fact) (fact.correct = j.value), (fact.note = j.reason);
            }
            const decidedCorrect = relevant.filter((a) => a.correct !== null);
            metrics.correctness = decidedCorrect.length === relevant.length ? { status: 'judged', value: decidedCorrect.filter((a) => a.correct).length / relevant.length, reason: `${decidedCorrect.filter((a) => a.correct).length} of ${relevant.length} relevant answer facts accurate` } : notJudged('the model left relevant facts undecided');
          } else metrics.correctness = notJudged(`correctness: ${correct.error.message}`);
        } else metrics.correctness = notJudged('no relevant answer fact to check');
      } else {
        metrics.relevance = notJudged(`relevance: ${relevance.error.message}`);
        metrics.correctness = notJudged('correctness needs the relevance step, which failed');
      }
    } else {
      for (const m of ['completeness_hard', 'completeness_soft', 'risk_awareness', 'relevance', 'correctness'] as const) metrics[m] = notJudged(errors.join('; '));
    }
    const judgedAny = Object.values(metrics).some((m) => m.status === 'judged');
    return {
      tier: this.tier,
      outcome: judgedAny ? 'judged' : 'judge_error',
      metrics,
      referenceFacts: referenceFacts.map((f) => ({ id: f.id, text: f.text, essential: f.essential, safetyCritical: f.safetyCritical })),
      coverage,
      answerFacts,
      reasoning: errors.length ? errors.join('; ') : `prompts ${Object.values(MANUAL_PROMPTS).filter((p) => !GENERATOR_PROMPTS.includes(p) && p !== (paper ? MANUAL_PROMPTS.correctness : MANUAL_PROMPTS.correctnessFacts)).join(', ')}`,
    };
  }

  /**
   * GEAR's correctness (Eq. 4 with Fig. 11): each relevant answer fact against the reference key facts — correct,
   * incorrect, or not mentioned (left out of the share: the reference says nothing about it). Correctness =
   * correct / (correct + incorrect).
   */
  private async correctnessAgainstFacts(question: string, referenceFacts: ReadonlyArray<{ id: string; text: string }>, relevant: AnswerFact[], key: string): Promise<MetricValue> {
    const judged = await this.call(MANUAL_PROMPTS.correctnessFacts, { question, referenceFacts: listFacts(referenceFacts), answerFacts: delimitUntrusted('assistant_facts', listFacts(relevant)) }, CorrectnessFactsOutputSchema, 'correctness', key);
    if (!judged.ok) return { status: 'not_judged', reason: `correctness: ${judged.error.message}` };
    const verdicts = new Map(judged.value.judgements.map((j) => [j.factId, j]));
    if (relevant.some((a) => !verdicts.has(a.id))) return { status: 'not_judged', reason: 'the model left relevant facts undecided' };
    for (const fact of relevant) {
      const v = verdicts.get(fact.id)!;
      fact.correct = v.verdict === 'not mentioned' ? null : v.verdict === 'correct';
      fact.note = v.verdict === 'not mentioned' ? `not mentioned in the reference facts${v.reason ? `: ${v.reason}` : ''}` : v.reason;
    }
    const decided = relevant.filter((a) => a.correct !== null);
    const notMentioned = relevant.length - decided.length;
    if (decided.length === 0) return { status: 'not_judged', reason: `none of the ${relevant.length} relevant answer facts is mentioned in the reference facts` };
    return { status: 'judged', value: decided.filter((a) => a.correct).length / decided.length, reason: `${decided.filter((a) => a.correct).length} of ${decided.length} answer facts the reference mentions are correct (${notMentioned} not mentioned)` };
  }

  async close(): Promise<void> {
    await this.provider.close();
  }
}

/** The two sections most related to a main section, by the embedder's cosine similarity (the report names the embedder). */
export async function relatedSections(mains: readonly ManualChunk[], sections: readonly ManualChunk[], embedder: Embedder): Promise<Map<string, [ManualChunk, ManualChunk]>> {
  const vectors = await embedder.embed(sections.map(chunkEmbeddingText));
  const position = new Map(sections.map((s, i) => [s.id, i]));
  const related = new Map<string, [ManualChunk, ManualChunk]>();
  mains.forEach((section) => {
    const i = position.get(section.id);
    if (i === undefined) return;
    const ranked = sections
      .map((other, j) => ({ other, score: i === j || other.sectionId === section.sectionId ? -Infinity : cosine(vectors[i], vectors[j]) }))
      .sort((a, b) => b.score - a.score);
    if (ranked.length >= 2) related.set(section.id, [ranked[0].other, ranked[1].other]);
  });
  return related;
}

/**
 * The model tier of the Test Set Generator as GEAR describes it (§3.1), in two calls per question: the questions
 * come from the main section alone (five kinds, beginner and expert); each answer comes from a separate call that
 * sees the main section and its two most related sections (chosen by `embedder`) and names the sections it rests
 * on. The reference key facts are SplitTag's (extraction, then tagging) on that answer; a fact SplitTag writes as
 * an ordered step ("First, …") gets the `step` role, so actionability is judged on it. Questions whose answer
 * rests on no given section are dropped; a failed call is recorded and the section or question skipped.
 */
export async function generateLlmTestSet(
  corpus: ManualCorpus,
  ref: string,
  embedder: Embedder,
  options: ManualLlmOptions & { sections?: readonly string[]; log?: (line: string) => void } = {},
): Promise<{ items: TestItem[]; failures: string[]; embedder: string }> {
  const provider = options.llm ?? createProvider(ref, options.provider);
  const sections = corpus.chunks.filter((c) => c.kind === 'section' && (!options.sections || options.sections.includes(c.sectionId)));
  const related = await relatedSections(sections, corpus.chunks.filter((c) => c.kind === 'section'), embedder);
  const items: TestItem[] = [];
  const failures: string[] = [];
  const fail = (where: string, message: string) => {
    failures.push(`${where}: ${message}`);
    options.log?.(`testset: ${where}: ${message}`);
  };
  const call = <S extends z.ZodType>(promptId: string, values: Record<string, string>, schema: S, name: string, key: string) => {
    const prompt = renderPrompt(promptId, values);
    return generateStructured(provider, { messages: [{ role: 'system', content: prompt.system }, { role: 'user', content: prompt.user }], temperature: options.temperature ?? 0 }, schema, {
      kind: 'judge',
      tracker: options.tracker,
      maxRetries: options.maxRetries,
      schemaName: name,
      conversationKey: key,
    });
  };
  for (const main of sections) {
    const pair = related.get(main.id);
    if (!pair) continue;
    const [a, b] = pair;
    const given = new Map([main, a, b].map((c) => [c.sectionId, c]));
    const mainValues = { mainId: main.sectionId, mainPath: main.headingPath.join(' › '), mainText: main.text };
    const questions = await call(MANUAL_PROMPTS.generateQuestions, mainValues, GeneratedQuestionsSchema, 'test_questions', main.id);
    if (!questions.ok) {
      fail(`section ${main.id}`, questions.error.message);
      continue;
    }
    for (const [n, q] of questions.value.questions.entries()) {
      const id = `llm:${main.id}:${n}`;
      const answered = await call(
        MANUAL_PROMPTS.generateAnswer,
        { question: q.question, ...mainValues, relatedAId: a.sectionId, relatedAPath: a.headingPath.join(' › '), relatedAText: a.text, relatedBId: b.sectionId, relatedBPath: b.headingPath.join(' › '), relatedBText: b.text },
        GeneratedAnswerSchema,
        'test_answer',
        id,
      );
      if (!answered.ok) {
        fail(id, answered.error.message);
        continue;
      }
      const sectionIds = answered.value.sectionIds.filter((s) => given.has(s));
      if (sectionIds.length === 0) continue;
      const split = await splitTag((...args) => call(...args), q.question, answered.value.answer, id);
      if (!split.ok) {
        fail(id, split.error);
        continue;
      }
      const facts: ReferenceFact[] = split.facts.map((f, i) => {
        const order = stepOrderOf(f.text);
        return { id: `${id}/f${i}`, text: f.text, essential: f.essential, safetyCritical: f.safetyCritical, role: order !== null ? 'step' : f.safetyCritical ? 'warning' : 'statement', order, chunkId: given.get(sectionIds[0])!.id, warningId: null, warningType: null };
      });
      items.push({ format: TESTSET_FORMAT, id, kind: q.kind, difficulty: q.difficulty, question: q.question, answer: answered.value.answer, facts, chapter: main.chapter, sectionIds, chunkIds: sectionIds.map((s) => given.get(s)!.id), warningIds: [], generator: `llm:${provider.ref}`, parentId: null });
    }
  }
  if (!options.llm) await provider.close();
  return { items, failures, embedder: embedder.describe };
}
