import { z } from 'zod';

/**
 * Which method a run follows. `lab` (the default) is icabench's own reading of each paper, with the
 * lab's safeguards (the critical-failure gate, evaluator feedback in every mode, the bench's F1
 * convention); `paper` runs the method exactly as its paper publishes it, so the figures are
 * comparable with the paper's tables. docs/reproduction.md lists, per paper, what differs and why.
 */
export const METHODS = ['lab', 'paper'] as const;
export const MethodSchema = z.enum(METHODS);
export type Method = z.infer<typeof MethodSchema>;

/** The four published methods icabench implements; each campaign kind names its own in its view (src/run/kind-view.ts). */
export const PAPERS = {
  negi: 'Negi et al., automated evaluation of multi-turn dialogues in in-car conversational assistants',
  habicht: 'Habicht et al., benchmarking contextual understanding for in-car conversational systems',
  gear: 'Beyranvand et al., GEAR: fact-level evaluation of RAG car assistants',
  carbench: 'Kirmayr et al., CAR-bench: tool-using in-car agents under uncertainty',
} as const;

export const PresetSchema = z.object({
  method: MethodSchema,
  /** one line a reader of the summary sees: which preset ran and whose method it follows */
  statement: z.string(),
});
export type Preset = z.infer<typeof PresetSchema>;

/** The preset line of a run's summary: the method `paper` (authors, title) as published, or the lab's reading of it. */
export function presetOf(paper: string, method: Method): Preset {
  return {
    method,
    statement:
      method === 'paper'
        ? `paper preset: ${paper}, run as published (docs/reproduction.md)`
        : `lab defaults (method: lab); the published method is \`method: paper\` (docs/reproduction.md)`,
  };
}

/** The method stored with a run's config (`method:`), lab when absent (runs stored before presets existed). */
export function methodOfStoredConfig(config: unknown): Method {
  const parsed = MethodSchema.safeParse((config as { method?: unknown } | null)?.method);
  return parsed.success ? parsed.data : 'lab';
}
