/**
 * Harness throughput: how fast the bench itself runs conversations when the head unit answers
 * instantly, so what is measured is the simulator, the oracle judge, the bridge and the store.
 *   npm run bench -- [--conversations N] [--concurrency C]
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resourceUsage } from 'node:process';
import { loadCampaignConfig } from '../src/kinds/dialogue/config.ts';
import { runCampaign } from '../src/kinds/dialogue/run.ts';
import { buildTiers } from '../src/kinds/dialogue/tiers.ts';
import { InProcessHeadUnit } from '../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../src/headunit/reference/reference-headunit.ts';
import { ResultStore } from '../src/store/store.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const conversations = arg('conversations', 300);
const concurrency = arg('concurrency', 4);
const dir = mkdtempSync(join(tmpdir(), 'icabench-bench-'));
const configPath = join(dir, 'bench.yaml');
writeFileSync(
  configPath,
  `name: bench\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: ${conversations}\nconcurrency: ${concurrency}\npersonas: [polite, impatient]\nheadUnit: { type: reference, faults: { profiles: all, rate: 0.4 } }\n`,
);
const campaign = loadCampaignConfig(configPath);

async function measure(label: string, inProcess: boolean): Promise<void> {
  const store = ResultStore.open(join(dir, `${label}.db`));
  const tiers = await buildTiers(campaign.config);
  const headUnit = inProcess
    ? { connection: new InProcessHeadUnit(new ReferenceHeadUnit({ faults: campaign.config.headUnit.type === 'reference' ? campaign.config.headUnit.faults : undefined })), bridge: null, reference: null, ensureReady: async () => undefined, close: async () => undefined }
    : undefined;
  let turns = 0;
  let sutMs = 0;
  const started = performance.now();
  const result = await runCampaign(campaign, {
    store,
    tiers,
    ...(headUnit ? { headUnit } : {}),
    onEvent: (e) => {
      if (e.type === 'turn') {
        turns++;
        sutMs += e.turn.latencyMs;
      }
    },
  });
  const wallMs = performance.now() - started;
  store.close();
  const perTurnMs = (wallMs * concurrency) / turns;
  console.log(
    `${label.padEnd(22)} ${result.done} conversations, ${turns} turns in ${(wallMs / 1000).toFixed(2)} s: ` +
      `${(turns / (wallMs / 1000)).toFixed(0)} turns/s, ${perTurnMs.toFixed(2)} ms per turn per worker ` +
      `(of which ${(sutMs / turns).toFixed(2)} ms waiting for the head unit)`,
  );
}

console.log(`icabench harness benchmark — node ${process.version}, ${conversations} conversations, concurrency ${concurrency}`);
await measure('in-process head unit', true);
await measure('over the bridge', false);
console.log(`peak RSS ${(resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
