import { MANUAL_QA_KIND } from '../kinds/manual-qa/item.ts';
import { MANUAL_METRICS, type ManualMetric } from '../manual/model.ts';
import { computeManualQaSummary, FactAnnotationFormSchema, latestAnnotations, loadManualQaRun, type FactAnnotationForm } from '../kinds/manual-qa/results.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';
import { ApiError, parseRequest } from './http-util.ts';

/**
 * The bench app's view of manual-QA runs (read: summary, question list, one question's fact-level
 * evidence; write: a rater's fact annotations). Small on purpose: the numbers come from the same
 * code as summary.json (src/kinds/manual-qa/results.ts).
 */
export class ManualRunApi {
  constructor(private readonly store: ResultStore) {}

  private requireManual(run: RunRecord): void {
    if (run.kind !== MANUAL_QA_KIND) throw new ApiError(400, 'not_manual_run', `run ${run.id} is a ${run.kind} run, not a ${MANUAL_QA_KIND} run`);
  }

  /** The summary (metrics per kind/difficulty/chapter, warning omissions, alignment) and one row per question. */
  overview(run: RunRecord): unknown {
    this.requireManual(run);
    const data = loadManualQaRun(this.store, run.id);
    const summary = computeManualQaSummary(data);
    const questions = data.rows.map(({ item, result, outcome }) => {
      const first = result?.evaluations[0];
      const metrics = Object.fromEntries(MANUAL_METRICS.map((m) => [m, first?.metrics[m]?.status === 'judged' ? (first.metrics[m] as { value: number }).value : null])) as Record<ManualMetric, number | null>;
      return { key: item.id, kind: item.kind, difficulty: item.difficulty, chapter: item.chapter, question: item.question, outcome, metrics, annotated: data.annotations.some((a) => a.itemId === item.id) };
    });
    return { summary, questions };
  }

  /** One question: the item with its reference facts, the answer and every tier's evaluation, and the raters' latest annotations. */
  question(run: RunRecord, key: string): unknown {
    this.requireManual(run);
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
    this.requireManual(run);
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
