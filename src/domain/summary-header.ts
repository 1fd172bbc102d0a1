import { z } from 'zod';
import { InvocationSummarySchema } from './invocation.ts';
import { PresetSchema } from './method.ts';
import { TiersRecordSchema } from './tiers.ts';

/** The stored run a summary is of: its id, its config's name, how it ran, its status and its timings. */
export const RunInfoSchema = z.object({ id: z.string(), name: z.string(), mode: z.string(), status: z.string(), createdAt: z.string(), finishedAt: z.string().nullable() });
export type RunInfo = z.infer<typeof RunInfoSchema>;

/**
 * What every kind's summary.json starts with, in this order (src/report/summary-header.ts fills it from the
 * store): the kind the run is stored as, the run, the method preset, what each invocation (start, each resume)
 * ran with — the simulator and the judges (`tiers`) and the machine and model hosts (`invocations`). A kind's
 * own sections follow.
 */
export const SummaryHeaderSchema = z.object({
  schemaVersion: z.literal(1),
  kind: z.string(),
  run: RunInfoSchema,
  preset: PresetSchema,
  tiers: z.array(TiersRecordSchema),
  invocations: z.array(InvocationSummarySchema),
});
export type SummaryHeader = z.infer<typeof SummaryHeaderSchema>;
