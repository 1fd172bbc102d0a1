import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { z } from 'zod';
import { dirname, join, resolve } from 'node:path';
import { once } from 'node:events';
import type { Command } from 'commander';
import { comparePairRefusal, comparesWith, comparisonWarningsText } from '../../domain/comparable.ts';
import { FILE_LIMITS, readBoundedText } from '../../domain/input-files.ts';
import { compareRunsWithDiversity } from '../../analysis/compare.ts';
import { DiversityConfigSchema } from '../../analysis/diversity.ts';
import { resolveEmbedder } from '../../embedding/index.ts';
import { methodEmbeddingModel } from '../../llm/manifest.ts';
import { exportJsonl } from '../../store/export.ts';
import type { ResultStore } from '../../store/store.ts';
import type { RunRecord } from '../../store/types.ts';
import { writeComparisonReport } from '../../report/write.ts';
import { campaignKind, comparedKindGroups } from '../../kinds/registry.ts';
import type { RunsCompared } from '../../run/kind-view.ts';
import { loadSummary, openStore } from '../outputs.ts';
import { holdsConversations, runKindLabel } from '../../domain/run-items.ts';
import { comparisonLines } from '../../kinds/dialogue/compare-text.ts';

export function registerResultCommands(program: Command): void {
  registerRunsCommand(program);
  registerCompareCommand(program);
  registerReportCommand(program);
  registerExportCommand(program);
}

function registerRunsCommand(program: Command): void {
  program
    .command('runs')
    .description('list the runs in the workspace')
    .option('--workspace <dir>', 'workspace holding icabench.db', 'workspace')
    .option('--json', 'print JSON')
    .action((options: { workspace: string; json?: boolean }) => {
      const store = openStore(options.workspace)!;
      try {
        const runs = store.listRuns();
        if (options.json) console.log(JSON.stringify(runs, null, 2));
        else if (runs.length === 0) console.log(`no runs in ${options.workspace} yet (icabench run CONFIG stores one)`);
        else {
          const rows = runs.map((r) => [r.id, r.status, runKindLabel(r), `${r.stored}/${r.planned}`, r.name]);
          console.log(alignedTable(['RUN', 'STATUS', 'KIND', 'STORED', 'NAME'], rows, [3]));
        }
      } finally {
        store.close();
      }
    });
}

function registerCompareCommand(program: Command): void {
  program
    .command('compare')
    .description('compare two runs (guided vs baseline, model vs model): rates, mean scores, unique-failure ratio, Mann–Whitney U, Â12')
    .argument('<a>', 'run id in the workspace, or a run output directory with summary.json')
    .argument('<b>', 'run id in the workspace, or a run output directory with summary.json')
    .option('--workspace <dir>', 'workspace holding icabench.db', 'workspace')
    .option('--json', 'print the comparison as JSON')
    .option('--out <dir>', 'also write comparison.json and comparison.html here')
    .option('--embedding-model <path>', 'ONNX sentence-embedding model for the failure-diversity union (default: the labelled lexical TF-IDF fallback)')
    .option('--diversity-threshold <cos>', 'cosine similarity above which two failing conversations are duplicates', '0.8')
    .action(async (a: string, b: string, options: CompareCommandOptions) => {
      const store = openStore(options.workspace, false);
      try {
        // a run id, or a run directory whose summary.json names a run stored in this workspace
        const [storedA, storedB] = [a, b].map((ref) => storedRunOf(store, ref));
        const groups = await comparedKindGroups();
        // the one rule of what compares with what (the bench app greys out the same runs with the same reason)
        const refusal = comparePairRefusal(storedA?.kind ?? null, storedB?.kind ?? null, groups);
        if (refusal) throw new Error(`compare: ${refusal}`);
        if (storedA && storedB) return await compareStoredRuns(store!, storedA, storedB, options);
        const stored = storedA ?? storedB;
        const missing = [a, b].find((ref, i) => ![storedA, storedB][i] && !existsSync(summaryPathOf(ref)));
        if (stored && missing) {
          const family = groups.find((kinds) => kinds.includes(stored.kind)) ?? [stored.kind];
          throw new Error(`compare: "${missing}" is neither a run id in this workspace nor a run directory with summary.json; ${comparesWith(stored.kind, family)} stored in the same workspace`);
        }
        await compareSummaries(store, a, b, options);
      } finally {
        store?.close();
      }
    });
}

interface CompareCommandOptions {
  workspace: string;
  json?: boolean;
  out?: string;
  embeddingModel?: string;
  diversityThreshold: string;
}

const summaryPathOf = (ref: string) => (ref.endsWith('.json') ? ref : join(ref, 'summary.json'));

/** The stored run a compare argument names: a run id, or a run directory / summary.json whose run is in the store; null when neither. */
function storedRunOf(store: ResultStore | null, ref: string): RunRecord | null {
  if (!store) return null;
  const byId = store.getRun(ref);
  if (byId) return byId;
  const file = summaryPathOf(ref);
  if (!existsSync(file)) return null;
  try {
    const named = z.object({ run: z.object({ id: z.string() }) }).safeParse(JSON.parse(readBoundedText(file, 'run summary', FILE_LIMITS.runSummary)));
    return named.success ? store.getRun(named.data.run.id) : null;
  } catch {
    return null; // not a summary: compareSummaries reports it with the reason
  }
}

/** The failure-diversity embedder and settings the flags choose (the method's model when one is named, else the lexical fallback). */
async function diversityOptions(options: CompareCommandOptions) {
  const diversity = DiversityConfigSchema.parse({ threshold: Number(options.diversityThreshold), embeddingModel: options.embeddingModel });
  const embedder = await resolveEmbedder(diversity.embeddingModel, options.embeddingModel ? (line) => console.error(line) : undefined, methodEmbeddingModel());
  return { diversity, embedder };
}

/** Prints (or writes) a comparison: its warnings first (to stderr beside --json, so the JSON stays whole), then the kind's lines. */
function printComparison(compared: Pick<RunsCompared, 'json' | 'lines' | 'write'>, warnings: readonly string[], options: CompareCommandOptions): void {
  if (options.out) compared.write(resolve(options.out));
  const warning = comparisonWarningsText(warnings);
  if (options.json) {
    if (warning) console.error(warning);
    console.log(JSON.stringify(compared.json, null, 2));
    return;
  }
  if (warning) console.log(warning);
  for (const line of compared.lines()) console.log(line);
}

/** Two stored runs, compared by the view of their kind (src/run/kind-view.ts), as the app's compare page compares them. */
async function compareStoredRuns(store: ResultStore, a: RunRecord, b: RunRecord, options: CompareCommandOptions): Promise<void> {
  const kind = await campaignKind(a.kind);
  const view = await kind.view.open({ store, workspace: options.workspace });
  if (!view.compare) throw new Error(`compare: the ${kind.name} view has no comparison`);
  const { diversity, embedder } = await diversityOptions(options);
  try {
    const compared = await view.compare(a, b, { embedder, diversity });
    printComparison(compared, compared.served.warnings, options);
  } finally {
    await embedder.close();
  }
}

/** Two runs of conversations by their summary.json (a run directory, or a run id in the workspace): no stored configs, so no warnings. */
async function compareSummaries(store: ResultStore | null, a: string, b: string, options: CompareCommandOptions): Promise<void> {
  const { diversity, embedder } = await diversityOptions(options);
  try {
    const comparison = await compareRunsWithDiversity(await loadSummary(store, a), await loadSummary(store, b), embedder, diversity);
    printComparison({ json: comparison, lines: () => comparisonLines(comparison), write: (dir) => Object.values(writeComparisonReport(dir, comparison)) }, [], options);
  } finally {
    await embedder.close();
  }
}

function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description('(re)write summary.json, report.html, junit.xml and conversations.csv for a stored run')
    .argument('<runId>', 'run id (icabench runs lists them)')
    .option('--workspace <dir>', 'workspace holding icabench.db', 'workspace')
    .option('--out <dir>', 'output directory (default: runs/<run id>)')
    .action(async (runId: string, options: { workspace: string; out?: string }) => {
      const store = openStore(options.workspace)!;
      try {
        const out = resolve(options.out ?? join('runs', runId));
        const run = store.getRun(runId);
        if (!run) throw new Error(`no run ${runId} in ${options.workspace} (icabench runs lists them)`);
        // every kind writes its outputs from the store (src/run/kind.ts, outputs)
        await (await campaignKind(run.kind)).outputs.write(store, runId, out);
        console.log(`report: ${join(out, 'report.html')}`);
      } finally {
        store.close();
      }
    });
}

function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description('stream a stored run as JSONL, one conversation (or item: manual-QA question, tool-agent task trial) per line')
    .argument('<runId>', 'run id (icabench runs lists them)')
    .option('--workspace <dir>', 'workspace holding icabench.db', 'workspace')
    .option('--out <file>', 'write to this file instead of standard output')
    .action(async (runId: string, options: { workspace: string; out?: string }) => {
      const store = openStore(options.workspace)!;
      try {
        if (options.out) {
          mkdirSync(dirname(resolve(options.out)), { recursive: true });
          const file = createWriteStream(options.out);
          const lines = await exportJsonl(store, runId, file);
          file.end();
          await once(file, 'finish');
          const run = store.getRun(runId);
          console.error(`${lines} ${run && holdsConversations(run) ? 'conversations' : 'items'} written to ${options.out}`);
        } else {
          await exportJsonl(store, runId, process.stdout);
        }
      } finally {
        store.close();
      }
    });
}

/** Rows under a header, each column as wide as its widest cell (`rightAligned`: the columns of numbers); the last column is not padded. */
export function alignedTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>, rightAligned: readonly number[] = []): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (c === cells.length - 1 ? cell : rightAligned.includes(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
      .join('  ');
  return [header, ...rows].map(line).join('\n');
}
