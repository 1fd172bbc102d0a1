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

/** Versioned prompt files under prompts/manual/: one per SplitTag step and per metric. */
export const MANUAL_PROMPTS = {
  splitTag: 'manual/splittag.v1',
  splitAnswer: 'manual/split-answer.v1',
  coverage: 'manual/coverage.v1',
  relevance: 'manual/relevance.v1',
  correctness: 'manual/correctness.v1',
  confidence: 'manual/confidence.v1',
  actionability: 'manual/actionability.v1',
  generate: 'manual/generate-questions.v1',
} as const;

export const SplitTagOutputSchema = z.object({ facts: z.array(z.object({ text: z.string().min(1).max(2000), essential: z.boolean(), safetyCritical: z.boolean() })).min(1).max(60) });
export const SplitAnswerOutputSchema = z.object({ facts: z.array(z.object({ text: z.string().min(1).max(2000) })).max(60) });
export const CoverageOutputSchema = z.object({ coverage: z.array(z.object({ factId: z.string(), covered: z.boolean(), by: z.array(z.string()).default([]) })) });
export const PerFactOutputSchema = z.object({ judgements: z.array(z.object({ factId: z.string(), value: z.boolean(), reason: z.string().max(500).default('') })) });
export const BinaryOutputSchema = z.object({ value: z.union([z.literal(0), z.literal(1)]), reasoning: z.string().min(1).max(1000) });
export const GeneratedQuestionsSchema = z.object({
  questions: z
    .array(
      z.object({
        kind: QuestionKindSchema,
        difficulty: DifficultySchema,
        question: z.string().min(5).max(500),
        answer: z.string().min(1).max(5000),
        facts: z.array(z.object({ text: z.string().min(1), essential: z.boolean(), safetyCritical: z.boolean() })).min(1),
        sectionIds: z.array(z.string()).min(1),
      }),
    )
    .max(10),
});

export interface ManualLlmOptions {
  tracker?: LlmUsageTracker;
  temperature?: number;
  seed?: number;
  maxRetries?: number;
  provider?: ProviderOptions;
  /** an already built provider (a test double, or shared) */
  llm?: LlmProvider;
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
    this.tier = `llm:${this.provider.ref}`;
  }

  private call<S extends z.ZodType>(promptId: string, values: Record<string, string>, schema: S, name: string, key: string) {
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

    const [split, answerSplit, confidence] = await Promise.all([
      this.call(MANUAL_PROMPTS.splitTag, { ...base, reference: item.answer }, SplitTagOutputSchema, 'split_tag', key),
      this.call(MANUAL_PROMPTS.splitAnswer, { ...base, answer: delimited }, SplitAnswerOutputSchema, 'split_answer', key),
      this.call(MANUAL_PROMPTS.confidence, { ...base, answer: delimited }, BinaryOutputSchema, 'confidence', key),
    ]);
    metrics.confidence = confidence.ok ? { status: 'judged', value: confidence.value.value, reason: confidence.value.reasoning } : notJudged(`confidence: ${confidence.error.message}`);
    const hasSteps = item.facts.some((f) => f.role === 'step');
    if (hasSteps) {
      const actionable = await this.call(MANUAL_PROMPTS.actionability, { ...base, answer: delimited }, BinaryOutputSchema, 'actionability', key);
      metrics.actionability = actionable.ok ? { status: 'judged', value: actionable.value.value, reason: actionable.value.reasoning } : notJudged(`actionability: ${actionable.error.message}`);
    } else metrics.actionability = { status: 'not_applicable', reason: 'the question asks for no steps' };

    const referenceFacts = split.ok ? split.value.facts.map((f, i) => ({ id: `r${i}`, ...f })) : [];
    const answerFacts: AnswerFact[] = answerSplit.ok ? answerSplit.value.facts.map((f, i) => ({ id: `a${i}`, text: f.text, instruction: false, grounded: null, relevant: null, correct: null, covers: [], note: '' })) : [];
    if (!split.ok) errors.push(`SplitTag: ${split.error.message}`);
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
        if (relevant.length) {
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
      reasoning: errors.length ? errors.join('; ') : `prompts ${Object.values(MANUAL_PROMPTS).filter((p) => p !== MANUAL_PROMPTS.generate).join(', ')}`,
    };
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
 * The model tier of the Test Set Generator as GEAR describes it: per section, questions of the five
 * kinds for beginners and experts, answered from the main section plus its two most related
 * sections (chosen by `embedder`). Questions whose answer rests on no given section are dropped.
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
  for (const main of sections) {
    const pair = related.get(main.id);
    if (!pair) continue;
    const [a, b] = pair;
    const given = new Map([main, a, b].map((c) => [c.sectionId, c]));
    const prompt = renderPrompt(MANUAL_PROMPTS.generate, {
      mainId: main.sectionId, mainPath: main.headingPath.join(' › '), mainText: main.text,
      relatedAId: a.sectionId, relatedAPath: a.headingPath.join(' › '), relatedAText: a.text,
      relatedBId: b.sectionId, relatedBPath: b.headingPath.join(' › '), relatedBText: b.text,
    });
    const result = await generateStructured(provider, { messages: [{ role: 'system', content: prompt.system }, { role: 'user', content: prompt.user }], temperature: options.temperature ?? 0 }, GeneratedQuestionsSchema, {
      kind: 'judge',
      tracker: options.tracker,
      maxRetries: options.maxRetries,
      schemaName: 'test_questions',
      conversationKey: main.id,
    });
    if (!result.ok) {
      failures.push(`${main.id}: ${result.error.message}`);
      options.log?.(`testset: section ${main.id}: ${result.error.message}`);
      continue;
    }
    result.value.questions.forEach((q, n) => {
      const sectionIds = q.sectionIds.filter((id) => given.has(id));
      if (sectionIds.length === 0) return;
      const id = `llm:${main.id}:${n}`;
      const facts: ReferenceFact[] = q.facts.map((f, i) => ({ id: `${id}/f${i}`, text: f.text, essential: f.essential, safetyCritical: f.safetyCritical, role: f.safetyCritical ? 'warning' : 'statement', order: null, chunkId: given.get(sectionIds[0])!.id, warningId: null, warningType: null }));
      items.push({ format: TESTSET_FORMAT, id, kind: q.kind, difficulty: q.difficulty, question: q.question, answer: q.answer, facts, chapter: main.chapter, sectionIds, chunkIds: sectionIds.map((s) => given.get(s)!.id), warningIds: [], generator: `llm:${provider.ref}`, parentId: null });
    });
  }
  if (!options.llm) await provider.close();
  return { items, failures, embedder: embedder.describe };
}
