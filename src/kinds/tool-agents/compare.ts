import { z } from 'zod';
import type { TrialResult } from './loop.ts';
import { summarizeTrials } from './summary.ts';

const HallucinationSplitSchema = z.object({ fabrication: z.number().int(), concealment: z.number().int() });

/** Two tool-agent runs side by side (e.g. two agents on the same tasks): pass^k per family and the tasks that moved. */
export const ToolRunComparisonSchema = z.object({
  families: z.array(
    z.object({
      family: z.string(),
      k: z.number().int(),
      /** unbiased pass^k of run a / run b at the largest k both have */
      a: z.number().nullable(),
      b: z.number().nullable(),
      delta: z.number().nullable(),
    }),
  ),
  /** tasks whose success rate differs, largest change first */
  changed: z.array(z.object({ taskId: z.string(), a: z.number().nullable(), b: z.number().nullable() })),
  onlyIn: z.object({ a: z.array(z.string()), b: z.array(z.string()) }),
  /** failed hallucination trials of each run: active fabrication vs implicit concealment (Kirmayr et al.) */
  hallucinationFailures: z.object({ a: HallucinationSplitSchema, b: HallucinationSplitSchema }),
});
export type ToolRunComparison = z.infer<typeof ToolRunComparisonSchema>;

function successRates(results: readonly TrialResult[]): Map<string, number | null> {
  const byTask = new Map<string, TrialResult[]>();
  for (const r of results) byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r]);
  return new Map([...byTask].map(([id, trials]) => [id, trials.every((t) => t.outcome === 'not_runnable') ? null : trials.filter((t) => t.reward === 1).length / trials.length]));
}

export function compareToolRuns(a: readonly TrialResult[], b: readonly TrialResult[]): ToolRunComparison {
  const sa = summarizeTrials(a);
  const sb = summarizeTrials(b);
  const families = [...new Set([...Object.keys(sa.families), ...Object.keys(sb.families)])].sort().map((family) => {
    const ua = sa.families[family]?.reliability.byK ?? [];
    const ub = sb.families[family]?.reliability.byK ?? [];
    const k = Math.max(1, Math.min(ua.length || ub.length, ub.length || ua.length));
    const pa = ua.find((p) => p.k === k)?.passHatK.unbiased ?? null;
    const pb = ub.find((p) => p.k === k)?.passHatK.unbiased ?? null;
    return { family, k, a: pa, b: pb, delta: pa !== null && pb !== null ? pb - pa : null };
  });
  const ra = successRates(a);
  const rb = successRates(b);
  const changed = [...ra.keys()]
    .filter((id) => rb.has(id) && ra.get(id) !== rb.get(id))
    .map((taskId) => ({ taskId, a: ra.get(taskId)!, b: rb.get(taskId)! }))
    .sort((x, y) => Math.abs((y.b ?? 0) - (y.a ?? 0)) - Math.abs((x.b ?? 0) - (x.a ?? 0)) || x.taskId.localeCompare(y.taskId));
  return {
    families,
    changed,
    onlyIn: { a: [...ra.keys()].filter((id) => !rb.has(id)), b: [...rb.keys()].filter((id) => !ra.has(id)) },
    hallucinationFailures: {
      a: { fabrication: sa.hallucinationFailures.fabrication, concealment: sa.hallucinationFailures.concealment },
      b: { fabrication: sb.hallucinationFailures.fabrication, concealment: sb.hallucinationFailures.concealment },
    },
  };
}

/** Two tool-agents runs compared, as `icabench compare` prints them: pass^k per family and the tasks that moved. */
export function toolComparisonLines(a: { id: string; name: string; agent: string | null }, b: { id: string; name: string; agent: string | null }, comparison: ToolRunComparison): string[] {
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
  return [
    `A ${a.name} (${a.id}, ${a.agent ?? 'no trials'}) vs B ${b.name} (${b.id}, ${b.agent ?? 'no trials'})`,
    ...comparison.families.map((f) => `  ${f.family}: pass^${f.k} (unbiased) A ${pct(f.a)}, B ${pct(f.b)}, B − A ${f.delta === null ? 'n/a' : `${(f.delta * 100).toFixed(1)} pts`}`),
    `  tasks whose success rate changed: ${comparison.changed.length}`,
    ...comparison.changed.slice(0, 20).map((c) => `    ${c.taskId}: ${pct(c.a)} → ${pct(c.b)}`),
    ...(comparison.onlyIn.a.length || comparison.onlyIn.b.length ? [`  only in A: ${comparison.onlyIn.a.length} tasks, only in B: ${comparison.onlyIn.b.length} tasks`] : []),
    `  failed hallucination trials, fabrication / concealment: A ${comparison.hallucinationFailures.a.fabrication} / ${comparison.hallucinationFailures.a.concealment}, B ${comparison.hallucinationFailures.b.fabrication} / ${comparison.hallucinationFailures.b.concealment}`,
  ];
}
