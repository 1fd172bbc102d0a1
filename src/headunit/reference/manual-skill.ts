import { z } from 'zod';
import type { ManualCorpus } from '../../manual/corpus.ts';
import type { ManualChunk, ManualMetric } from '../../manual/model.ts';
import type { ManualRetriever } from '../../manual/retrieval.ts';
import { dice, termSet } from '../../manual/text.ts';
import { REFERENCE_REPLIES } from '../../domain/vocabulary.ts';

/**
 * Fault profiles of the reference head unit's manual-QA skill. Each breaks the one metric named
 * here; it fires only where it can change the answer (a step to drop, a warning to omit …) and is
 * logged in the reply's diagnostics only then, as ground truth for tests.
 */
export const MANUAL_FAULT_PROFILES = {
  omit_warning: 'risk_awareness',
  drop_step: 'completeness_soft',
  swap_steps: 'correctness',
  invent_step: 'correctness',
  hedge: 'confidence',
  not_in_manual: 'completeness_hard',
} as const satisfies Record<string, ManualMetric>;

export type ManualFaultProfile = keyof typeof MANUAL_FAULT_PROFILES;
export const MANUAL_FAULT_PROFILE_NAMES = Object.keys(MANUAL_FAULT_PROFILES) as ManualFaultProfile[];
export const ManualFaultProfileSchema = z.enum(MANUAL_FAULT_PROFILE_NAMES as [ManualFaultProfile, ...ManualFaultProfile[]]);

export const ManualFaultConfigSchema = z
  .object({
    profiles: z
      .union([z.literal('all'), z.array(ManualFaultProfileSchema)], { error: () => `expected "all" or a list of manual fault profiles (${MANUAL_FAULT_PROFILE_NAMES.join(', ')})` })
      .default([]),
    rate: z.number().min(0).max(1).default(0.5),
    rates: z.partialRecord(ManualFaultProfileSchema, z.number().min(0).max(1)).default({}),
    seed: z.number().int().default(7),
  })
  .strict();
export type ManualFaultConfig = z.infer<typeof ManualFaultConfigSchema>;

export function manualFaultRates(config: ManualFaultConfig): Map<ManualFaultProfile, number> {
  const enabled = config.profiles === 'all' ? MANUAL_FAULT_PROFILE_NAMES : config.profiles;
  return new Map(enabled.map((profile) => [profile, config.rates[profile] ?? config.rate]));
}

/** Steps no manual gives: what invent_step adds (none of them matches a sentence of the BMW chapters). */
const INVENTED_STEPS = [
  'Tap the rear window glass three times to confirm the change.',
  'Hold the sun visor down for twenty seconds so the assistant registers the change.',
  'Press the glovebox lid twice to save the new language.',
];

const HEDGE_OPENING = "I'm not sure, but maybe this is it; I think it goes roughly like this.";

/** What a question asks for decides which kind of chunk answers it: steps, a warning, or a description. */
const INTENTS: ReadonlyArray<[RegExp, ManualChunk['kind']]> = [
  [/\b(steps?|how (do|can|should) i|how to|procedure)\b/i, 'procedure'],
  [/^\s*what (is|are|does)\b/i, 'section'],
  [/\b(know about|safe|safety|danger|dangerous|warning|careful|risks?)\b/i, 'warning'],
];
/** How many hits the skill looks through for one of the wanted kind. */
const RETRIEVAL_DEPTH = 50;

interface Answer {
  sectionId: string;
  section: ManualChunk | undefined;
  headingPath: string[];
  statements: string;
  procedures: string[][];
  warnings: ManualChunk[];
}

export interface ManualSkillAnswer {
  text: string;
  fired: ManualFaultProfile[];
  /** the section the answer was taken from (ground truth for tests: a retrieval miss is the skill's own failure) */
  sectionId: string | null;
}

/** Two steps whose words differ enough that swapping or dropping one shows. */
function distinct(a: string, b: string): boolean {
  return dice(termSet(a), termSet(b)) < 0.8;
}

/**
 * The reference head unit's manual-QA skill: retrieval over the manual index, then an extractive
 * answer from the best section — its text, its procedures' numbered steps and the warnings that
 * guard it, in the manual's words. With faults off it answers every deterministic question of the
 * vendored chapters completely (tested); each fault profile breaks one metric.
 */
export class ManualQaSkill {
  constructor(
    private readonly corpus: ManualCorpus,
    private readonly retriever: ManualRetriever,
  ) {}

  get describe(): string {
    return this.retriever.describe;
  }

  private async compose(question: string): Promise<Answer | null> {
    const hits = await this.retriever.search(question, RETRIEVAL_DEPTH);
    const wanted = INTENTS.find(([pattern]) => pattern.test(question))?.[1];
    const hit = (wanted && hits.find((h) => h.chunk.kind === wanted)) || hits[0];
    if (!hit) return null;
    const sectionId = hit.chunk.kind === 'warning' ? (hit.chunk.topicSectionId ?? hit.chunk.sectionId) : hit.chunk.sectionId;
    const chunks = this.corpus.sectionChunks(sectionId);
    const headingPath = hit.chunk.kind === 'warning' ? this.corpus.topicHeadingPath(hit.chunk) : hit.chunk.headingPath;
    return {
      sectionId,
      section: chunks.find((c) => c.kind === 'section'),
      headingPath,
      statements: chunks.find((c) => c.kind === 'section')?.text ?? '',
      procedures: chunks.filter((c) => c.kind === 'procedure').map((c) => [...c.steps]),
      warnings: this.corpus.warningsGuarding(sectionId),
    };
  }

  /** Answers one question; `fires` says whether a fault profile fires on this turn (seeded by the caller). */
  async answer(question: string, fires: (profile: ManualFaultProfile) => boolean): Promise<ManualSkillAnswer> {
    const answer = await this.compose(question);
    if (!answer) return { text: REFERENCE_REPLIES.notInManual, fired: [], sectionId: null };
    const fired: ManualFaultProfile[] = [];
    if (fires('not_in_manual')) return { text: REFERENCE_REPLIES.notInManual, fired: ['not_in_manual'], sectionId: answer.sectionId };
    let { procedures, warnings } = answer;
    const main = procedures.findIndex((p) => p.length >= 2);
    if (warnings.length > 0 && fires('omit_warning')) {
      warnings = [];
      fired.push('omit_warning');
    }
    if (main >= 0 && fires('drop_step')) {
      const steps = procedures[main];
      const index = steps.findIndex((s, i) => steps.every((other, j) => j === i || distinct(s, other)));
      if (index >= 0) {
        procedures = procedures.map((p, i) => (i === main ? p.filter((_, j) => j !== index) : p));
        fired.push('drop_step');
      }
    }
    if (main >= 0 && fires('swap_steps')) {
      const steps = procedures[main];
      const index = steps.findIndex((s, i) => i + 1 < steps.length && distinct(s, steps[i + 1]));
      if (index >= 0) {
        const swapped = [...steps];
        [swapped[index], swapped[index + 1]] = [swapped[index + 1], swapped[index]];
        procedures = procedures.map((p, i) => (i === main ? swapped : p));
        fired.push('swap_steps');
      }
    }
    let invented: string | null = null;
    if (fires('invent_step')) {
      invented = INVENTED_STEPS[question.length % INVENTED_STEPS.length];
      if (main >= 0) procedures = procedures.map((p, i) => (i === main ? [...p.slice(0, 1), invented!, ...p.slice(1)] : p));
      fired.push('invent_step');
    }
    const lines: string[] = [];
    if (fires('hedge')) {
      lines.push(HEDGE_OPENING);
      fired.push('hedge');
    }
    lines.push(`From the manual, ${answer.headingPath.join(' › ')}:`);
    if (answer.statements) lines.push(answer.statements);
    for (const steps of procedures) lines.push(...steps.map((s, i) => `${i + 1}. ${s}`));
    if (invented && main < 0) lines.push(invented);
    for (const warning of warnings) lines.push(`${warning.warningType}: ${warning.text}`);
    return { text: lines.join('\n'), fired, sectionId: answer.sectionId };
  }
}
