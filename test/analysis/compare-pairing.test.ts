import { describe, expect, it, onTestFinished } from 'vitest';
import { planDifference } from '../../src/domain/comparable.ts';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { buildTiers } from '../../src/kinds/dialogue/tiers.ts';
import { storedRunChanges } from '../../src/report/changes-section.ts';
import { specFor, tempStore } from '../kinds/dialogue/helpers.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

describe('compare pairs only the same conversation', () => {
  it('names the first spec field that differs between conversations of one key', () => {
    const guided = [0, 1, 2].map((i) => specFor(i, 'guided', { key: `c${i}` }));
    const baseline = [0, 1, 2].map((i) => specFor(i, 'baseline', { key: `c${i}` }));
    expect(planDifference(guided, baseline)).toBe('mode guided vs baseline');
    expect(planDifference(guided, guided.map((s) => ({ ...s })))).toBeNull();
    expect(planDifference(guided, guided.map((s, i) => (i === 1 ? { ...s, rngSeed: 7 } : s)))).toBe('rngSeed 1001 vs 7');
    expect(planDifference(guided, [specFor(9, 'guided', { key: 'other' })])).toBe('no conversation key in common');
  });

  it('a guided and a baseline run: no fixed/regressed, the reason; two runs of one config on two unit builds: paired', async () => {
    const store = tempStore(onTestFinished);
    const run = async (mode: 'guided' | 'baseline', faults: boolean) => {
      const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
      campaign.config.conversations = 6;
      campaign.config.mode = mode;
      if (campaign.config.headUnit.type !== 'reference') throw new Error('the quickstart runs the reference unit');
      if (!faults) campaign.config.headUnit.faults = { ...campaign.config.headUnit.faults, profiles: [] };
      campaign.config.name = `${mode}${faults ? '' : '-fixed'}`;
      return (await runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) })).runId;
    };
    const guided = await run('guided', true);
    const baseline = await run('baseline', true);
    const fixedBuild = await run('guided', false);

    const strangers = storedRunChanges(store, guided, baseline);
    expect(strangers).toEqual({ unpaired: 'guided vs baseline: different plans (mode guided vs baseline); conversations are not paired' });

    const builds = storedRunChanges(store, guided, fixedBuild);
    if (!('changes' in builds)) throw new Error(`not paired: ${builds.unpaired}`);
    const { changes } = builds;
    const compared = changes.fixed.length + changes.regressed.length + changes.otherChanges.length + changes.unchanged.pass + changes.unchanged.fail + changes.unchanged.other;
    expect(compared).toBe(6);
    expect(changes.onlyInA).toEqual([]);
  });
});
