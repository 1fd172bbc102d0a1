import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { combinedVerdict } from '../../../src/analysis/verdict.ts';
import { loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

/**
 * The offline tiers' stored verdicts, pinned: the model tiers' prompts and transcript rendering (issue #37: fewer
 * tokens, cached prefixes) must leave what the template simulator says and the oracle decides byte for byte as it was.
 * The digest was taken on main at 40155a3, before that work. A deliberate change to the oracle, the template
 * simulator or the reference unit re-pins it (the test prints the new digest).
 */
const PINNED = '2c8df2212f050a92';

describe('offline tiers: stored verdicts unchanged by the model-tier prompt work', () => {
  it('the quickstart campaign (12 conversations) stores the same utterances, replies and verdicts as before', async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 12;
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-offline-')), 'icabench.db'));
    try {
      const { runId } = await runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) });
      const stored = [...store.conversations(runId)].map((c) => [
        c.spec.key,
        c.turns.map((t) => [t.utterance.text, t.utterance.strategy, t.reply?.text, t.verdicts.map((v) => [v.judge, v.outcome, v.labels, v.targetUpdates])]),
        c.verdicts.map((v) => [v.judge, v.outcome, v.score, v.pass]),
        combinedVerdict(c).outcome,
      ]);
      expect(stored).toHaveLength(12);
      const digest = createHash('sha256').update(JSON.stringify(stored)).digest('hex').slice(0, 16);
      expect(digest, `offline verdicts changed: digest now ${digest}`).toBe(PINNED);
    } finally {
      store.close();
    }
  });
});
