/**
 * Benchmark of the owner's-manual path: ingest the 41 vendored BMW chapters (3 runs, best and
 * median), generate the deterministic test set, then run it as a deterministic manual-QA campaign
 * (runManualQa: every question a user turn over a loopback bridge to the reference head unit's
 * manual skill, evaluated by the deterministic tier, stored per question). Prints ingestion time,
 * questions/s and peak RSS.
 * Usage: npm run bench:manual -- [questions=all]
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import { ManualCorpus } from '../src/manual/corpus.ts';
import { loadManualQaConfig } from '../src/kinds/manual-qa/config.ts';
import { buildManualIndex } from '../src/manual/manual-index.ts';
import { loadManualQaRun } from '../src/kinds/manual-qa/results.ts';
import { generateDeterministicTestSet } from '../src/manual/testset.ts';
import { ResultStore } from '../src/store/store.ts';
import { runManualQa } from '../test/helpers/run-kinds.ts';

const dir = resolve(import.meta.dirname, '../data/bmw-manual/xml');
const files = readdirSync(dir).filter((f) => f.endsWith('.xml')).sort().map((f) => join(dir, f));
const limit = process.argv[2] ? Number(process.argv[2]) : Infinity;

const ingestMs: number[] = [];
let index;
for (let run = 0; run < 3; run++) {
  const t0 = performance.now();
  index = await buildManualIndex(files);
  ingestMs.push(performance.now() - t0);
}
ingestMs.sort((a, b) => a - b);
const corpus = new ManualCorpus(index!);
const t1 = performance.now();
const items = generateDeterministicTestSet(corpus).slice(0, limit);
const generateMs = performance.now() - t1;

// the deterministic campaign itself: runManualQa with a results store, the reference unit over a loopback bridge
const work = mkdtempSync(join(tmpdir(), 'bench-manual-'));
const configPath = join(work, 'manual.yaml');
writeFileSync(configPath, `kind: manual-qa\nname: bench-manual\nmanual: [${JSON.stringify(dir)}]\n${Number.isFinite(limit) ? `limit: ${limit}\n` : ''}evaluators: [oracle]\nconcurrency: 4\n`);
const store = ResultStore.open(join(work, 'icabench.db'));
const progress: number[] = [];
const t2 = performance.now();
const run = await runManualQa(loadManualQaConfig(configPath), { store, onProgress: () => progress.push(performance.now()) });
const totalS = (performance.now() - t2) / 1000;
// questions/s from the first answer stored to the last: planning (ingestion, test set) and bridge start-up excluded
const askingS = (progress.at(-1)! - progress[0]) / 1000;
const judged = loadManualQaRun(store, run.runId).rows.filter((r) => r.result?.evaluations[0]?.outcome === 'judged').length;
store.close();
rmSync(work, { recursive: true, force: true });
const campaignLine = `deterministic manual-QA campaign (runManualQa: bridge, reference unit's manual skill (BM25), deterministic tier, SQLite store; concurrency 4): ${run.done} questions, ${((run.done - 1) / askingS).toFixed(1)} questions/s while asking, ${totalS.toFixed(1)} s in all with planning; ${judged} judged`;

const rssMb = process.resourceUsage().maxRSS / 1024;
console.log(`ingestion of ${files.length} chapters (${corpus.chunks.length} chunks): best ${ingestMs[0].toFixed(0)} ms, median ${ingestMs[1].toFixed(0)} ms`);
console.log(`deterministic test set: ${items.length} questions in ${generateMs.toFixed(0)} ms`);
console.log(campaignLine);
console.log(`peak RSS ${rssMb.toFixed(0)} MB; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
