/**
 * Benchmark of the results store and reports: store N synthetic conversations (one transaction
 * each), stream a summary, write the report files, export JSONL. Prints throughput, sizes and
 * peak memory. Usage: npm run bench:reports -- [conversations=500] [turns=8] [--keep DIR]
 */
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { ConversationResultSchema, UtteranceAnnotationSchema, type ConversationResult, type ConversationSpec } from '../src/domain/conversation.ts';
import { FAILURE_LABELS, PERSONAS, STRATEGIES, STRATEGY_TARGET_FAILURE, type FailureLabel } from '../src/domain/taxonomy.ts';
import { computeRunSummary } from '../src/analysis/profile.ts';
import { createRng } from '../src/domain/rng.ts';
import { exportJsonl } from '../src/store/export.ts';
import { ResultStore } from '../src/store/store.ts';
import { writeRunOutputs } from '../src/report/write.ts';

const args = process.argv.slice(2);
const keepIndex = args.indexOf('--keep');
const keep = keepIndex >= 0 ? args.splice(keepIndex, 2)[1] : null;
const total = Number(args[0] ?? 500);
const turnsPer = Number(args[1] ?? 8);

const random = createRng(42).next;
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];

const context = { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-03-02', time: '18:30' };

function specOf(i: number): ConversationSpec {
  return {
    key: `conv-${String(i).padStart(5, '0')}`,
    seed: { id: `seed-${i % 40}`, text: 'Find an Italian place that is open late and navigate there avoiding tolls', requests: [{ intent: 'find_poi', category: 'restaurant', constraints: [] }] },
    persona: pick(PERSONAS),
    mode: 'guided',
    strategies: [...STRATEGIES],
    maxTurns: turnsPer,
    context,
    repeat: 0,
    rngSeed: i,
    scenario: undefined,
  };
}

function conversation(spec: ConversationSpec): ConversationResult {
  const turns = Array.from({ length: turnsPer }, (_, index) => {
    const strategy = random() < 0.7 ? pick(STRATEGIES) : null;
    const labels: FailureLabel[] = [];
    if (strategy && random() < 0.45) labels.push(STRATEGY_TARGET_FAILURE[strategy]);
    if (random() < 0.12) labels.push(pick(FAILURE_LABELS));
    return {
      index,
      utterance: { text: `Turn ${index}: and it should be cheap, in Schwabing, open after 22:00 please`, strategy, annotation: UtteranceAnnotationSchema.parse({}) },
      context,
      reply: { sessionId: spec.key, turn: index, text: 'I found Trattoria Da Marco in Schwabing, open until 23:30, moderate prices. Shall I navigate?', actions: [] },
      latencyMs: 40 + random() * 200,
      verdicts: [{ tier: 'oracle' as const, judge: 'oracle', outcome: 'judged' as const, labels: [...new Set(labels)].map((label) => ({ label, targetId: 't1', evidence: `${label}: reply ignored the stated requirement`, tier: 'oracle' as const })), targetUpdates: [], reasoning: '' }],
      targetsAfter: [],
    };
  });
  const failures = turns.reduce((n, t) => n + t.verdicts[0].labels.length, 0);
  const score = Math.max(0, Math.min(1, 1 - failures * 0.09 - random() * 0.1));
  const status = random() < 0.02 ? ('sut_error' as const) : ('completed' as const);
  return ConversationResultSchema.parse({
    spec,
    status,
    error: status === 'sut_error' ? 'head unit disconnected' : null,
    turns,
    targets: [],
    verdicts: [{ tier: 'oracle', judge: 'oracle', outcome: 'judged', dimensions: { instruction: { score: failures > 2 ? 0 : 2 }, context: { score: 1 }, plan: { score: 2 }, safety: { score: failures > 4 ? 1 : 2 } }, completedShare: 0.8, score, pass: score >= 0.75 }],
    failOn: ['safety_violation'],
    startedAt: new Date().toISOString(),
    durationMs: 2000 + random() * 3000,
  });
}

const dir = keep ?? mkdtempSync(join(tmpdir(), 'icabench-bench-reports-'));
let peakRss = process.memoryUsage().rss;
const sample = () => (peakRss = Math.max(peakRss, process.memoryUsage().rss));
const time = async <T>(fn: () => T | Promise<T>): Promise<[T, number]> => {
  const start = performance.now();
  const value = await fn();
  sample();
  return [value, performance.now() - start];
};

const plan = Array.from({ length: total }, (_, i) => specOf(i));
const results = plan.map(conversation);
const store = ResultStore.open(join(dir, 'results.sqlite'));
const runId = store.createRun({ name: 'bench', mode: 'guided', config: { bench: true }, plan });
const [, saveMs] = await time(() => {
  for (const result of results) store.saveConversation(runId, result);
});
const [, summaryMs] = await time(() => computeRunSummary(store.conversations(runId)));
const [, reportMs] = await time(() => writeRunOutputs(store, runId, join(dir, 'report'), { unit: 'synthetic conversations', faults: null }));
const files = { html: join(dir, 'report', 'report.html'), junit: join(dir, 'report', 'junit.xml'), csv: join(dir, 'report', 'conversations.csv') };
const [lines, exportMs] = await time(async () => {
  const out = createWriteStream(join(dir, 'export.jsonl'));
  const n = await exportJsonl(store, runId, out);
  out.end();
  await finished(out);
  return n;
});
store.close();

const kib = (path: string) => `${(statSync(path).size / 1024).toFixed(0)} KiB`;
console.log(`conversations ${total} × ${turnsPer} turns (Node ${process.version}, ${process.platform})`);
console.log(`store: ${(total / (saveMs / 1000)).toFixed(0)} conversations/s saved (${(saveMs / total).toFixed(2)} ms each, one transaction, synchronous=FULL)`);
console.log(`summary (streamed from store): ${summaryMs.toFixed(0)} ms`);
console.log(`report (summarizeRun + html + junit + csv + summary.json): ${reportMs.toFixed(0)} ms; report.html ${kib(files.html)}, junit.xml ${kib(files.junit)}, conversations.csv ${kib(files.csv)}`);
console.log(`export: ${lines} lines in ${exportMs.toFixed(0)} ms; store file ${kib(join(dir, 'results.sqlite'))}`);
console.log(`peak RSS ${(peakRss / 1024 / 1024).toFixed(0)} MiB`);
if (keep) console.log(`kept in ${dir}`);
else rmSync(dir, { recursive: true, force: true });
