import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { RunSummary } from '../../analysis/profile.ts';
import { compareRunsWithDiversity, type RunComparison } from '../../analysis/compare.ts';
import { ApiError, parseRequest } from '../../domain/api-error.ts';
import { comparisonWarnings } from '../../domain/comparable.ts';
import { ConversationStatusSchema, type ConversationResult } from '../../domain/conversation.ts';
import { FailureLabelSchema } from '../../domain/taxonomy.ts';
import { TfidfEmbedder } from '../../embedding/tfidf.ts';
import { judgeAgreementView } from '../../judge/agreement.ts';
import { storedRunChanges } from '../../report/changes-section.ts';
import { summarizeRun } from '../../report/summary.ts';
import { summaryJson, writeComparisonReport } from '../../report/write.ts';
import type { KindRoute, KindRunView, ViewContext } from '../../run/kind-view.ts';
import type { ResultStore } from '../../store/store.ts';
import { CombinedOutcomeSchema, type RunRecord } from '../../store/types.ts';
import { computeAgreement } from './agreement.ts';
import { comparisonLines } from './compare-text.ts';
import { RatingFormSchema, decodeRatings, encodeRating } from './ratings.ts';

/** A page of a run's conversations (GET /api/runs/<id>/conversations). */
export const PageQuerySchema = z
  .object({
    offset: z.coerce.number().int().min(0).default(0),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    status: ConversationStatusSchema.optional(),
    outcome: CombinedOutcomeSchema.optional(),
    label: FailureLabelSchema.optional(),
    key: z.string().max(200).optional(),
  })
  .strict();

/**
 * The bench app's view of a run of conversations (./view.ts) as one app runs it: the run report page with its summary,
 * the conversations page by page with their artifacts, the raters' ratings and their agreement with the judge, and two
 * runs compared (pinning a conversation as a suite is the app's, src/server/pinned-suites.ts).
 */
export function conversationRunView({ store, workspace }: ViewContext): KindRunView {
  const summaries = new SummaryCache(store);
  const routes: KindRoute[] = [
    {
      method: 'GET',
      path: /^summary$/,
      handle: async ({ run }) => {
        const { perConversation: _omitted, diversity, ...summary } = await summaries.get(run);
        // the renderings of the failing conversations stay in summary.json; the page needs the figures
        return { json: { summary: { ...summary, ...(diversity ? { diversity: { ...diversity, conversations: [] } } : {}) } } };
      },
    },
    {
      method: 'GET',
      path: /^conversations$/,
      handle: async ({ run, query }) => {
        const q = parseRequest(PageQuerySchema, Object.fromEntries(query), 'conversation page query');
        const page = store.pageConversations(run.id, { offset: q.offset, limit: q.limit, filter: { status: q.status, outcome: q.outcome, label: q.label, keyContains: q.key } });
        return { json: { ...page, offset: q.offset, limit: q.limit } };
      },
    },
    {
      method: 'GET',
      path: /^conversations\/(?<key>[^/]+)$/,
      handle: async ({ run, params }) => {
        const result = requireConversation(store, run.id, params.key);
        const artifacts = store.artifacts(run.id, params.key).map((a) => ({ name: a.name, mime: a.mime, size: a.bytes?.length ?? null }));
        const ratings = decodeRatings(store.annotations(run.id).filter((a) => a.key === params.key));
        return { json: { result, artifacts, ratings } };
      },
    },
    {
      method: 'GET',
      path: /^conversations\/(?<key>[^/]+)\/artifacts\/(?<name>[^/]+)$/,
      handle: async ({ run, params }) => {
        requireConversation(store, run.id, params.key);
        const artifact = store.artifacts(run.id, params.key).find((a) => a.name === params.name);
        if (!artifact) throw new ApiError(404, 'artifact_not_found', `conversation "${params.key}" has no artifact "${params.name}"`);
        const bytes = artifact.bytes ?? (await readFile(isAbsolute(artifact.path ?? '') ? artifact.path! : resolve(workspace, artifact.path ?? '')));
        return { bytes, mime: artifact.mime };
      },
    },
    { method: 'POST', path: /^conversations\/(?<key>[^/]+)\/ratings$/, handle: async ({ run, params, body }) => ({ json: { rating: rate(store, run, params.key, await body()) }, status: 201 }) },
    { method: 'GET', path: /^agreement$/, handle: async ({ run }) => ({ json: agreementOf(store, run) }) },
    { method: 'GET', path: /^judge-agreement$/, handle: async ({ run }) => ({ json: judgeAgreementView(store.conversations(run.id)) }) },
  ];
  return {
    routes,
    // a run's summary.json is cached while the app runs (summarising reads every conversation)
    summaryJson: async (run) => summaryJson(await summaries.get(run)),
    async compare(a, b, options = {}) {
      const [sa, sb] = await Promise.all([a, b].map((run) => summaries.get(run)));
      // failure diversity of the union with the embedder `icabench compare` chose, else the lexical one (labelled in the result)
      const comparison: RunComparison = await compareRunsWithDiversity(sa, sb, options.embedder ?? new TfidfEmbedder(), options.diversity);
      // conversation by conversation: fixed, regressed, per-turn reply diffs
      Object.assign(comparison, storedRunChanges(store, a.id, b.id));
      const warnings = comparisonWarnings(a.config, b.config, comparison.unpaired);
      return { served: { comparison, warnings }, json: comparison, lines: () => comparisonLines(comparison), write: (dir) => Object.values(writeComparisonReport(dir, comparison)) };
    },
    invalidate: (runId) => summaries.invalidate(runId),
  };
}

/** A run's stored conversation, or a 404 naming the run and the key. */
export function requireConversation(store: ResultStore, runId: string, key: string): ConversationResult {
  const result = store.getConversation(runId, key);
  if (!result) throw new ApiError(404, 'conversation_not_found', `run ${runId} has no stored conversation "${key}"`);
  return result;
}

/** Stores a rater's rating of one conversation (every field checked first, so each stored row is valid); returns it as read back. */
function rate(store: ResultStore, run: RunRecord, key: string, body: unknown) {
  const form = parseRequest(RatingFormSchema, body, 'rating');
  const result = requireConversation(store, run.id, key);
  const known = new Set(result.targets.map((t) => t.id));
  const unknown = Object.keys(form.targets).filter((id) => !known.has(id));
  if (unknown.length) throw new ApiError(400, 'invalid_request', `rating: targets.${unknown[0]}: not a target of this conversation`, unknown.map((id) => ({ path: `targets.${id}`, message: 'not a target of this conversation' })));
  const badTurn = form.turnLabels.find((l) => l.turn >= result.turns.length);
  if (badTurn) throw new ApiError(400, 'invalid_request', `rating: turnLabels: turn ${badTurn.turn} does not exist (the conversation has ${result.turns.length} turns)`, [{ path: 'turnLabels', message: `turn ${badTurn.turn} does not exist` }]);
  const previous = decodeRatings(store.annotations(run.id).filter((a) => a.key === key && a.rater === form.rater))[0] ?? null;
  for (const row of encodeRating(key, form, previous)) store.saveAnnotation(run.id, row);
  return decodeRatings(store.annotations(run.id).filter((a) => a.key === key && a.rater === form.rater))[0];
}

/** The raters' agreement with each other and with the judge over the rated conversations of a run. */
function agreementOf(store: ResultStore, run: RunRecord) {
  const ratings = decodeRatings(store.annotations(run.id));
  const judged = new Map<string, ConversationResult>();
  for (const key of new Set(ratings.map((r) => r.key))) {
    const result = store.getConversation(run.id, key);
    if (result) judged.set(key, result);
  }
  return { agreement: computeAgreement(ratings, judged), ratings };
}

/** conversations read between two yields to the event loop while summarising a run */
const SUMMARY_SLICE = 50;

/**
 * The summary of a run (summarizeRun) reads every conversation (seconds for 10,000), so it is cached
 * until the run changes (conversations, status or run facts), computed once however many pages ask,
 * and read in slices that yield to the event loop: pages and the live feed stay responsive meanwhile.
 */
class SummaryCache {
  private readonly cache = new Map<string, { stamp: string; summary: Promise<RunSummary> }>();
  constructor(private readonly store: ResultStore) {}

  get(run: RunRecord): Promise<RunSummary> {
    const stamp = this.store.runStamp(run);
    const hit = this.cache.get(run.id);
    if (hit && hit.stamp === stamp) return hit.summary;
    const summary = summarizeRun(this.store, run.id, { yieldEvery: SUMMARY_SLICE });
    this.cache.set(run.id, { stamp, summary });
    summary.catch(() => this.cache.delete(run.id));
    return summary;
  }

  invalidate(runId: string): void {
    this.cache.delete(runId);
  }
}
