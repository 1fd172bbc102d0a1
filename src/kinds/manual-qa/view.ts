import { ApiError, parseRequest } from '../../domain/api-error.ts';
import { PAPERS } from '../../domain/method.ts';
import type { KindRunView, KindView } from '../../run/kind-view.ts';
import type { ResultStore } from '../../store/store.ts';
import type { RunRecord } from '../../store/types.ts';
import { MANUAL_METRICS, type ManualMetric } from '../../manual/model.ts';
import { DRILL_DOWN_LIMIT } from '../../report/first-screen.ts';
import { manualQaFirstScreen } from './first-screen.ts';
import { computeManualQaSummary, FactAnnotationFormSchema, latestAnnotations, loadManualQaRun, type FactAnnotationForm } from './results.ts';

/**
 * The bench app's view of manual-QA runs (read: summary, question list, one question's fact-level evidence; write: a
 * rater's fact annotations), under /api/runs/<id>/manual. Small on purpose: the numbers come from the same code as
 * summary.json (./results.ts). Manual-QA runs are not compared: their summary and report hold the figures.
 */
export const manualQaView: KindView = {
  paper: PAPERS.gear,
  page: 'manual',
  links: [{ label: 'facts & annotation', path: 'manual' }],
  compared: false,
  open: async ({ store }) => manualRunView(store),
};

export function manualRunView(store: ResultStore): KindRunView {
  const api = new ManualRunApi(store);
  return {
    routes: [
      { method: 'GET', path: /^manual$/, handle: async ({ run }) => ({ json: api.overview(run) }) },
      { method: 'GET', path: /^manual\/questions\/(?<key>[^/]+)$/, handle: async ({ run, params }) => ({ json: api.question(run, params.key) }) },
      { method: 'POST', path: /^manual\/questions\/(?<key>[^/]+)\/annotations$/, handle: async ({ run, params, body }) => ({ json: { annotation: api.annotate(run, params.key, await body()) }, status: 201 }) },
    ],
  };
}

/** The manual-QA routes' answers, from the store. */
export class ManualRunApi {
  constructor(private readonly store: ResultStore) {}

  /** The summary (metrics per kind/difficulty/chapter, warning omissions, alignment), one row per question, and report.html's first screen. */
  overview(run: RunRecord): unknown {
    const data = loadManualQaRun(this.store, run.id);
    const summary = computeManualQaSummary(data);
    const questions = data.rows.map(({ item, result, outcome }) => {
      const first = result?.evaluations[0];
      const metrics = Object.fromEntries(MANUAL_METRICS.map((m) => [m, first?.metrics[m]?.status === 'judged' ? (first.metrics[m] as { value: number }).value : null])) as Record<ManualMetric, number | null>;
      return { key: item.id, kind: item.kind, difficulty: item.difficulty, chapter: item.chapter, question: item.question, outcome, metrics, annotated: data.annotations.some((a) => a.itemId === item.id) };
    });
    return { summary, questions, firstScreen: manualQaFirstScreen(this.store, run, summary, data.rows, DRILL_DOWN_LIMIT) };
  }

  /** One question: the item with its reference facts, the answer and every tier's evaluation, and the raters' latest annotations. */
  question(run: RunRecord, key: string): unknown {
    const data = loadManualQaRun(this.store, run.id);
    const row = data.rows.find((r) => r.item.id === key);
    if (!row) throw new ApiError(404, 'item_not_found', `run ${run.id} has no question "${key}"`);
    return { item: row.item, result: row.result, outcome: row.outcome, annotations: latestAnnotations(data.annotations.filter((a) => a.itemId === key)) };
  }

  /**
   * Stores a rater's marks on one answered question: every fact the first tier's evaluation shows
   * (reference facts and answer facts) marked exactly once, and no other.
   */
  annotate(run: RunRecord, key: string, body: unknown): FactAnnotationForm {
    const form = parseRequest(FactAnnotationFormSchema, body, 'annotation');
    const row = loadManualQaRun(this.store, run.id).rows.find((r) => r.item.id === key);
    if (!row) throw new ApiError(404, 'item_not_found', `run ${run.id} has no question "${key}"`);
    const evaluation = row.result?.evaluations[0];
    if (!evaluation) throw new ApiError(409, 'not_answered', `question "${key}" has no evaluated answer to annotate yet`);
    const check = (list: readonly { factId: string }[], known: readonly { id: string }[], field: string) => {
      const ids = new Set(known.map((f) => f.id));
      const seen = new Set<string>();
      list.forEach((f, i) => {
        if (!ids.has(f.factId)) throw new ApiError(400, 'invalid_request', `annotation: ${field}.${i}.factId: "${f.factId}" is not a fact of this evaluation`, [{ path: `${field}.${i}.factId`, message: 'not a fact of this evaluation' }]);
        if (seen.has(f.factId)) throw new ApiError(400, 'invalid_request', `annotation: ${field}.${i}.factId: "${f.factId}" is marked twice`, [{ path: `${field}.${i}.factId`, message: 'marked twice' }]);
        seen.add(f.factId);
      });
      const missing = known.find((f) => !seen.has(f.id));
      if (missing) throw new ApiError(400, 'invalid_request', `annotation: ${field}: fact "${missing.id}" is not marked (mark every fact of the evaluation)`, [{ path: field, message: `fact "${missing.id}" is not marked` }]);
    };
    check(form.referenceFacts, evaluation.referenceFacts, 'referenceFacts');
    check(form.answerFacts, evaluation.answerFacts, 'answerFacts');
    const { rater, ...marks } = form;
    this.store.saveItemAnnotation(run.id, key, rater, marks);
    return form;
  }
}
