import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import { combinedVerdict } from '../../../src/analysis/verdict.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

describe('reproducible runs against the reference head unit', () => {
  it('two runs of the same config (different run ids, concurrent conversations) give the same conversations, faults and verdicts', async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 16;
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-repro-')), 'icabench.db'));
    try {
      const fingerprints: string[][] = [];
      for (const concurrency of [4, 1]) {
        campaign.config.concurrency = concurrency;
        const { runId } = await runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) });
        fingerprints.push(
          [...store.conversations(runId)].map((c) =>
            JSON.stringify([c.spec.key, c.turns.map((t) => [t.utterance.text, t.reply?.text, t.reply?.diagnostics, t.verdicts.map((v) => v.labels)]), combinedVerdict(c).outcome]),
          ),
        );
      }
      expect(fingerprints[0]).toHaveLength(16);
      expect(fingerprints[1]).toEqual(fingerprints[0]);
      // the faults did fire: the comparison is not between two fault-free runs
      expect(fingerprints[0].some((f) => f.includes('"profile":'))).toBe(true);
    } finally {
      store.close();
    }
  });
});
