/**
 * Bench app responsiveness with a 10,000-conversation run in the store.
 * 1. runs a real (small) quickstart campaign to get real ConversationResults;
 * 2. stores a 10,000-conversation run made of copies of them under new keys;
 * 3. serves it and measures, in Debian's chromium, the first paint of the run page
 *    (header and the first page of the conversation list), the report figures (summary over
 *    all 10,000 conversations), and paging to the last page.
 * Run: npm run bench:ui   (builds the UI first). Figures go to docs/benchmarks.md (## Bench app).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { loadCampaignConfig } from '../src/kinds/dialogue/config.ts';
import { buildTiers } from '../src/kinds/dialogue/tiers.ts';
import type { ConversationResult } from '../src/domain/conversation.ts';
import { DEFAULT_CONFIGS_DIR, DEFAULT_UI_DIR } from '../src/server/bench.ts';
import { startBenchServer } from '../src/server/server.ts';
import { ResultStore } from '../src/store/store.ts';
import { launchBrowser } from '../test/e2e/browser.ts';
import { writeFileSync } from 'node:fs';
import { runCampaign } from '../test/helpers/run-kinds.ts';

const CONVERSATIONS = Number(process.env.BENCH_UI_CONVERSATIONS ?? 10_000);
const SEED_CONVERSATIONS = 60;
const REPEATS = 7;

const workspace = mkdtempSync(join(tmpdir(), 'icabench-bench-ui-'));
const store = ResultStore.open(join(workspace, 'icabench.db'));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

try {
  // 1. real conversations from the quickstart (reference head unit, template simulator, oracle judge)
  const quickstart = loadCampaignConfig(join(DEFAULT_CONFIGS_DIR, 'quickstart.yaml'));
  // the loaded config's paths are absolute (resolved against bench-configs/), so the copy reads the same seed pool
  const small = { ...quickstart.config, conversations: SEED_CONVERSATIONS };
  const smallPath = join(workspace, 'seed-campaign.yaml');
  writeFileSync(smallPath, stringify(small));
  const campaign = loadCampaignConfig(smallPath);
  const seedRun = await runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) });
  const seeds: ConversationResult[] = [...store.conversations(seedRun.runId)];

  // 2. a 10,000-conversation run of copies under new keys
  const t0 = performance.now();
  const copies = Array.from({ length: CONVERSATIONS }, (_, i) => {
    const source = seeds[i % seeds.length];
    const key = `b${String(i).padStart(5, '0')}-${source.spec.key}`;
    return { ...source, spec: { ...source.spec, key } };
  });
  const runId = store.createRun({ name: `bench-${CONVERSATIONS}`, mode: 'guided', config: campaign.config, plan: copies.map((c) => c.spec) });
  for (const copy of copies) store.saveConversation(runId, copy);
  store.setRunStatus(runId, 'completed');
  const fillSeconds = (performance.now() - t0) / 1000;

  // 3. serve and measure in chromium
  const server = await startBenchServer({
    store,
    workspace,
    configsDir: DEFAULT_CONFIGS_DIR,
    uiDir: DEFAULT_UI_DIR,
    launcher: async () => {
      throw new Error('the UI benchmark starts no campaign');
    },
  });
  const browser = await launchBrowser();
  const runUrl = `${server.url}/#/runs/${encodeURIComponent(runId)}`;
  const firstPaint: number[] = [];
  const fcp: number[] = [];
  const figures: number[] = [];
  const lastPage: number[] = [];
  try {
    for (let i = 0; i < REPEATS; i++) {
      const page = await browser.context.newPage();
      const start = performance.now();
      await page.goto(runUrl);
      await page.locator('[data-testid=conversation-table] tbody tr').first().waitFor();
      firstPaint.push(performance.now() - start);
      fcp.push(await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN));
      await page.locator('[data-testid=report-charts] canvas').first().waitFor({ timeout: 120_000 });
      figures.push(performance.now() - start);
      const before = performance.now();
      await page.getByRole('button', { name: '»' }).click();
      await page.getByTestId('pager-status').filter({ hasText: `page ${CONVERSATIONS / 50} of` }).waitFor();
      await page.locator(`[data-testid=conversation-table] tbody tr >> text=b${String(CONVERSATIONS - 1).padStart(5, '0')}`).first().waitFor();
      lastPage.push(performance.now() - before);
      await page.close();
    }
  } finally {
    await browser.close();
    await server.close();
  }

  const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
  console.log(`machine: ${cpus().length} cores, Node ${process.version}, chromium headless; ${CONVERSATIONS} conversations (copies of ${seeds.length} real quickstart conversations)`);
  console.log(`store fill: ${fillSeconds.toFixed(1)} s`);
  console.log(`run page first paint (navigation → first page of the conversation list drawn), ${REPEATS} fresh tabs: ${fmt(firstPaint)}`);
  console.log(`browser first-contentful-paint: ${fmt(fcp)}`);
  console.log(`report figures and charts (summary over all conversations; first tab uncached): first ${figures[0].toFixed(0)} ms, then ${fmt(figures.slice(1))}`);
  console.log(`jump to the last page (${CONVERSATIONS / 50}): ${fmt(lastPage)}`);
} finally {
  store.close();
  rmSync(workspace, { recursive: true, force: true });
}
