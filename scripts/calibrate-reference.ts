/**
 * Calibrates the reference comparison (npm run bench:reference [-- --pairs FILE] [--embedding-model PATH]
 * [--target-precision 0.95] [--show]): runs it on a labelled set of (reply, reference, equivalent) pairs at
 * candidate meaning-similarity thresholds, prints precision, recall and the undecided share at each, and the
 * threshold the rule picks (src/judge/reference-calibration.ts, pickThreshold). The embedder is the method's
 * sentence model where it is installed (or the one given), else the lexical TF-IDF fallback; the output names it.
 * docs/reference-judging.md reports the figures and the threshold src/judge/reference.ts uses.
 */
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveEmbedder } from '../src/embedding/index.ts';
import { methodEmbeddingModel } from '../src/llm/manifest.ts';
import { compareWithReference, REFERENCE_SIMILARITY_THRESHOLD } from '../src/judge/reference.ts';
import { calibrationFigures, calibrationOutcomes, loadCalibrationPairs, pickThreshold, type CalibrationFigures } from '../src/judge/reference-calibration.ts';

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: 'data/reference-calibration/pairs.jsonl' },
    'embedding-model': { type: 'string' },
    'target-precision': { type: 'string', default: '0.95' },
    show: { type: 'boolean', default: false },
  },
});
const target = Number(values['target-precision']);
if (!(target > 0 && target <= 1)) throw new Error(`--target-precision: expected a number in (0, 1], got "${values['target-precision']}"`);

const pairs = loadCalibrationPairs(resolve(values.pairs));
const embedder = await resolveEmbedder(values['embedding-model'], (line) => console.error(line), methodEmbeddingModel());
const candidates = Array.from({ length: 15 }, (_, i) => Math.round((0.25 + i * 0.05) * 100) / 100);
const percent = (x: number | null) => (x === null ? '   –  ' : `${(x * 100).toFixed(1).padStart(5)}%`);

console.log(`pairs: ${values.pairs} (${pairs.length}: ${pairs.filter((p) => p.equivalent).length} equivalent, ${pairs.filter((p) => !p.equivalent).length} not)`);
console.log(`embedder: ${embedder.describe}`);
console.log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, Node ${process.version}`);
console.log('threshold  eq-precision  eq-recall  contra-precision  contra-recall  undecided  false-eq  false-contra');
const figures: CalibrationFigures[] = [];
for (const threshold of candidates) {
  const f = calibrationFigures(threshold, await calibrationOutcomes(pairs, embedder, threshold));
  figures.push(f);
  console.log(`${threshold.toFixed(2).padStart(9)}  ${percent(f.equivalentPrecision).padStart(12)}  ${percent(f.equivalentRecall).padStart(9)}  ${percent(f.contradictionPrecision).padStart(16)}  ${percent(f.contradictionRecall).padStart(13)}  ${percent(f.undecidedShare).padStart(9)}  ${String(f.falseEquivalent).padStart(8)}  ${String(f.falseContradiction).padStart(12)}`);
}
const picked = pickThreshold(figures, target);
console.log(
  picked.reached
    ? `picked: ${picked.figures.threshold.toFixed(2)} (the lowest threshold with equivalent precision ≥ ${target})`
    : `picked: ${picked.figures.threshold.toFixed(2)} (no threshold reaches equivalent precision ${target}; the most precise one)`,
);
console.log(`in use (src/judge/reference.ts, ${embedder.kind}): ${REFERENCE_SIMILARITY_THRESHOLD[embedder.kind].toFixed(2)}`);
if (values.show) {
  const threshold = REFERENCE_SIMILARITY_THRESHOLD[embedder.kind];
  for (const pair of pairs) {
    const result = await compareWithReference({ text: pair.reply, actions: [] }, pair.reference, embedder, threshold);
    const wrong = (result.decision === 'equivalent' && !pair.equivalent) || (result.decision === 'contradicts' && pair.equivalent);
    console.log(`${wrong ? 'WRONG' : result.decision === 'undecided' ? 'undec' : 'ok   '} ${pair.id} [${pair.kind}] ${result.decision}${result.label ? ` (${result.label})` : ''}: ${result.evidence}`);
  }
}
await embedder.close();
