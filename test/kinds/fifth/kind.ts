import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError, parseYaml } from '../../../src/config/yaml.ts';
import { FILE_LIMITS, readBoundedText } from '../../../src/domain/input-files.ts';
import { ApiError } from '../../../src/domain/api-error.ts';
import { MethodSchema } from '../../../src/domain/method.ts';
import { summaryHeader } from '../../../src/report/summary-header.ts';
import { jsonCodec, type CampaignKindDefinition, type KindRig, type LoadedKindConfig } from '../../../src/run/kind.ts';
import type { KindView } from '../../../src/run/kind-view.ts';
import { RecordedFactSchema } from '../../../src/run/run-facts.ts';
import type { ResultStore } from '../../../src/store/store.ts';
import type { RunRecord } from '../../../src/store/types.ts';

/**
 * A fifth campaign kind that lives outside src/ (docs/architecture.md, "Adding a campaign kind"): this folder and its
 * registry entry (./register.ts) are all there is of it. Its items are words; running one counts its letters (an even
 * count passes). It has no head unit and no models, its own stored kind, summary.json, report, API routes, app page
 * (one the app does not have: the generic run page), method line and comparison.
 */
export const FIFTH_KIND = 'fifth';
export const FIFTH_PAPER = 'Fifth et al., counting letters: a fixture method for one more campaign kind';

const FifthConfigSchema = z.strictObject({
  kind: z.literal(FIFTH_KIND),
  name: z.string().min(1),
  description: z.string().optional(),
  method: MethodSchema.default('lab'),
  words: z.array(z.string().min(1)).min(1),
  concurrency: z.number().int().min(1).default(1),
  budgetMinutes: z.number().positive().optional(),
});
type FifthConfig = z.infer<typeof FifthConfigSchema>;
type LoadedFifth = LoadedKindConfig<FifthConfig>;

const WordItemSchema = z.strictObject({ word: z.string(), index: z.number().int() });
type WordItem = z.infer<typeof WordItemSchema>;
const WordResultSchema = z.strictObject({ word: z.string(), letters: z.number().int(), outcome: z.enum(['pass', 'fail']) });
type WordResult = z.infer<typeof WordResultSchema>;
const FinishedWordSchema = z.strictObject({ result: WordResultSchema, facts: z.array(RecordedFactSchema).optional() });
type FinishedWord = z.infer<typeof FinishedWordSchema>;

/** The stored results of a fifth-kind run, in plan order. */
function results(store: ResultStore, runId: string): WordResult[] {
  return store.itemResults(runId, { done: true }).map((row) => WordResultSchema.parse(row.result));
}

/** summary.json of a fifth-kind run: the header every kind shares (with this kind's method line) and its counts. */
function summaryOf(store: ResultStore, run: RunRecord) {
  const words = results(store, run.id);
  return { ...summaryHeader(store, run, FIFTH_PAPER), words: words.length, passed: words.filter((w) => w.outcome === 'pass').length, letters: words.reduce((n, w) => n + w.letters, 0) };
}
const summaryText = (store: ResultStore, run: RunRecord) => `${JSON.stringify(summaryOf(store, run), null, 2)}\n`;

const fifthView: KindView = {
  paper: FIFTH_PAPER,
  page: 'fifth-words',
  links: [{ label: 'letters', path: 'letters' }],
  compared: true,
  open: async ({ store }) => ({
    routes: [
      { method: 'GET', path: /^letters$/, handle: async ({ run }) => ({ json: { words: results(store, run.id) } }) },
      {
        method: 'GET',
        path: /^letters\/(?<word>[^/]+)$/,
        handle: async ({ run, params }) => {
          const found = results(store, run.id).find((w) => w.word === params.word);
          if (!found) throw new ApiError(404, 'item_not_found', `run ${run.id} has no word "${params.word}"`);
          return { json: found };
        },
      },
    ],
    compare: async (a, b) => {
      const letters = { a: summaryOf(store, a).letters, b: summaryOf(store, b).letters };
      return { served: { letters, warnings: [] }, json: { letters }, lines: () => [`letters: A ${letters.a}, B ${letters.b}`], write: () => [] };
    },
  }),
};

function openFifthRig(loaded: LoadedFifth): KindRig<WordItem, FinishedWord> {
  return {
    concurrency: loaded.config.concurrency,
    meta: { counter: 'letters' },
    envelope: { config: loaded.config, modelHosts: [], prices: {}, tiers: null, tracker: null, headUnit: null },
    async run(_runId, { item }) {
      const letters = [...item.word].length;
      return { result: { word: item.word, letters, outcome: letters % 2 === 0 ? 'pass' : 'fail' } };
    },
    close: async () => undefined,
  };
}

export const fifthKind: CampaignKindDefinition<LoadedFifth, WordItem, FinishedWord> = {
  name: FIFTH_KIND,
  nouns: { item: 'word', items: 'words' },
  configSchema: FifthConfigSchema,
  load(path) {
    const config = parseYaml(FifthConfigSchema, readBoundedText(path, 'campaign config', FILE_LIMITS.config), path);
    if (new Set(config.words).size !== config.words.length) throw new ConfigError(`${path}: words: each word once`);
    return { path, config };
  },
  modelRefs: () => [],
  pathFields: () => [],
  plan: async ({ config }) => config.words.map((word, index) => ({ key: word, item: { word, index } })),
  open: async (loaded) => openFifthRig(loaded),
  storage: {
    create: (store, loaded, plan, meta) => store.createItemRun({ name: loaded.config.name, kind: FIFTH_KIND, config: loaded.config, plan, meta }),
    remaining: (store, run) => store.remainingItems(run.id).map((row) => ({ key: row.key, item: WordItemSchema.parse(row.item) })),
    save: (store, runId, key, { result, facts }) => store.saveItemResult(runId, key, result.outcome, result, facts),
  },
  startedEvent: (runId, { key, item }) => ({ type: 'item_started', runId, key, label: `count the letters of "${item.word}"` }),
  finishedEvent: (runId, key, { result }) => ({ type: 'item_finished', runId, key, outcome: result.outcome, word: `${result.letters} letters` }),
  view: fifthView,
  outputs: {
    async write(store, runId, outDir) {
      const run = store.getRun(runId)!;
      mkdirSync(outDir, { recursive: true });
      writeFileSync(join(outDir, 'summary.json'), summaryText(store, run));
      const rows = results(store, runId).map((w) => `<tr><td>${w.word}</td><td>${w.letters}</td><td>${w.outcome}</td></tr>`).join('');
      writeFileSync(join(outDir, 'report.html'), `<!doctype html><title>${run.name}</title><h1>Letters</h1><p>${FIFTH_PAPER}</p><table>${rows}</table>\n`);
      const summary = summaryOf(store, run);
      return [`run ${runId} ${run.status}: ${summary.words} words, ${summary.passed} with an even count of letters`];
    },
    summaryJson: async (store, run) => summaryText(store, run),
  },
  wire: {
    loaded: jsonCodec(z.strictObject({ path: z.string(), config: FifthConfigSchema })),
    item: jsonCodec(WordItemSchema),
    finished: jsonCodec(FinishedWordSchema),
    needs: () => ({ transport: 'reference', capabilities: ['text'] }),
  },
};
