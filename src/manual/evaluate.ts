import { z } from 'zod';
import type { ManualCorpus } from './corpus.ts';
import { MANUAL_METRICS, MetricValueSchema, type ManualMetric, type MetricValue } from './model.ts';
import type { ReferenceFact, TestItem } from './testset.ts';
import type { Method } from '../domain/method.ts';
import { BASE_IMPERATIVE_VERBS, dice, firstWord, hazardTerms, hedgesIn, isListedLine, normalise, splitSentences, termRecall, termSet } from './text.ts';

/** An atomic fact of the assistant's answer, as the tier that split it saw it. */
export const AnswerFactSchema = z.object({
  id: z.string(),
  text: z.string(),
  /** an instruction (numbered, bulleted or opening with an imperative verb) */
  instruction: z.boolean(),
  /** said in the manual's own words (a sentence of the question's sources) */
  grounded: z.boolean().nullable(),
  relevant: z.boolean().nullable(),
  /** true correct, false incorrect, null not decided */
  correct: z.boolean().nullable(),
  /** the reference facts it covers */
  covers: z.array(z.string()),
  note: z.string().default(''),
});
export type AnswerFact = z.infer<typeof AnswerFactSchema>;

export const FactCoverageSchema = z.object({ factId: z.string(), covered: z.boolean().nullable(), by: z.array(z.string()), score: z.number().min(0).max(1).nullable() });
export type FactCoverage = z.infer<typeof FactCoverageSchema>;

/** One tier's evaluation of one answer: the seven metrics and the fact-level evidence behind them. */
export const ManualEvaluationSchema = z.object({
  /** "oracle" (deterministic) or "llm:<model ref>" */
  tier: z.string(),
  outcome: z.enum(['judged', 'judge_error']),
  metrics: z.record(z.enum(MANUAL_METRICS), MetricValueSchema),
  /** the reference facts with the tags the tier used (SplitTag) */
  referenceFacts: z.array(z.object({ id: z.string(), text: z.string(), essential: z.boolean(), safetyCritical: z.boolean() })),
  coverage: z.array(FactCoverageSchema),
  answerFacts: z.array(AnswerFactSchema),
  reasoning: z.string(),
});
export type ManualEvaluation = z.infer<typeof ManualEvaluationSchema>;

/** The thresholds of the lexical matching rules (docs/manual-qa.md, "Matching"). */
export const MATCHING = {
  /** share of a step's or statement's terms one answer sentence must contain to cover it */
  factRecall: 0.6,
  /** share of a warning's terms a run of consecutive answer sentences must contain to cover it */
  warningRecall: 0.6,
  /** share of an answer sentence's terms one manual sentence must contain for it to be grounded */
  groundedRecall: 0.7,
  /** relevance: share of a sentence's terms among the question's and its sections' at or above which it is on topic */
  onTopic: 0.5,
  /** … and at or below which it is off topic */
  offTopic: 0.2,
} as const;

interface Unit {
  id: string;
  text: string;
  terms: Set<string>;
  listed: boolean;
}

function answerUnits(answer: string): Unit[] {
  const units: Unit[] = [];
  for (const line of answer.split(/\n+/)) {
    const listed = isListedLine(line);
    // a numbered or bulleted line is one step, however many sentences it has
    for (const sentence of listed ? splitSentences(line).join(' ').split('\n') : splitSentences(line)) {
      const terms = termSet(sentence);
      if (terms.size === 0) continue;
      units.push({ id: `a${units.length}`, text: sentence, terms, listed });
    }
  }
  return units;
}

const share = (n: number, d: number) => (d === 0 ? 0 : n / d);
const judged = (value: number, reason: string): MetricValue => ({ status: 'judged', value, reason });

/** Longest increasing subsequence (indices into `values`), for the order of matched steps. */
function increasingRun(values: readonly number[]): Set<number> {
  const tails: number[] = [];
  const tailIndex: number[] = [];
  const previous = new Array<number>(values.length).fill(-1);
  values.forEach((v, i) => {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tails[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    tails[lo] = v;
    tailIndex[lo] = i;
    previous[i] = lo > 0 ? tailIndex[lo - 1] : -1;
  });
  const keep = new Set<number>();
  for (let i = tails.length ? tailIndex[tails.length - 1] : -1; i >= 0; i = previous[i]) keep.add(i);
  return keep;
}

/**
 * The deterministic tier (tier 1) of SplitTag and the Evaluator. It decides only what it can:
 * - SplitTag: reference facts come split and tagged from the manual's structure (steps and
 *   warnings essential, warnings safety-critical — the warnings oracle); the answer is split into
 *   sentences (a numbered line is one step);
 * - completeness hard/soft: a step or statement is covered when one answer sentence holds ≥ 60 % of
 *   its terms (each answer sentence covers at most one; a step only by an instruction); a warning is covered when a run of
 *   consecutive sentences holds ≥ 60 % of its terms and names its hazard (accident, injury, damage …);
 * - risk awareness: covered warnings / warnings;
 * - correctness: an answer sentence is correct when the manual says it (≥ 70 % of its terms in one
 *   of the manual's sentences) and, if it is a step, in the manual's order; an instruction the manual
 *   does not give is incorrect; other unmatched sentences stay undecided;
 * - confidence: 0 when a hedge ("maybe", "I think" …) appears outside what the manual says;
 * - actionability (questions with steps): 1 when the answer gives at least one of the manual's steps; with
 *   `method: paper`, on every question: 1 when it gives at least one reference fact (paperActionability);
 * - relevance: an answer sentence is on the question when it covers a reference fact or at least half of its
 *   terms are the question's or its manual sections'; off it when at most a fifth are (a refusal such as
 *   "Sorry, I couldn't find that in the owner's manual.", a sentence about another topic); in between it stays
 *   undecided. Relevance = on / decided.
 */
export class DeterministicManualEvaluator {
  private readonly verbs: Set<string>;
  /** every sentence of the manual, and which sentences hold each term */
  private readonly sentences: string[] = [];
  private readonly postings = new Map<string, number[]>();

  /** `method: paper` judges actionability on every question, as GEAR does (any fact of the manual the answer gives); the lab where the question asks for steps */
  constructor(
    private readonly corpus: ManualCorpus,
    private readonly method: Method = 'lab',
  ) {
    this.verbs = new Set<string>(BASE_IMPERATIVE_VERBS);
    for (const chunk of corpus.chunks) for (const step of chunk.steps) this.verbs.add(firstWord(step));
    const seen = new Set<string>();
    for (const chunk of corpus.chunks) {
      for (const sentence of [...splitSentences(chunk.kind === 'procedure' ? chunk.steps.join('\n') : chunk.text), ...(chunk.summary ? [chunk.summary] : [])]) {
        if (seen.has(sentence)) continue;
        seen.add(sentence);
        const id = this.sentences.push(sentence) - 1;
        for (const term of termSet(sentence)) {
          const list = this.postings.get(term);
          if (list) list.push(id);
          else this.postings.set(term, [id]);
        }
      }
    }
  }

  private isInstruction(unit: Unit): boolean {
    return unit.listed || this.verbs.has(firstWord(unit.text));
  }

  /** The manual sentence that holds most of a sentence's terms: the item's own facts first, then the whole manual. */
  private bestSource(terms: ReadonlySet<string>, factSentences: ReadonlyArray<{ text: string; terms: Set<string> }>): { text: string; recall: number } {
    let best = { text: '', recall: 0 };
    for (const sentence of factSentences) {
      const recall = termRecall(terms, sentence.terms);
      if (recall > best.recall) best = { text: sentence.text, recall };
    }
    const counts = new Map<number, number>();
    for (const term of terms) for (const id of this.postings.get(term) ?? []) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const [id, count] of counts) {
      const recall = count / terms.size;
      if (recall > best.recall) best = { text: this.sentences[id], recall };
    }
    return best;
  }

  evaluate(item: TestItem, answer: string): ManualEvaluation {
    const units = answerUnits(answer);
    const covering: Covering = { coverage: new Map(), unitCovers: new Map() };
    coverWarnings(covering, item, units);
    this.coverStepsAndStatements(covering, item, units);
    const answerFacts = this.judgeAnswerFacts(item, units, covering.unitCovers);
    const facts = item.facts;
    return {
      tier: 'oracle',
      outcome: 'judged',
      metrics: { ...manualMetrics(item, units, covering.coverage, answerFacts), ...(this.method === 'paper' ? { actionability: paperActionability(item, covering.coverage) } : {}) },
      referenceFacts: facts.map((f) => ({ id: f.id, text: f.text, essential: f.essential, safetyCritical: f.safetyCritical })),
      coverage: facts.map((f) => covering.coverage.get(f.id)!),
      answerFacts,
      reasoning: `${units.length} answer sentences; ${normalise(answer).length === 0 ? 'empty answer' : 'lexical matching'}`,
    };
  }

  /** Steps and statements: one answer sentence each, one-to-one, best pairs first. */
  private coverStepsAndStatements(covering: Covering, item: TestItem, units: Unit[]): void {
    const { coverage } = covering;
    const single = item.facts.filter((f) => f.role !== 'warning');
    const pairs: Array<{ fact: ReferenceFact; unit: Unit; recall: number; similarity: number }> = [];
    for (const fact of single) {
      const terms = termSet(fact.text);
      // a step counts as given only when the answer gives it as an instruction (numbered or imperative)
      for (const unit of fact.role === 'step' ? units.filter((u) => this.isInstruction(u)) : units) {
        const recall = termRecall(terms, unit.terms);
        if (recall >= MATCHING.factRecall) pairs.push({ fact, unit, recall, similarity: dice(terms, unit.terms) });
      }
    }
    // a step is matched to a numbered line before a sentence of running text that happens to say the same
    const listedStep = (p: (typeof pairs)[number]) => (p.fact.role === 'step' && p.unit.listed ? 1 : 0);
    pairs.sort((a, b) => b.recall - a.recall || listedStep(b) - listedStep(a) || b.similarity - a.similarity);
    const usedUnits = new Set<string>();
    for (const pair of pairs) {
      if (coverage.has(pair.fact.id) || usedUnits.has(pair.unit.id)) continue;
      usedUnits.add(pair.unit.id);
      cover(covering, pair.fact, [pair.unit], pair.recall);
    }
    for (const fact of single) if (!coverage.has(fact.id)) coverage.set(fact.id, { factId: fact.id, covered: false, by: [], score: 0 });
  }

  /** Grounding, instructions, relevance and order of the answer's sentences. */
  private judgeAnswerFacts(item: TestItem, units: Unit[], unitCovers: ReadonlyMap<string, string[]>): AnswerFact[] {
    const factById = new Map(item.facts.map((f) => [f.id, f]));
    const factSentences = item.facts.flatMap((f) => splitSentences(f.text)).map((text) => ({ text, terms: termSet(text) }));
    const stepOrder: Array<{ unit: number; order: number }> = [];
    const answerFacts: AnswerFact[] = units.map((unit, i) => {
      const bestSource = this.bestSource(unit.terms, factSentences);
      const covers = unitCovers.get(unit.id) ?? [];
      const grounded = covers.length > 0 || bestSource.recall >= MATCHING.groundedRecall;
      const step = covers.map((id) => factById.get(id)).find((f) => f?.role === 'step');
      if (step && step.order !== null) stepOrder.push({ unit: i, order: step.order });
      const ownHedges = hedgesIn(unit.text).filter((h) => !hedgesIn(bestSource.text).includes(h));
      return {
        id: unit.id,
        text: unit.text,
        instruction: this.isInstruction(unit),
        grounded,
        relevant: null,
        correct: grounded ? true : this.isInstruction(unit) ? false : null,
        covers,
        note: ownHedges.length ? `hedge: ${ownHedges.join(', ')}` : grounded ? '' : 'not in the manual',
      };
    });
    // relevance: the answer's sentences against the question's topic (its words and its manual sections' words)
    const topic = new Set([...termSet(item.question), ...item.facts.flatMap((f) => [...termSet(f.text)]), ...item.sectionIds.flatMap((id) => this.corpus.sectionChunks(id).flatMap((c) => [...termSet(c.text)]))]);
    units.forEach((unit, i) => {
      const onTopic = termRecall(unit.terms, topic);
      answerFacts[i].relevant = answerFacts[i].covers.length > 0 || onTopic >= MATCHING.onTopic ? true : onTopic <= MATCHING.offTopic ? false : null;
    });
    const inOrder = increasingRun(stepOrder.map((s) => s.order));
    stepOrder.forEach((s, k) => {
      if (!inOrder.has(k)) {
        answerFacts[s.unit].correct = false;
        answerFacts[s.unit].note = 'step out of the manual’s order';
      }
    });
    return answerFacts;
  }
}

/** Which reference facts are covered, and which facts each answer sentence covers. */
interface Covering {
  coverage: Map<string, FactCoverage>;
  unitCovers: Map<string, string[]>;
}

function cover(covering: Covering, fact: ReferenceFact, by: Unit[], score: number): void {
  covering.coverage.set(fact.id, { factId: fact.id, covered: by.length > 0, by: by.map((u) => u.id), score });
  for (const u of by) covering.unitCovers.set(u.id, [...(covering.unitCovers.get(u.id) ?? []), fact.id]);
}

/** Warnings: the best run of consecutive sentences, and the hazard named. */
function coverWarnings(covering: Covering, item: TestItem, units: Unit[]): void {
  for (const fact of item.facts.filter((f) => f.role === 'warning')) {
    const terms = termSet(fact.text);
    const hazards = hazardTerms(fact.text);
    const width = splitSentences(fact.text).length + 1;
    let best = { score: 0, run: [] as Unit[] };
    for (let start = 0; start < units.length; start++) {
      const run: Unit[] = [];
      const seen = new Set<string>();
      for (let end = start; end < Math.min(units.length, start + width); end++) {
        run.push(units[end]);
        for (const t of units[end].terms) seen.add(t);
        const score = termRecall(terms, seen);
        const named = hazards.length === 0 || hazardTerms(run.map((u) => u.text).join(' ')).some((h) => hazards.includes(h));
        if (named && score > best.score) best = { score, run: [...run] };
      }
    }
    // the run's sentences that are the warning's (a sentence before or after it only rode along)
    const own = best.run.filter((u) => termRecall(u.terms, terms) >= 0.5);
    cover(covering, fact, best.score >= MATCHING.warningRecall ? own : [], best.score);
  }
}

/**
 * GEAR's actionability (Fig. 15) read lexically, for every question: the answer is actionable when it gives at least one
 * fact of the reference — a step as an instruction, a statement of the manual, a warning to heed; an answer that gives
 * none of them (a refusal, "the manual does not cover this", another topic) is not.
 */
function paperActionability(item: TestItem, coverage: ReadonlyMap<string, FactCoverage>): MetricValue {
  if (item.facts.length === 0) return { status: 'not_judged', reason: 'the reference answer has no facts to act on' };
  const given = item.facts.filter((f) => coverage.get(f.id)?.covered === true);
  return judged(given.length ? 1 : 0, given.length ? `gives ${given.length} of the reference's facts (${[...new Set(given.map((f) => f.role))].join(', ')}) to act on` : 'gives none of the reference facts: nothing to act on');
}

/** The metrics of one answer from its coverage and its judged sentences. */
function manualMetrics(item: TestItem, units: Unit[], coverage: ReadonlyMap<string, FactCoverage>, answerFacts: AnswerFact[]): Record<ManualMetric, MetricValue> {
  const facts = item.facts;
  const factById = new Map(facts.map((f) => [f.id, f]));
  const covered = (f: ReferenceFact) => coverage.get(f.id)?.covered === true;
  const essential = facts.filter((f) => f.essential);
  const safety = facts.filter((f) => f.safetyCritical);
  const decided = answerFacts.filter((f) => f.correct !== null);
  const hedged = answerFacts.filter((f) => f.note.startsWith('hedge'));
  const steps = facts.filter((f) => f.role === 'step');
  return {
    completeness_hard: facts.length ? judged(share(facts.filter(covered).length, facts.length), `${facts.filter(covered).length} of ${facts.length} reference facts covered`) : { status: 'not_applicable', reason: 'the reference answer has no facts' },
    completeness_soft: essential.length ? judged(share(essential.filter(covered).length, essential.length), `${essential.filter(covered).length} of ${essential.length} essential facts covered`) : { status: 'not_applicable', reason: 'no essential reference fact' },
    risk_awareness: safety.length ? judged(share(safety.filter(covered).length, safety.length), `${safety.filter(covered).length} of ${safety.length} warnings covered`) : { status: 'not_applicable', reason: 'the manual gives no warning for this question' },
    relevance: (() => {
      const decidedRelevance = answerFacts.filter((f) => f.relevant !== null);
      const on = decidedRelevance.filter((f) => f.relevant).length;
      return decidedRelevance.length ? judged(share(on, decidedRelevance.length), `${on} of ${decidedRelevance.length} answer sentences on the question's topic`) : ({ status: 'not_judged', reason: 'no answer sentence clearly on or off the topic' } as MetricValue);
    })(),
    correctness: decided.length
      ? judged(share(decided.filter((f) => f.correct).length, decided.length), `${decided.filter((f) => f.correct).length} of ${decided.length} checkable answer facts are the manual's, in its order`)
      : { status: 'not_judged', reason: 'no answer fact the manual confirms or contradicts' },
    confidence: units.length ? judged(hedged.length ? 0 : 1, hedged.length ? `vague: ${hedged.map((f) => f.note.slice(7)).join('; ')}` : 'no hedging outside the manual’s words') : { status: 'not_judged', reason: 'empty answer' },
    actionability: steps.length
      ? judged(answerFacts.some((f) => f.instruction && f.covers.some((id) => factById.get(id)?.role === 'step')) ? 1 : 0, 'usable steps from the manual present or not')
      : { status: 'not_applicable', reason: 'the question asks for no steps' },
  };
}
