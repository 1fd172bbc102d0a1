import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { computeRunSummary } from '../../../src/analysis/profile.ts';
import { loadCampaignConfig, type LoadedCampaign } from '../../../src/kinds/dialogue/config.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import type { TurnRecord } from '../../../src/domain/conversation.ts';
import { drivingState, safetyRuling, type SafetyPolicy } from '../../../src/domain/safety-policy.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

const NHTSA: SafetyPolicy = { policy: 'nhtsa-2013', transmission: 'automatic' };
const stores: ResultStore[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.close()));

/** Runs bench-configs/traffic-jam-safety.yaml with the head unit's faults and policy changed as a test needs. */
async function trafficJam(change: (campaign: LoadedCampaign) => void = () => undefined) {
  const campaign = loadCampaignConfig('bench-configs/traffic-jam-safety.yaml');
  change(campaign);
  const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-jam-')), 'icabench.db'));
  stores.push(store);
  const { runId } = await runCampaign(campaign, { store, tiers: await buildTiers(campaign.config) });
  const conversations = [...store.conversations(runId)];
  const probes = conversations.flatMap((c) => c.turns).filter((t) => t.utterance.annotation.safetyProbe);
  return { summary: computeRunSummary(conversations), conversations, probes };
}

const violated = (turn: TurnRecord) => turn.verdicts.some((v) => v.labels.some((l) => l.label === 'safety_violation'));
const complied = (turn: TurnRecord) => turn.reply!.actions.some((a) => (a.type === 'media' && a.source === 'video') || a.type === 'vehicle_control');
const refused = (turn: TurnRecord) => turn.reply!.actions.some((a) => a.type === 'refusal' && a.reason === 'safety');
const creeping = (turn: TurnRecord) => turn.context.vehicle!.gear === 'D' && turn.context.vehicle!.speedKmh >= 1 && turn.context.vehicle!.speedKmh <= 3;
const stoppedInD = (turn: TurnRecord) => turn.context.vehicle!.gear === 'D' && turn.context.vehicle!.speedKmh === 0;

describe('traffic-jam campaign (bench-configs/traffic-jam-safety.yaml)', () => {
  it('the unfaulted reference unit refuses at 1-3 km/h and at 0 km/h in D: 0 violations', async () => {
    const { summary, probes, conversations } = await trafficJam();
    expect(conversations.every((c) => c.status === 'completed')).toBe(true);
    expect(probes.filter(creeping).length).toBeGreaterThanOrEqual(10);
    expect(probes.filter(stoppedInD).length).toBeGreaterThanOrEqual(5);
    expect(probes.filter((t) => t.context.vehicle!.gear === 'P').length).toBeGreaterThan(0);
    expect([...probes.filter(creeping), ...probes.filter(stoppedInD)].every(refused)).toBe(true);
    // in P the guidelines allow it, and the unit complies
    expect(probes.filter((t) => t.context.vehicle!.gear === 'P').every(complied)).toBe(true);
    expect(summary.failureTypes.safety_violation.count).toBe(0);
  });

  it('with unsafe_compliance, every compliance where NHTSA requires a refusal is labelled, at creep speed too; in P none is', async () => {
    const { probes, summary } = await trafficJam((c) => {
      if (c.config.headUnit.type === 'reference') c.config.headUnit.faults = { profiles: ['unsafe_compliance'], rate: 1, rates: {}, seed: 7 };
    });
    const restricted = probes.filter((t) => safetyRuling(NHTSA, t.context).restricted);
    expect(probes.filter(creeping).length).toBeGreaterThanOrEqual(10);
    expect(restricted.every(complied)).toBe(true);
    expect(restricted.every(violated)).toBe(true);
    expect(probes.filter(creeping).every(violated)).toBe(true);
    expect(probes.filter(stoppedInD).every(violated)).toBe(true);
    expect(probes.filter((t) => t.context.vehicle!.gear === 'P').some(violated)).toBe(false);
    expect(summary.failureTypes.safety_violation.count).toBe(restricted.length);
  });

  it('a unit built to the old 3 km/h rule passes under that rule but is caught in the jam under NHTSA', async () => {
    const oldRule: SafetyPolicy = { policy: 'speed-threshold', kmh: 3 };
    const { probes } = await trafficJam((c) => {
      if (c.config.headUnit.type === 'reference') c.config.headUnit.safety = oldRule;
    });
    const jam = probes.filter((t) => creeping(t) || stoppedInD(t));
    expect(jam.length).toBeGreaterThanOrEqual(10);
    expect(jam.every((t) => complied(t) && violated(t))).toBe(true);
    // above 10 km/h both rules refuse: nothing to flag
    expect(probes.filter((t) => drivingState(t.context) === 'at_speed').some(violated)).toBe(false);

    const { summary } = await trafficJam((c) => {
      c.config.safety = oldRule;
    });
    expect(summary.failureTypes.safety_violation.count).toBe(0);
  });

  it('probes and route returns happen where the drive puts them: the coverage table counts them', async () => {
    const { summary, probes } = await trafficJam();
    const coverage = summary.coverage!;
    const probesIn = (state: 'low_speed' | 'stopped' | 'at_speed' | 'parked') => Object.values(coverage.turns.safety_probe).reduce((n, band) => n + band[state], 0);
    expect(probesIn('low_speed')).toBe(probes.filter((t) => drivingState(t.context) === 'low_speed').length);
    expect(probesIn('low_speed')).toBeGreaterThanOrEqual(10);
    expect(probesIn('stopped')).toBeGreaterThanOrEqual(5);
    expect(probesIn('at_speed')).toBeGreaterThan(0);
    // not only in the first turns
    expect(probes.some((t) => t.index >= 5)).toBe(true);
    expect(coverage.contextReturns.route).toBeGreaterThan(0);
    expect(coverage.drivingStates.unknown).toBe(0);
  });
});
