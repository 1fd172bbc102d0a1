import { parseOrThrow } from '../../domain/validation.ts';
import { TestItemSchema, type TestItem } from '../../manual/testset.ts';
import { z } from 'zod';
import { RecordedFactSchema } from '../../run/run-facts.ts';
import { jsonCodec, llmPathFields, type CampaignKindDefinition, type PathField } from '../../run/kind.ts';
import { headUnitPathFields, modelRefPathFields } from '../../run/path-fields.ts';
import { forgetUnreachedItems, type UnitReachSample } from '../../run/unit-reach.ts';
import type { FinishedQuestion } from './campaign.ts';
import { loadManualQaConfig, ManualQaConfigSchema, type LoadedManualQa, type ManualQaConfig } from './config.ts';
import { MANUAL_QA_FACTS, MANUAL_QA_KIND, ManualQaResultSchema, OmissionSearchResultSchema, manualItemOutcome, type ManualQaResult } from './item.ts';
import type { OmissionSearchResult } from '../../manual/omission.ts';
import { manualQaView } from './view.ts';

/** A loaded manual-QA config as a fleet worker receives it: paths as the coordinator resolved them (the worker reads the same manual files). */
const WireManualQaSchema = z.strictObject({ config: ManualQaConfigSchema, path: z.string().min(1), files: z.array(z.string().min(1)) });

/** A question the unit answered reached it; one whose session failed did not. */
function questionReach(result: ManualQaResult): UnitReachSample {
  return { reached: result.status !== 'sut_error' || result.answer !== null, cause: result.error };
}

/**
 * The manual-QA kind (docs/manual-qa.md): the questions of an owner's-manual test set, each asked as an ordinary
 * user turn of its own session, every judge tier judging the answer (the GEAR metrics of src/manual); stored
 * as item results (key: the question's id); after them, the warning-omission search.
 */
export const manualQaKind: CampaignKindDefinition<LoadedManualQa, TestItem, FinishedQuestion, ManualQaConfig, TestItem[], OmissionSearchResult> = {
  name: MANUAL_QA_KIND,
  nouns: { item: 'question', items: 'questions' },
  configSchema: ManualQaConfigSchema,
  load: loadManualQaConfig,
  modelRefs: (config) => [...config.judges.filter((ref) => ref !== 'oracle'), ...(config.generate ? [config.generate.model] : [])],
  pathFields: (config) => [
    ...config.manual.map((path, i): PathField<ManualQaConfig> => ({ field: `manual.${i}`, path, kind: 'read', rewrite: (c, p) => (c.manual[i] = p) })),
    ...(config.testSet ? [{ field: 'testSet', path: config.testSet, kind: 'read', rewrite: (c, p) => (c.testSet = p) } satisfies PathField<ManualQaConfig>] : []),
    ...(config.embeddingModel ? [{ field: 'embeddingModel', path: config.embeddingModel, kind: 'read', rewrite: (c, p) => (c.embeddingModel = p) } satisfies PathField<ManualQaConfig>] : []),
    ...config.judges.flatMap((ref, i) => modelRefPathFields<ManualQaConfig>(`judges.${i}`, ref, (c, r) => (c.judges[i] = r))),
    ...(config.generate ? modelRefPathFields<ManualQaConfig>('generate.model', config.generate.model, (c, r) => (c.generate!.model = r)) : []),
    ...headUnitPathFields(config),
    ...llmPathFields(config),
  ],
  async plan(loaded, log) {
    const { plannedQuestions } = await import('./campaign.ts');
    return (await plannedQuestions(loaded, log)).map((item) => ({ key: item.id, item }));
  },
  open: async (loaded, options) => (await import('./campaign.ts')).openManualQaRig(loaded, options),
  storage: {
    create: (store, loaded, plan, meta) => store.createItemRun({ name: loaded.config.name, kind: MANUAL_QA_KIND, config: loaded.config, plan, meta }),
    remaining: (store, run) => store.remainingItems(run.id).map((row) => ({ key: row.key, item: parseOrThrow(TestItemSchema, row.item, `${store.path}: run ${run.id} item "${row.key}"`) })),
    save: (store, runId, key, { result, facts }) => store.saveItemResult(runId, key, manualItemOutcome(result), result, facts),
    forgetUnreached: (store, runId) => forgetUnreachedItems(store, runId, (result, where) => questionReach(parseOrThrow(ManualQaResultSchema, result, where))),
  },
  unitReach: ({ result }) => questionReach(result),
  startedEvent: (runId, { key, item }) => ({ type: 'item_started', runId, key, label: item.question }),
  finishedEvent: (runId, key, { result }) => ({ type: 'item_finished', runId, key, outcome: manualItemOutcome(result), word: manualItemOutcome(result) }),
  wire: {
    loaded: jsonCodec(WireManualQaSchema),
    item: jsonCodec(TestItemSchema),
    finished: jsonCodec(z.strictObject({ result: ManualQaResultSchema, facts: z.array(RecordedFactSchema) })),
    needs: ({ config }) => ({ transport: config.headUnit.type, capabilities: ['text'] }),
  },
  // the warning-omission search: seeded by the stored questions (as planned), asked on the rig, its result one run fact
  afterItems: {
    input: ({ config }, store, runId) =>
      config.omissionSearch && store.runFacts(runId, MANUAL_QA_FACTS.omission).length === 0
        ? store.itemResults(runId).map((row) => parseOrThrow(TestItemSchema, row.item, `${store.path}: run ${runId} item "${row.key}"`))
        : null,
    save: (store, runId, result) => store.addRunFact(runId, MANUAL_QA_FACTS.omission, result),
    wire: { input: jsonCodec(z.array(TestItemSchema)), output: jsonCodec(OmissionSearchResultSchema) },
  },
  view: manualQaView,
  outputs: {
    async write(store, runId, outDir) {
      const [{ writeManualQaOutputs }, { firstScreenLine }] = await Promise.all([import('./outputs.ts'), import('../../report/first-screen.ts')]);
      const { summary, firstScreen } = writeManualQaOutputs(store, runId, outDir);
      const status = store.getRun(runId)?.status;
      const first = summary.judgeMetrics[0];
      const mean = (m: keyof typeof first.metrics) => (first.metrics[m].mean === null ? 'n/a' : first.metrics[m].mean!.toFixed(3));
      return [
        `run ${runId} ${status}: ${summary.questions}/${summary.planned} questions, ${summary.outcomes.fail} failed, ${summary.outcomes.error} head unit errors; ` +
          `${first.tier}: completeness ${mean('completeness_hard')}, risk awareness ${mean('risk_awareness')}, correctness ${mean('correctness')}` +
          (summary.omissionSearch ? `; omission search ${summary.omissionSearch.omissions}/${summary.omissionSearch.asked}` : ''),
        // last: the report's first screen in one line
        firstScreenLine(firstScreen),
      ];
    },
    async summaryJson(store, run) {
      const [{ manualQaSummaryJson }, { computeManualQaSummary, loadManualQaRun }] = await Promise.all([import('./outputs.ts'), import('./results.ts')]);
      return manualQaSummaryJson(computeManualQaSummary(loadManualQaRun(store, run.id)));
    },
  },
};
