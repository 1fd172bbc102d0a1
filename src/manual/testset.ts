import { createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import { z } from 'zod';
import { FILE_LIMITS, readBoundedLines } from '../domain/input-files.ts';
import { describeZodError, ValidationError } from '../domain/validation.ts';
import type { ManualCorpus } from './corpus.ts';
import { DifficultySchema, QuestionKindSchema, WarningTypeSchema, type Difficulty, type ManualChunk, type QuestionKind } from './model.ts';
import { splitSentences, termSet } from './text.ts';
import { createRng } from '../domain/rng.ts';

/** One atomic fact of a reference answer, with GEAR's tags. */
export const ReferenceFactSchema = z.object({
  id: z.string().min(1),
  text: z.string().min(1),
  /** needed for a complete answer (completeness-soft counts only these) */
  essential: z.boolean(),
  /** a warning the answer must carry (risk awareness counts only these) */
  safetyCritical: z.boolean(),
  /** what the fact is in the manual: a procedure step, a warning block, or a statement of running text */
  role: z.enum(['step', 'warning', 'statement']),
  /** position of a step in its procedure (0-based), null otherwise */
  order: z.number().int().min(0).nullable(),
  /** the chunk it comes from */
  chunkId: z.string(),
  /** for warnings: the block's id in the manual markup and its type */
  warningId: z.string().nullable(),
  warningType: WarningTypeSchema.nullable(),
});
export type ReferenceFact = z.infer<typeof ReferenceFactSchema>;

export const TESTSET_FORMAT = 'icabench-manual-testset/1';

/** One question of a test set with its reference answer; one JSON object per line of a .jsonl file. */
export const TestItemSchema = z
  .object({
    format: z.literal(TESTSET_FORMAT),
    id: z.string().min(1),
    kind: QuestionKindSchema,
    difficulty: DifficultySchema,
    question: z.string().min(1),
    /** the reference answer as text */
    answer: z.string(),
    facts: z.array(ReferenceFactSchema),
    chapter: z.string(),
    /** the sections the answer rests on (main section first) */
    sectionIds: z.array(z.string()).min(1),
    chunkIds: z.array(z.string()),
    /** warnings the answer must carry (ids of the manual's warning blocks) */
    warningIds: z.array(z.string()),
    /** "deterministic", "llm:<model ref>", or "paraphrase:<operator>" (warning-omission search) */
    generator: z.string().min(1),
    /** the question this one was derived from (paraphrases) */
    parentId: z.string().nullable().default(null),
  })
  .strict();
export type TestItem = z.infer<typeof TestItemSchema>;

/** Reads a test set (.jsonl, a line at a time within FILE_LIMITS.testSet); an invalid line fails with the file, the line number and the field; an empty one is refused. */
export async function readTestSet(path: string): Promise<TestItem[]> {
  if (!existsSync(path)) throw new ValidationError(path, 'test set file not found');
  const items: TestItem[] = [];
  const ids = new Set<string>();
  for (const { text: line, number: n } of readBoundedLines(path, 'test set', FILE_LIMITS.testSet)) {
    if (!line.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (error) {
      throw new ValidationError(`${path}:${n}`, `not valid JSON: ${(error as Error).message}`);
    }
    const parsed = TestItemSchema.safeParse(raw);
    if (!parsed.success) throw new ValidationError(`${path}:${n}`, describeZodError(parsed.error));
    if (ids.has(parsed.data.id)) throw new ValidationError(`${path}:${n}`, `id "${parsed.data.id}" appears twice; test item ids must be unique`);
    ids.add(parsed.data.id);
    items.push(parsed.data);
  }
  if (items.length === 0) throw new ValidationError(path, 'nothing to ask: the test set holds no question');
  return items;
}

export async function writeTestSet(path: string, items: Iterable<TestItem>): Promise<number> {
  const out = createWriteStream(path);
  let n = 0;
  for (const item of items) {
    if (!out.write(`${JSON.stringify(TestItemSchema.parse(item))}\n`)) await once(out, 'drain');
    n++;
  }
  out.end();
  await once(out, 'finish');
  return n;
}

/** Words in a procedure's heading path that make it a troubleshooting or a maintenance question. */
const TROUBLESHOOTING = /\b(malfunction|fault|failure|problem|limit|limits|troubleshooting|defect|flat|breakdown|jump|tow|emergency)\b/i;
const MAINTENANCE = /\b(care|clean|cleaning|wash|washing|maintenance|service|tire|tires|oil|fluid|fluids|battery|replac\w*|refuel\w*|fuel|coolant|wiper|bulb|filter)\b/i;

/** Sections whose running text says what something is. */
const DEFINING_TITLES = /^(principle|general information|concept|overview)$/i;

function questionKindOf(headingPath: readonly string[]): QuestionKind {
  const path = headingPath.join(' ');
  if (TROUBLESHOOTING.test(path)) return 'troubleshooting';
  if (MAINTENANCE.test(path)) return 'maintenance';
  return 'procedure';
}

/** Where a question stands, for its wording: the two headings above the section. */
function context(headingPath: readonly string[], drop: number): string {
  return headingPath.slice(Math.max(0, headingPath.length - drop - 2), headingPath.length - drop).join(' › ');
}

function warningFact(itemId: string, n: number, warning: ManualChunk): ReferenceFact {
  return { id: `${itemId}/f${n}`, text: warning.text, essential: true, safetyCritical: true, role: 'warning', order: null, chunkId: warning.id, warningId: warning.id, warningType: warning.warningType };
}

function statementFacts(itemId: string, start: number, chunk: ManualChunk | undefined, essentialFirst: boolean, limit: number): ReferenceFact[] {
  if (!chunk) return [];
  // a sentence without content words ("Or:") states nothing an answer could cover
  return splitSentences(chunk.text)
    .filter((text) => termSet(text).size > 0)
    .slice(0, limit)
    .map((text, i) => ({ id: `${itemId}/f${start + i}`, text, essential: essentialFirst && i === 0, safetyCritical: false, role: 'statement' as const, order: null, chunkId: chunk.id, warningId: null, warningType: null }));
}

function answerText(facts: readonly ReferenceFact[]): string {
  const steps = facts.filter((f) => f.role === 'step').map((f, i) => `${i + 1}. ${f.text}`);
  const statements = facts.filter((f) => f.role === 'statement').map((f) => f.text);
  const warnings = facts.filter((f) => f.role === 'warning').map((f) => `${f.warningType}: ${f.text}`);
  return [statements.join(' '), steps.join('\n'), warnings.join('\n')].filter(Boolean).join('\n');
}

function item(base: Omit<TestItem, 'format' | 'answer' | 'chunkIds' | 'warningIds' | 'generator' | 'parentId'>): TestItem {
  return {
    format: TESTSET_FORMAT,
    ...base,
    answer: answerText(base.facts),
    chunkIds: [...new Set(base.facts.map((f) => f.chunkId))],
    warningIds: base.facts.flatMap((f) => (f.warningId ? [f.warningId] : [])),
    generator: 'deterministic',
    parentId: null,
  };
}

/** How many sentences of a section's running text a reference answer takes as optional statements. */
const STATEMENTS_PER_ANSWER = 3;

/**
 * The deterministic tier of the test-set generator, from the manual's structure alone:
 * - every section with procedures → "What are the steps for …": the steps (of all its procedures, in
 *   order) are essential facts, the warnings guarding the section safety-critical ones, the section's
 *   first sentences optional ones;
 * - every warning topic (a section its warnings are about) → "What safety information is there on …": each
 *   warning a safety-critical fact;
 * - every defining section (Principle, General information, Concept, Overview) → "What is …":
 *   its first sentence essential, the next ones optional, the warnings guarding it safety-critical.
 * Kind: troubleshooting / maintenance when the heading path says so, else procedure; difficulty:
 * expert for procedures of more than 3 steps or sections more than 4 headings deep.
 */
export function generateDeterministicTestSet(corpus: ManualCorpus): TestItem[] {
  const items: TestItem[] = [];
  const proceduresBySection = new Map<string, ManualChunk[]>();
  for (const chunk of corpus.chunks) if (chunk.kind === 'procedure') proceduresBySection.set(chunk.sectionId, [...(proceduresBySection.get(chunk.sectionId) ?? []), chunk]);
  // a section's procedures form one question (e.g. "To open: 1. 2. — To close: 1. 2."): they share its heading
  for (const [sectionId, procedures] of proceduresBySection) {
    const first = procedures[0];
    const id = `det:procedure:${sectionId}`;
    const steps: ReferenceFact[] = procedures
      .flatMap((p) => p.steps.map((text) => ({ text, chunkId: p.id })))
      .map(({ text, chunkId }, i) => ({ id: `${id}/f${i}`, text, essential: true, safetyCritical: false, role: 'step' as const, order: i, chunkId, warningId: null, warningType: null }));
    const warnings = corpus.warningsGuarding(sectionId).map((w, i) => warningFact(id, steps.length + i, w));
    const intro = statementFacts(id, steps.length + warnings.length, corpus.sectionChunks(sectionId).find((c) => c.kind === 'section'), false, STATEMENTS_PER_ANSWER);
    const title = first.headingPath[first.headingPath.length - 1] ?? first.chapter;
    const difficulty: Difficulty = steps.length > 3 || first.headingPath.length > 4 ? 'expert' : 'beginner';
    items.push(item({ id, kind: questionKindOf(first.headingPath), difficulty, question: `What are the steps for "${title}" (${context(first.headingPath, 1)})?`, facts: [...steps, ...warnings, ...intro], chapter: first.chapter, sectionIds: [sectionId] }));
  }

  const topics = new Map<string, ManualChunk[]>();
  for (const warning of corpus.warnings()) {
    const topic = warning.topicSectionId ?? warning.sectionId;
    topics.set(topic, [...(topics.get(topic) ?? []), warning]);
  }
  for (const [topic, warnings] of topics) {
    const id = `det:safety:${topic}`;
    const path = corpus.topicHeadingPath(warnings[0]);
    const facts = warnings.map((w, i) => warningFact(id, i, w));
    const title = path[path.length - 1] ?? warnings[0].chapter;
    items.push(item({ id, kind: 'safety', difficulty: path.length > 4 ? 'expert' : 'beginner', question: `What safety information is there on "${title}" (${context(path, 1)})?`, facts, chapter: warnings[0].chapter, sectionIds: [topic] }));
  }

  for (const chunk of corpus.chunks) {
    const title = chunk.headingPath[chunk.headingPath.length - 1] ?? '';
    if (chunk.kind !== 'section' || !DEFINING_TITLES.test(title) || chunk.headingPath.length < 2) continue;
    const id = `det:definition:${chunk.id}`;
    const subject = chunk.headingPath[chunk.headingPath.length - 2];
    const statements = statementFacts(id, 0, chunk, true, STATEMENTS_PER_ANSWER);
    if (statements.length === 0) continue;
    const facts = [...statements, ...corpus.warningsGuarding(chunk.sectionId).map((w, i) => warningFact(id, statements.length + i, w))];
    items.push(item({ id, kind: 'definition', difficulty: chunk.headingPath.length > 4 ? 'expert' : 'beginner', question: `What is "${subject}" (${[context(chunk.headingPath, 2) || chunk.chapter, title.toLowerCase()].join(', ')})?`, facts, chapter: chunk.chapter, sectionIds: [chunk.sectionId] }));
  }
  return disambiguate(items);
}

/**
 * Manuals repeat a heading for equipment variants (two "Turning on the drive-ready state" sections
 * under the same path). Variants with the same reference answer become one question resting on all
 * their sections; variants that differ get the words their answer starts with, so each question has
 * one right answer.
 */
function disambiguate(items: TestItem[]): TestItem[] {
  const byQuestion = new Map<string, TestItem[]>();
  for (const it of items) byQuestion.set(it.question, [...(byQuestion.get(it.question) ?? []), it]);
  const out: TestItem[] = [];
  for (const group of byQuestion.values()) {
    const byAnswer = new Map<string, TestItem>();
    for (const it of group) {
      const same = byAnswer.get(it.answer);
      if (same) byAnswer.set(it.answer, { ...same, sectionIds: [...same.sectionIds, ...it.sectionIds], chunkIds: [...new Set([...same.chunkIds, ...it.chunkIds])] });
      else byAnswer.set(it.answer, it);
    }
    const variants = [...byAnswer.values()];
    if (variants.length === 1) {
      out.push(variants[0]);
      continue;
    }
    const asked = new Set<string>();
    variants.forEach((variant, n) => {
      const others = new Set(variants.filter((v) => v !== variant).flatMap((v) => v.facts.map((f) => f.text)));
      const own = variant.facts.find((f) => !others.has(f.text)) ?? variant.facts[0];
      let question = `${variant.question.replace(/\?$/, '')}, the variant that says "${own.text.split(/\s+/).slice(0, 12).join(' ')}"?`;
      // two variants whose own words open alike are told apart by their number
      if (asked.has(question)) question = question.replace(/\?$/, ` (variant ${n + 1})?`);
      asked.add(question);
      out.push({ ...variant, question });
    });
  }
  return out;
}

/**
 * One question per manual section, as GEAR builds its evaluation set ("we sampled one question per semantic section"):
 * the questions grouped by their main section (the first of `sectionIds`), one picked per section with a seeded draw,
 * in the order the sections first appear.
 */
export function onePerSection(items: readonly TestItem[], seed: number): TestItem[] {
  const bySection = new Map<string, TestItem[]>();
  for (const item of items) bySection.set(item.sectionIds[0], [...(bySection.get(item.sectionIds[0]) ?? []), item]);
  const rng = createRng(seed);
  return [...bySection.values()].map((group) => (group.length === 1 ? group[0] : rng.shuffle(group)[0]));
}
