import { z } from 'zod';

/** Run fact kind (store.addRunFact) recording which simulator and judges a run used, once per start or resume. */
export const TIERS_FACT = 'tiers.resolved';

/** A prompt file a model tier sends, with a fingerprint of its text (a prompt edited without a new version shows). */
export const PromptVersionSchema = z.object({
  /** path under prompts/ without ".md", version included: "judge/turn-labels.v1" */
  id: z.string(),
  /** the first 16 hex digits of the file's SHA-256 */
  sha256: z.string(),
});

export const TierUseSchema = z.object({
  /** the reference the tier reports about itself: "template", "oracle", "ollama:qwen3:14b", … */
  ref: z.string(),
  kind: z.enum(['template', 'oracle', 'llm', 'script']),
  prompts: z.array(PromptVersionSchema),
});
export type TierUse = z.infer<typeof TierUseSchema>;

/** A model the config named that was not available, replaced because the config's `fallback` asks for it. */
export const TierFallbackSchema = z.object({
  role: z.enum(['simulator', 'judge']),
  /** the model reference that was asked for */
  requested: z.string(),
  /** the deterministic tier that ran instead */
  replacedBy: z.enum(['template', 'oracle']),
  /** what was found (server not reachable, model missing, endpoint refused) */
  reason: z.string(),
  fix: z.string().nullable(),
});
export type TierFallback = z.infer<typeof TierFallbackSchema>;

/** What one invocation of a campaign ran with: the simulator, the judges in precedence order, the fallbacks taken. */
export const TiersRecordSchema = z.object({
  simulator: TierUseSchema,
  judges: z.array(TierUseSchema).min(1),
  fallbacks: z.array(TierFallbackSchema),
});
export type TiersRecord = z.infer<typeof TiersRecordSchema>;
