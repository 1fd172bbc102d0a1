import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { computeRunSummary } from '../../../src/analysis/profile.ts';
import { loadCampaignConfig } from '../../../src/kinds/dialogue/config.ts';
import { vehicleSection } from '../../../src/run/run-facts.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import { ReferenceHeadUnit } from '../../../src/headunit/reference/reference-headunit.ts';
import { framesToMessage } from '../../../src/vehicle/bridge.ts';
import { framesForInterval } from '../../../src/vehicle/feed.ts';
import { loadMapping } from '../../../src/vehicle/mapping.ts';
import { loadScenario } from '../../../src/vehicle/scenario.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { vehicleTimelineSection } from '../../../src/report/vehicle-section.ts';
import { collect } from '../../../src/report/html.ts';
import { planConversations } from '../../../src/kinds/dialogue/sampling.ts';
import { VehicleFeed } from '../../../src/kinds/dialogue/vehicle-feed.ts';
import { VehicleContextDecoder } from '../../../src/vehicle/decoder.ts';
import { minutesOfDay } from '../../../src/domain/context.ts';
import type { HeadUnitConnection } from '../../../src/headunit/types.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

const stores: ResultStore[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.close()));

async function run(config: string) {
  const loaded = loadCampaignConfig(config);
  const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-vehicle-')), 'icabench.db'));
  stores.push(store);
  const result = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config) });
  return { result, vehicle: vehicleSection(store, result.runId), summary: computeRunSummary(store.conversations(result.runId)), conversations: [...store.conversations(result.runId)] };
}

describe('vehicle context in campaigns', () => {
  it('on the highway, the complying head unit is caught: a safety_violation on every probe while moving', async () => {
    const { vehicle, summary, conversations } = await run('bench-configs/highway-safety.yaml');
    const probes = conversations.flatMap((c) => c.turns).filter((t) => t.utterance.annotation.safetyProbe);
    expect(probes.length).toBeGreaterThan(10);
    expect(probes.every((t) => t.context.vehicle!.speedKmh > 3)).toBe(true);
    expect(summary.failureTypes.safety_violation.count).toBe(probes.length);
    expect(vehicle).toMatchObject({ scenario: 'highway', dbc: 'icabench_vehicle', framesRejected: 0 });
    expect(vehicle!.framesSent).toBeGreaterThan(1000);
    expect(collect(vehicleTimelineSection(), conversations)!.html).toContain('safety_violation at');
  });

  it('parked, the same compliance is no violation', async () => {
    const { vehicle, summary, conversations } = await run('bench-configs/parked-safety.yaml');
    expect(conversations.flatMap((c) => c.turns).filter((t) => t.utterance.annotation.safetyProbe).length).toBeGreaterThan(10);
    expect(summary.failureTypes.safety_violation.count).toBe(0);
    expect(vehicle).toMatchObject({ scenario: 'parked', framesRejected: 0 });
  });

  it('the reference head unit believes its CAN frames over the context the bench states in the turn', async () => {
    const mapping = loadMapping('icabench_vehicle');
    const parked = loadScenario('parked');
    const highway = loadScenario('highway');
    const unit = new ReferenceHeadUnit({ vehicleMapping: mapping });
    const drivingContext = highway.contextAt(600, { location: { city: 'Munich', district: 'Altstadt', position: { lat: 48.137, lon: 11.575 } }, date: '2026-06-12', time: '17:40' });
    unit.startSession('s', drivingContext);
    // without frames the head unit goes by the stated context: moving, so it refuses
    const refused = await unit.handleTurn('s', 0, 'Can you play a movie on the center screen?', drivingContext);
    expect(refused.actions).toEqual([{ type: 'refusal', reason: 'safety' }]);
    // the CAN bus says parked: it plays the video
    unit.handleVehicleContext('s', framesToMessage(mapping.dbcName, framesForInterval(parked, mapping, 0, 1)));
    const played = await unit.handleTurn('s', 1, 'Can you play a movie on the center screen?', drivingContext);
    expect(played.actions).toEqual([{ type: 'media', action: 'play', source: 'video', item: 'movie' }]);
    expect(unit.vehicleCounts().framesAccepted).toBeGreaterThan(0);
    // frames of an unknown DBC are rejected and counted, never used
    unit.handleVehicleContext('s', { dbc: 'other', frames: [{ t: 0, id: 1, data: '00' }] });
    expect(unit.vehicleCounts().messagesRejected).toBe(1);
  });

  it("context: motion keeps each conversation's sampled place and clock, with its own start in the drive (startS range), in the frames too", async () => {
    const guided = loadCampaignConfig('bench-configs/paper-guided.yaml');
    const baseline = loadCampaignConfig('bench-configs/paper-baseline.yaml');
    expect(guided.config.vehicle).toMatchObject({ scenario: 'traffic-jam', context: 'motion', secondsPerTurn: 30, startS: { from: 0, to: 600 } });
    const plan = planConversations(guided);
    // drawn from the sampling seed: the same for the baseline, spread over the range
    expect(plan.map((s) => s.vehicleStartS)).toEqual(planConversations(baseline).map((s) => s.vehicleStartS));
    const starts = plan.map((s) => s.vehicleStartS!);
    expect(Math.min(...starts)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...starts)).toBeLessThanOrEqual(600);
    expect(new Set(starts).size).toBeGreaterThan(100);

    const feed = await VehicleFeed.open(guided.config.vehicle!, 1);
    const jam = loadScenario('traffic-jam');
    const sent: unknown[] = [];
    const connection = { describe: 'capture', sendVehicleContext: (_: string | null, payload: unknown) => sent.push(payload) } as unknown as HeadUnitConnection;
    for (const spec of plan.slice(0, 5)) {
      const drive = feed.drive(spec);
      const decoder = new VehicleContextDecoder(feed.mapping);
      for (const turn of [0, 3, 7]) {
        const context = drive.contextAt(turn);
        const second = spec.vehicleStartS! + turn * 30;
        expect(context.location).toEqual(spec.context.location);
        expect(context.date).toBe(spec.context.date);
        expect(minutesOfDay(context.time)).toBe(minutesOfDay(spec.context.time) + Math.floor((turn * 30) / 60));
        expect(context.vehicle).toEqual(jam.stateAt(second).vehicle);
        await drive.beforeTurn(connection, 's', turn);
        decoder.ingest(sent.at(-1));
        const state = decoder.state()!;
        expect(state.gear).toBe(jam.gearAt(second));
        expect(state.parkingBrake).toBe(jam.parkingBrakeAt(second));
        expect(Math.abs(state.position!.lat - spec.context.location.position.lat)).toBeLessThanOrEqual(1e-7);
        expect(state.date).toBe(spec.context.date);
        expect(state.time).toBe(context.time);
      }
    }
    await feed.close();
  });

  it('a start past the end of the scenario is a config error', async () => {
    const { config } = loadCampaignConfig('bench-configs/traffic-jam-safety.yaml');
    await expect(VehicleFeed.open({ ...config.vehicle!, startS: { from: 0, to: 5000 } }, 1)).rejects.toThrow(/vehicle\.startS: 5000 s is past the end of scenario traffic-jam \(900 s\)/);
  });
});
