/**
 * Guided vs baseline against a held-out head unit (npm run bench:heldout [-- --conversations N]): the paper-guided
 * and paper-baseline configs (same seeds, contexts, drive and judge) run against test/headunit/heldout-headunit.ts, a
 * test-only unit with fault types the reference unit does not have, dialled in over the bridge as a lab's unit
 * would be, with its places given to the bench as a world file (as a lab would export them). Prints, per mode, the unique
 * failure types per conversation, the fail rate and the conversations per label, and the guided ÷ baseline ratio
 * of unique failure types per conversation (the multi-turn paper reports 2.96× on its industrial assistant).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { connectConfiguredHeadUnit } from '../src/run/headunit.ts';
import { connectHeadUnit } from '../src/bridge/client.ts';
import { loadCampaignConfig } from '../src/kinds/dialogue/config.ts';
import { HeadUnitConfigSchema } from '../src/run/headunit-config.ts';
import { World } from '../src/world/world.ts';
import { buildTiers } from '../src/kinds/dialogue/tiers.ts';
import { FAILURE_LABELS, STRATEGIES } from '../src/domain/taxonomy.ts';
import { summarizeRun } from '../src/report/summary.ts';
import { ResultStore } from '../src/store/store.ts';
import { HeldOutHeadUnit } from '../test/headunit/heldout-headunit.ts';
import { runCampaign } from '../test/helpers/run-kinds.ts';

const { values } = parseArgs({
  options: { conversations: { type: 'string', default: '200' }, show: { type: 'string', default: '0' }, unit: { type: 'string', default: 'heldout' } },
});
if (values.unit !== 'heldout' && values.unit !== 'reference') throw new Error(`--unit: expected heldout or reference, got "${values.unit}"`);
// --unit reference: the configs as they are (the reference unit with its fault profiles), to see that a strategy change does not lose what it found there
const conversations = Number(values.conversations);
if (!Number.isInteger(conversations) || conversations < 1) throw new Error(`--conversations: expected a positive integer, got "${values.conversations}"`);

const dir = mkdtempSync(join(tmpdir(), 'icabench-heldout-'));
const store = ResultStore.open(join(dir, 'heldout.db'));
// the held-out unit serves the reference world's places: the lab's export of its POI data
const worldFile = join(dir, 'world.yaml');
writeFileSync(worldFile, JSON.stringify({ description: 'the held-out unit\'s places', pois: new World(1).pois }));
const TOKEN_ENV = 'ICABENCH_HELDOUT_TOKEN';
process.env[TOKEN_ENV] = 'heldout-bench-token';
try {
  const results: Record<string, Awaited<ReturnType<typeof summarizeRun>>> = {};
  for (const mode of ['guided', 'baseline'] as const) {
    const loaded = loadCampaignConfig(resolve(`bench-configs/paper-${mode}.yaml`));
    loaded.config.conversations = conversations;
    delete loaded.config.budgetMinutes;
    const started = performance.now();
    let run: Awaited<ReturnType<typeof runCampaign>>;
    if (values.unit === 'reference') run = await runCampaign(loaded, { store });
    else {
      loaded.config.world = worldFile;
      loaded.config.headUnit = HeadUnitConfigSchema.parse({ type: 'bridge', port: 0, tokenEnv: TOKEN_ENV });
      let dialled: Promise<unknown> | undefined;
      const headUnit = await connectConfiguredHeadUnit(loaded.config.headUnit, (line) => {
        const url = /bridge listening on (\S+);/.exec(line)?.[1];
        if (url) dialled = connectHeadUnit({ url, token: process.env[TOKEN_ENV]!, handler: new HeldOutHeadUnit() });
      });
      const client = (await dialled) as Awaited<ReturnType<typeof connectHeadUnit>>;
      run = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config), headUnit });
      await client.close();
      await headUnit.close();
    }
    results[mode] = await summarizeRun(store, run.runId);
    // --show N: the first N transcripts of each mode, with each turn's strategy and labels (to see what a strategy provoked)
    for (const conversation of [...store.conversations(run.runId)].slice(0, Number(values.show))) {
      console.log(`--- ${mode} ${conversation.spec.key}`);
      for (const turn of conversation.turns) {
        const labels = turn.verdicts.flatMap((v) => v.labels.map((l) => l.label));
        console.log(`  ${turn.utterance.strategy ?? '-'} | ${turn.utterance.text} || ${turn.reply?.text ?? '(no reply)'} || ${labels.join(', ')}`);
      }
    }
    console.log(`${mode}: ${run.done} conversations in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const row = (label: string, pick: (s: (typeof results)['guided']) => string) => console.log(`${label.padEnd(44)} ${pick(results.guided).padStart(10)} ${pick(results.baseline).padStart(10)}`);
  console.log(`${''.padEnd(44)} ${'guided'.padStart(10)} ${'baseline'.padStart(10)}`);
  row('unique failure types / conversation', (s) => s.uniqueFailureTypesPerConversation.toFixed(3));
  row('fail rate', (s) => (s.failRate === null ? '–' : `${(s.failRate * 100).toFixed(1)} %`));
  row('labelled failures', (s) => String(s.failures));
  for (const label of FAILURE_LABELS) row(`  conversations with ${label}`, (s) => String(s.failureTypes[label].conversations));
  for (const strategy of STRATEGIES) {
    const stats = results.guided.strategies[strategy];
    console.log(`guided ${strategy.padEnd(22)} used ${String(stats.uses).padStart(4)} times in ${String(stats.conversationsUsing).padStart(3)} conversations, its failure on ${stats.triggered} of those turns`);
  }
  const ratio = results.guided.uniqueFailureTypesPerConversation / results.baseline.uniqueFailureTypesPerConversation;
  console.log(`guided ÷ baseline unique failure types per conversation: ${ratio.toFixed(2)}×`);
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
