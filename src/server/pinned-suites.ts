import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { z } from 'zod';
import type { ConversationResult } from '../domain/conversation.ts';
import { holdsConversations } from '../domain/run-items.ts';
import { unitBuildOf } from '../run/run-facts.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';
import { writePinnedSuite } from '../suite/folder.ts';
import { pinConversation } from '../suite/pin.ts';
import { SUITE_KIND } from '../kinds/suite/suite-kind.ts';
import { UNIT_AND_JUDGING_FIELDS } from '../kinds/dialogue/config.ts';
import { PinBodySchema, RunIdSchema } from './api-schemas.ts';
import { ApiError, sendJson } from './http-util.ts';

/** A suite file in the suites folder, by its name alone (no folder: the app reads and writes only there). */
const SuiteFileNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,150}\.ya?ml$/, 'expected a suite file name in the suites folder, ending in .yaml');

export const RunPinnedSuiteBodySchema = z
  .object({
    /** the pinned suite file (a name in the suites folder) */
    suite: SuiteFileNameSchema,
    /** the run it was pinned from: the replay tests the same unit by the same rules, so its result compares with that run's */
    runId: RunIdSchema,
  })
  .strict();

/** The settings of a run's config a replay of one of its conversations keeps: the unit and how it is judged. */
const KEPT_FIELDS = Object.keys(UNIT_AND_JUDGING_FIELDS) as Array<keyof typeof UNIT_AND_JUDGING_FIELDS>;

/**
 * Pin → suite → run from the app: Pin writes a stored conversation as a suite file into the one suites folder
 * (src/suite/folder.ts, the same as `icabench pin`), and "Run pinned suite" replays that file as a `kind: suite`
 * campaign against the head unit of the run it came from, judged by that run's judges, safety policy and scoring.
 */
export class PinnedSuites {
  constructor(
    private readonly store: ResultStore,
    readonly dir: string,
  ) {}

  pin(run: RunRecord, result: ConversationResult): { path: string; file: string; yaml: string } {
    if (!holdsConversations(run)) throw new ApiError(400, 'unsupported_kind', `pin: run ${run.id}: a ${run.kind} run; only conversations (of dialogue, suite and live runs) are pinned as suites`);
    const conversation = pinConversation(result, { run: run.id, runName: run.name, unitBuild: unitBuildOf(this.store, run.id)?.build ?? null });
    return writePinnedSuite(this.dir, run.id, conversation);
  }

  /** The suite campaign (a config value, validated by the caller) replaying `file` against the unit of `run`. */
  campaignFor(run: RunRecord, file: string): Record<string, unknown> {
    const path = join(this.dir, file);
    if (!existsSync(path)) throw new ApiError(404, 'suite_not_found', `no suite "${file}" in the suites folder ${this.dir}`);
    // every kind of conversations stores its own config, each with these fields
    const original = run.config as Record<string, unknown>;
    const kept = Object.fromEntries(KEPT_FIELDS.filter((field) => original[field] !== undefined).map((field) => [field, original[field]]));
    return {
      kind: SUITE_KIND,
      name: file.replace(/\.ya?ml$/, ''),
      description: `${file} replayed against the head unit of run ${run.id} ("${run.name}"), judged as that run was`,
      suites: [path],
      concurrency: 1,
      ...kept,
    };
  }
}

type Params = Record<string, string>;

export interface PinnedSuiteRouteDeps {
  suites: PinnedSuites;
  requireRun(id: string): RunRecord;
  requireConversation(runId: string, key: string): ConversationResult;
  body<S extends z.ZodType>(req: IncomingMessage, schema: S, where: string): Promise<z.output<S>>;
  /** starts a campaign from a config value (validated, paths checked, as a start from the editor) */
  startCampaign(config: unknown, label: string): Promise<{ runId: string }>;
}

/** POST /api/runs/:id/conversations/:key/pin and POST /api/suites/run. */
export function pinnedSuiteRoutes(deps: PinnedSuiteRouteDeps) {
  return [
    {
      method: 'POST' as const,
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/conversations\/(?<key>[^/]+)\/pin$/,
      handle: async (req: IncomingMessage, res: ServerResponse, p: Params) => {
        const run = deps.requireRun(p.id);
        await deps.body(req, PinBodySchema, 'pin request');
        const pinned = deps.suites.pin(run, deps.requireConversation(run.id, p.key));
        sendJson(res, 201, { ...pinned, folder: deps.suites.dir });
      },
    },
    {
      method: 'POST' as const,
      pattern: /^\/api\/suites\/run$/,
      handle: async (req: IncomingMessage, res: ServerResponse) => {
        const request = await deps.body(req, RunPinnedSuiteBodySchema, 'pinned suite run');
        const original = deps.requireRun(request.runId);
        const started = await deps.startCampaign(deps.suites.campaignFor(original, request.suite), request.suite);
        sendJson(res, 202, { ...started, original: original.id });
      },
    },
  ];
}
