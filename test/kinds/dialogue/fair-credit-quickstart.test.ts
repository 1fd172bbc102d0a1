import { describe, expect, it, onTestFinished } from 'vitest';
import { combinedVerdict } from '../../../src/analysis/verdict.ts';
import { loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import { tempStore } from './helpers.ts';

describe('fair credit on the quickstart campaign', () => {
  it('the fault-free reference unit scores C = 1 on every conversation with no finding', async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    if (campaign.config.headUnit.type !== 'reference') throw new Error('the quickstart runs the reference unit');
    campaign.config.headUnit.faults = { ...campaign.config.headUnit.faults, profiles: [] };
    const store = tempStore(onTestFinished);
    const { runId } = await runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) });
    const conversations = [...store.conversations(runId)];
    expect(conversations).toHaveLength(campaign.config.conversations);
    const clean = conversations.filter((c) => combinedVerdict(c).findings.length === 0);
    // the fault-free unit answers (almost) every conversation correctly; each of those must be credited in full
    expect(clean.length).toBeGreaterThanOrEqual(conversations.length * 0.9);
    const short = clean.filter((c) => c.verdicts[0].score !== 1).map((c) => `${c.spec.key}: C = ${c.verdicts[0].score} (${c.verdicts[0].reasoning})`);
    expect(short).toEqual([]);
    expect(clean.every((c) => combinedVerdict(c).outcome === 'pass')).toBe(true);
  });
});
