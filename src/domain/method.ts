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

/** The four methods icabench implements, by the bench part that runs each. */
export const PAPER_OF = {
  dialogue: 'Negi et al., automated evaluation of multi-turn dialogues in in-car conversational assistants',
  'judge-bench': 'Habicht et al., benchmarking contextual understanding for in-car conversational systems',
  'manual-qa': 'Beyranvand et al., GEAR: fact-level evaluation of RAG car assistants',
  'tool-agents': 'Kirmayr et al., CAR-bench: tool-using in-car agents under uncertainty',
} as const;
export type MethodFamily = keyof typeof PAPER_OF;

/** The paper a kind of run follows; kinds without a paper of their own (suites) are dialogue runs. */
export function familyOfKind(kind: string): MethodFamily {
  return kind in PAPER_OF ? (kind as MethodFamily) : 'dialogue';
}

export const PresetSchema = z.object({
  method: MethodSchema,
  /** one line a reader of the summary sees: which preset ran and whose method it follows */
  statement: z.string(),
});
export type Preset = z.infer<typeof PresetSchema>;

/** The preset line of a run's summary. */
export function presetOf(family: MethodFamily, method: Method): Preset {
  return {
    method,
    statement:
      method === 'paper'
        ? `paper preset: ${PAPER_OF[family]}, run as published (docs/reproduction.md)`
        : `lab defaults (method: lab); the published method is \`method: paper\` (docs/reproduction.md)`,
  };
}

/** The method stored with a run's config (`method:`), lab when absent (runs stored before presets existed). */
export function methodOfStoredConfig(config: unknown): Method {
  const parsed = MethodSchema.safeParse((config as { method?: unknown } | null)?.method);
  return parsed.success ? parsed.data : 'lab';
}
