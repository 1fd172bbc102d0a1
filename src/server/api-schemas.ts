import { z } from 'zod';

/** Request schemas of the bench API; the UI builds its requests to the same shapes. */

export const ConfigNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,100}\.ya?ml$/, 'expected a config file name ending in .yaml or .yml');

export const ValidateConfigBodySchema = z.object({ text: z.string().max(200_000, 'config text is limited to 200,000 characters') }).strict();

export const StartCampaignBodySchema = z
  .object({
    configName: ConfigNameSchema,
    /** edited YAML text to run instead of the file's; validated with the same schema */
    text: z.string().max(200_000).optional(),
  })
  .strict();

export const StopCampaignBodySchema = z.object({}).strict();

export const ResumeCampaignBodySchema = z.object({ runId: z.string().min(1).max(100) }).strict();

export const RunIdSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'expected a run id');

export const CompareQuerySchema = z.object({ a: RunIdSchema, b: RunIdSchema }).strict();

/** Starts a live session (src/kinds/live/config.ts): the head unit, judges, safety policy and where it starts. */
export const StartSessionBodySchema = z.object({ config: z.unknown().default({}) }).strict();

/** One turn the technician types. */
export const SessionTurnBodySchema = z.object({ text: z.string().min(1).max(10_000) }).strict();

/** What the technician changes in the car's state (speed, gear, state of charge, position, time): a suite context. */
export const SessionContextBodySchema = z.object({ change: z.unknown() }).strict();

export const EndSessionBodySchema = z.object({}).strict();

/** Pins a stored conversation as a suite (docs/suites.md, "Pin as regression"). */
export const PinBodySchema = z.object({}).strict();
