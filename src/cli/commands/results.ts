import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { z } from 'zod';
import { dirname, join, resolve } from 'node:path';
import { once } from 'node:events';
import type { Command } from 'commander';
import { compareToolRuns } from '../../kinds/tool-agents/compare.ts';
import { comparePairRefusal } from '../../domain/comparable.ts';
import { FILE_LIMITS, readBoundedText } from '../../domain/input-files.ts';
import { loadToolAgentsRun, TOOL_AGENTS_KIND } from '../../kinds/tool-agents/results.ts';
import type { ConversationChange, RunChanges } from '../../analysis/changes.ts';
import { compareRunsWithDiversity } from '../../analysis/compare.ts';
import { storedRunChanges } from '../../report/changes-section.ts';
import { DiversityConfigSchema } from '../../analysis/diversity.ts';
import { resolveEmbedder } from '../../embedding/index.ts';
import { methodEmbeddingModel } from '../../llm/manifest.ts';
import { writeAtomically } from '../../report/write.ts';
import { exportJsonl } from '../../store/export.ts';
import type { ResultStore } from '../../store/store.ts';
import { writeComparisonReport } from '../../report/write.ts';
import { campaignKind, comparedKindGroups } from '../../kinds/registry.ts';
import { loadSummary, openStore } from '../outputs.ts';
import { runKindLabel } from '../../domain/run-items.ts';
import { findingsText, gateText } from '../../kinds/dialogue/summary-text.ts';
import { holdsConversations } from '../../domain/run-items.ts';
import { turnNumber } from '../../domain/conversation.ts';

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
    .action(async (a: string, b: string, options: { workspace: string; json?: boolean; out?: string; embeddingModel?: string; diversityThreshold: string }) => {
      const store = openStore(options.workspace, false);
      // the one rule of what compares with what (the bench app greys out the same runs with the same reason)
      const [storedA, storedB] = [a, b].map((ref) => store?.getRun(ref) ?? null);
      const refusal = comparePairRefusal(storedA?.kind ?? null, storedB?.kind ?? null, await comparedKindGroups());
      if (refusal) {
        store?.close();
        throw new Error(`compare: ${refusal}`);
      }
      // tool-agents runs compare task by task from the store (no failure diversity: there are no conversations)
      const toolRuns = [a, b].map((ref) => toolAgentsRunId(store, ref));
      if (toolRuns.some((id) => id !== null)) {
        try {
          return compareToolAgentRuns(store, toolRuns[0] ?? a, toolRuns[1] ?? b, options);
        } finally {
          store?.close();
        }
      }
      const diversityConfig = DiversityConfigSchema.parse({ threshold: Number(options.diversityThreshold), embeddingModel: options.embeddingModel });
      const embedder = await resolveEmbedder(diversityConfig.embeddingModel, options.embeddingModel ? (line) => console.error(line) : undefined, methodEmbeddingModel());
      try {
        const comparison = await compareRunsWithDiversity(await loadSummary(store, a), await loadSummary(store, b), embedder, diversityConfig);
        // two stored runs (one suite or campaign on two builds): what got fixed and what regressed, conversation by conversation
        if (store?.getRun(a) && store.getRun(b)) Object.assign(comparison, storedRunChanges(store, a, b));
        if (options.out) await writeComparisonReport(resolve(options.out), comparison);
        if (options.json) {
          console.log(JSON.stringify(comparison, null, 2));
          return;
        }
        const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
        const num = (x: number | null, d = 3) => (x === null ? 'n/a' : x.toFixed(d));
        for (const [side, run] of [['A', comparison.a], ['B', comparison.b]] as const) {
          console.log(
            `${side} ${run.name}: ${run.conversations} conversations, fail rate ${pct(run.failRate)} (${gateText(run.failOn, run.failedByGate)}; by C alone ${pct(run.scoreOnlyFailRate)}), ${findingsText(run)}, ` +
              `mean C ${num(run.meanScore)}, unique failure types/conv ${num(run.uniqueFailureTypesPerConversation, 2)}, ≥ 3 failure types ${pct(run.threeOrMoreFailureTypes)}`,
          );
        }
        console.log(`unique failure types ratio A/B: ${num(comparison.uniqueFailureTypesRatio, 2)}`);
        for (const [what, t] of [['C scores', comparison.scores], ['unique failure types', comparison.uniqueFailureTypes]] as const) {
          console.log(`${what}: Mann–Whitney U = ${num(t.u, 1)}, p = ${t.p === null ? 'n/a' : t.p.toExponential(2)} (${t.method ?? 'n/a'}), Â12 = ${num(t.a12)} (${t.magnitude ?? 'n/a'})${t.significant ? `, significant at α = ${comparison.alpha}` : ''}`);
        }
        for (const [side, rel] of [['A', comparison.reliability?.a], ['B', comparison.reliability?.b]] as const) {
          if (rel) console.log(`${side} pass^k (unbiased) ${rel.byK.map((r) => `k=${r.k} ${pct(r.passHatK.unbiased)}`).join(', ')}; pass@k ${rel.byK.map((r) => `k=${r.k} ${pct(r.passAtK.unbiased)}`).join(', ')}`);
        }
        if (comparison.changes) printChanges(comparison.changes);
        if (comparison.unpaired) console.log(`fixed / regressed: not listed: ${comparison.unpaired}`);
        const cov = (c: { mean: number; std: number }) => `${pct(c.mean)} ± ${pct(c.std)}`;
        for (const [d, noun, clusters] of [
          [comparison.diversity, 'failing conversations', 'failure clusters'],
          [comparison.findingsDiversity, 'conversations with findings', 'clusters of conversations with findings'],
        ] as const) {
          if (d) {
            console.log(`unique ${noun}: A ${d.uniqueA}, B ${d.uniqueB}, ratio A/B ${num(d.uniqueRatio, 2)} (duplicates A ${pct(d.duplicateShareA)}, B ${pct(d.duplicateShareB)})`);
            console.log(`coverage of the union's ${clusters}: A ${cov(d.coverageA)}, B ${cov(d.coverageB)} (${d.embedder})`);
          } else {
            console.log(`diversity of ${noun}: not compared (a summary has no section for it; rewrite it with \`icabench report <run id>\`)`);
          }
        }
      } finally {
        store?.close();
        await embedder.close();
      }
    });
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

function printChanges(changes: RunChanges): void {
  console.log(`builds: A ${changes.buildA ?? '(none recorded)'}, B ${changes.buildB ?? '(none recorded)'}`);
  const line = (c: ConversationChange) => `  ${c.key}: ${c.outcomeA} → ${c.outcomeB}; turns ${c.turns.map((t) => `${turnNumber(t.index)} [${t.labelsA.join(', ') || '–'} → ${t.labelsB.join(', ') || '–'}]`).join(', ') || 'none differ'}`;
  console.log(`fixed (fail in A, pass in B): ${changes.fixed.length}`);
  changes.fixed.forEach((c) => console.log(line(c)));
  console.log(`regressed (pass in A, fail in B): ${changes.regressed.length}`);
  changes.regressed.forEach((c) => console.log(line(c)));
  if (changes.otherChanges.length) console.log(`other changes: ${changes.otherChanges.map((c) => `${c.key} ${c.outcomeA} → ${c.outcomeB}`).join(', ')}`);
  console.log(`unchanged: ${changes.unchanged.pass} passing, ${changes.unchanged.fail} failing, ${changes.unchanged.other} other${changes.onlyInA.length || changes.onlyInB.length ? `; only in A ${changes.onlyInA.length}, only in B ${changes.onlyInB.length}` : ''}`);
}

/** `icabench compare` of two stored tool-agents runs (e.g. two agents on the same tasks): pass^k per family and the tasks that moved. */
/**
 * The stored tool-agents run a compare argument names: a run id, or a run directory / summary.json of a tool-agents
 * run (its run id, read from the summary); null when it is neither (a dialogue run, or not found).
 */
function toolAgentsRunId(store: ResultStore | null, ref: string): string | null {
  if (store?.getRun(ref)?.kind === TOOL_AGENTS_KIND) return ref;
  const file = ref.endsWith('.json') ? ref : join(ref, 'summary.json');
  if (!existsSync(file)) return null;
  let json: unknown;
  try {
    json = JSON.parse(readBoundedText(file, 'run summary', FILE_LIMITS.runSummary));
  } catch {
    return null; // not ours: the dialogue path reports it with the reason
  }
  const parsed = z.object({ kind: z.literal(TOOL_AGENTS_KIND), run: z.object({ id: z.string() }) }).safeParse(json);
  return parsed.success ? parsed.data.run.id : null;
}

function compareToolAgentRuns(store: ResultStore | null, a: string, b: string, options: { json?: boolean; out?: string }): void {
  if (!store) throw new Error('compare: tool-agents runs are compared from the results store (its trials live there); pass the --workspace that holds them');
  const [ra, rb] = [a, b].map((ref) => {
    const run = store.getRun(ref);
    if (run?.kind !== TOOL_AGENTS_KIND) throw new Error(`compare: run ${ref} is ${run ? `a ${run.kind} run` : 'not in this workspace'}; a tool-agents run compares with another tool-agents run (by run id)`);
    return { run, results: loadToolAgentsRun(store, ref).results };
  });
  const comparison = compareToolRuns(ra.results, rb.results);
  if (options.out) {
    mkdirSync(resolve(options.out), { recursive: true });
    writeAtomically(join(resolve(options.out), 'comparison.json'), `${JSON.stringify({ a: { id: ra.run.id, name: ra.run.name }, b: { id: rb.run.id, name: rb.run.name }, ...comparison }, null, 2)}\n`);
  }
  if (options.json) {
    console.log(JSON.stringify(comparison, null, 2));
    return;
  }
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
  console.log(`A ${ra.run.name} (${ra.run.id}, ${ra.results[0]?.agent ?? 'no trials'}) vs B ${rb.run.name} (${rb.run.id}, ${rb.results[0]?.agent ?? 'no trials'})`);
  for (const f of comparison.families) console.log(`  ${f.family}: pass^${f.k} (unbiased) A ${pct(f.a)}, B ${pct(f.b)}, B − A ${f.delta === null ? 'n/a' : `${(f.delta * 100).toFixed(1)} pts`}`);
  console.log(`  tasks whose success rate changed: ${comparison.changed.length}`);
  for (const c of comparison.changed.slice(0, 20)) console.log(`    ${c.taskId}: ${pct(c.a)} → ${pct(c.b)}`);
  if (comparison.onlyIn.a.length || comparison.onlyIn.b.length) console.log(`  only in A: ${comparison.onlyIn.a.length} tasks, only in B: ${comparison.onlyIn.b.length} tasks`);
}
