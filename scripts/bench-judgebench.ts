/**
 * Judge-benchmark and statistics figures (npm run bench:judgebench): dataset generation, oracle
 * throughput, statistics on realistic sizes, and the LLM technique machinery against the local
 * fake OpenAI-compatible server (instant answers, so this is the bench's own overhead per call).
 */
import { readFileSync } from 'node:fs';
import { bootstrapCI, categoryCounts, fleissKappa, kruskalWallis, mannWhitneyU, mean } from '../src/domain/stats.ts';
import { createRng } from '../src/domain/rng.ts';
import { createProvider } from '../src/llm/index.ts';
import { generateDataset } from '../src/judgebench/generator.ts';
import { llmConfiguration, oracleConfiguration, runConfiguration, summarize } from '../src/judgebench/runner.ts';
import { withoutPreferences } from '../src/judgebench/dataset.ts';
import { startFakeLlmServer } from '../test/helpers/fakeLlmServer.ts';
import { fakeJudgeModel } from '../test/judgebench/fakeJudgeModel.ts';
import { dataPath } from '../test/helpers/repoData.ts';

function time<T>(label: string, run: () => T, unit?: (ms: number) => string): T {
  const started = performance.now();
  const value = run();
  const ms = performance.now() - started;
  console.log(`${label.padEnd(58)} ${ms.toFixed(1).padStart(9)} ms${unit ? `  ${unit(ms)}` : ''}`);
  return value;
}

async function timeAsync<T>(label: string, run: () => Promise<T>, unit?: (ms: number, value: T) => string): Promise<T> {
  const started = performance.now();
  const value = await run();
  const ms = performance.now() - started;
  console.log(`${label.padEnd(58)} ${ms.toFixed(1).padStart(9)} ms${unit ? `  ${unit(ms, value)}` : ''}`);
  return value;
}

const pairs = time('generate 600 pairs (100 user blocks)', () => generateDataset({ seed: 42 }));
const big = time('generate 6,000 pairs', () => generateDataset({ seed: 1, users: 1000 }));
const oracle = oracleConfiguration();
await timeAsync('oracle, 6,000 pairs with preferences', () => runConfiguration(oracle, big, { concurrency: 1 }), (ms) => `${((big.length / ms) * 1000).toFixed(0)} pairs/s`);
const bare = withoutPreferences(big);
await timeAsync('oracle, 6,000 utterance-only pairs (reads the utterance)', () => runConfiguration(oracle, bare, { concurrency: 1 }), (ms) => `${((bare.length / ms) * 1000).toFixed(0)} pairs/s`);

const random = createRng(3).next;
const sample = (n: number, shift = 0) => Array.from({ length: n }, () => random() + shift);
time('Mann–Whitney U exact, n1 = n2 = 20', () => mannWhitneyU(sample(20), sample(20, 0.2)));
time('Mann–Whitney U normal, n1 = n2 = 10,000', () => mannWhitneyU(sample(10_000), sample(10_000, 0.01)));
time('Kruskal–Wallis, 5 groups × 2,000', () => kruskalWallis([0, 1, 2, 3, 4].map((k) => sample(2000, k / 100))));
const fed = JSON.parse(readFileSync(dataPath('fed/fed_data.json'), 'utf8')) as Array<{ annotations: Record<string, unknown[]> }>;
const overall = fed.map((f) => f.annotations.Overall as number[]);
time("Fleiss' κ, FED Overall (500 items × 5 raters)", () => fleissKappa(categoryCounts(overall, [0, 1, 2, 3, 4])));
time('bootstrap CI of a mean, 500 items × 2,000 resamples', () => bootstrapCI(sample(500), mean, { seed: 1, resamples: 2000 }));

const server = await startFakeLlmServer({ respond: fakeJudgeModel(pairs) });
const provider = createProvider(`openai-compat:${server.url}/v1#truthful`, { maxConcurrent: 8 });
try {
  for (const technique of ['io', 'sc-5', 'adaptive-sc-5', 'mad'] as const) {
    const configuration = llmConfiguration('fake', technique, [provider]);
    await timeAsync(
      `${technique} over 600 pairs, fake server, concurrency 8`,
      async () => summarize(configuration, await runConfiguration(configuration, pairs, { concurrency: 8 })),
      (ms, s) => `${s.calls} calls, ${((s.calls / ms) * 1000).toFixed(0)} calls/s, F1 ${s.f1.toFixed(3)}`,
    );
  }
} finally {
  await provider.close();
  await server.close();
}
console.log(`peak RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
