import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { withAbsolutePaths } from '../../run/path-fields.ts';
import type { ContextVector } from '../../domain/context.ts';
import { loadYaml } from '../../config/yaml.ts';
import { applySuiteContext, DEFAULT_SUITE_START, SuiteContextProblem, SuiteContextSchema, type SuiteContext } from '../../suite/format.ts';
import { CampaignConfigSchema, UNIT_AND_JUDGING_FIELDS, conversationsPathFields, type LoadedConversations } from '../dialogue/config.ts';

/** The kind a live session's run is stored as (src/kinds/registry.ts). */
export const LIVE_KIND = 'live';

/** The dialogue kind's fields a live session shares, defined once there (src/kinds/dialogue/config.ts). */
const DIALOGUE = CampaignConfigSchema.shape;

/**
 * A live session's config (docs/suites.md, "Live sessions"): the unit, its judges and how they judge, and where the session
 * starts. It is the one schema every way into a session reads (`icabench session --config`, `POST /api/session/start`),
 * so what it names is checked in one place (`pathFields` of the live kind).
 */
export const LiveSessionConfigSchema = z.strictObject({
  /** optional in a session config; a stored live run's config says it */
  kind: z.literal(LIVE_KIND).optional(),
  name: z.string().min(1).max(200).default('live session'),
  /** a session is one conversation, played as the technician types it */
  concurrency: z.literal(1).default(1),
  ...UNIT_AND_JUDGING_FIELDS,
  /** where and when the session starts (default: Maxvorstadt, Munich, 2026-05-12 12:00, parked in P) */
  context: SuiteContextSchema.optional(),
  /** a drive scenario underneath: it sets the car's state at each turn instead of the technician */
  vehicle: DIALOGUE.vehicle,
});
export type LiveSessionConfig = z.infer<typeof LiveSessionConfigSchema>;
export type LiveSessionConfigInput = z.input<typeof LiveSessionConfigSchema>;

/** A live session's config as its run holds it (always with `kind: live`, so a stored live run validates as one). */
export type LoadedLiveSession = LoadedConversations<LiveSessionConfig>;

export class LiveSessionError extends Error {
  constructor(
    message: string,
    /** the fields that were wrong (a context change out of range, an unknown district), each with what was expected */
    readonly fields: Array<{ path: string; message: string }> = [],
  ) {
    super(message);
    this.name = 'LiveSessionError';
  }
}

/** A session config (parsed) as its run holds it; `path`: the file it came from, if any (its relative paths resolve there). */
export function liveSession(config: LiveSessionConfig, path = 'live-session'): LoadedLiveSession {
  const stored: LiveSessionConfig = { ...config, kind: LIVE_KIND };
  const resolved = path === 'live-session' ? structuredClone(stored) : withAbsolutePaths(stored, conversationsPathFields(stored), dirname(path));
  return { config: resolved, path, seeds: [], strategies: [] };
}

/** Reads a session config file (`icabench session --config`), bounded and with line numbers like every config. */
export function loadLiveSessionConfig(path: string): LoadedLiveSession {
  const absolute = resolve(path);
  return liveSession(loadYaml(LiveSessionConfigSchema, absolute, 'session config'), absolute);
}

const PARKED: SuiteContext = { vehicle: { speedKmh: 0, gear: 'P' } };

/** Where and when a session starts: its config's `context` over the default start, parked. An unknown district names the known ones. */
export function sessionStart(config: Pick<LiveSessionConfig, 'context'>): ContextVector {
  try {
    return applySuiteContext(applySuiteContext(DEFAULT_SUITE_START, PARKED, 'context'), config.context, 'context');
  } catch (error) {
    if (error instanceof SuiteContextProblem) throw new LiveSessionError(`${error.field}: ${error.message}`, [{ path: error.field, message: error.message }]);
    throw error;
  }
}
