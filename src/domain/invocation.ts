import { z } from 'zod';

/** Where a model tier's calls went. */
export const ModelHostSchema = z.object({
  ref: z.string(),
  /** a base URL, or "in-process" for gguf files */
  host: z.string(),
});

/** What one invocation of a campaign (a start or a resume) ran on: the `invocations` entries of summary.json. */
export const InvocationSummarySchema = z.object({
  icabench: z.string(),
  node: z.string(),
  platform: z.string(),
  arch: z.string(),
  modelHosts: z.array(ModelHostSchema),
});
export type InvocationSummary = z.infer<typeof InvocationSummarySchema>;
