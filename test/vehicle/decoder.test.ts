import { describe, expect, it } from 'vitest';
import { connectHeadUnit } from '../../src/bridge/client.ts';
import { startBridgeServer } from '../../src/bridge/server.ts';
import type { HeadUnitHandler } from '../../src/headunit/types.ts';
import { BridgeFrameSink, VehicleContextMessageSchema, framesToMessage, messageToFrames } from '../../src/vehicle/bridge.ts';
import { VehicleContextDecoder } from '../../src/vehicle/decoder.ts';
import { framesForInterval } from '../../src/vehicle/feed.ts';
import { loadMapping } from '../../src/vehicle/mapping.ts';
import { loadScenario } from '../../src/vehicle/scenario.ts';
import type { TimedFrame } from '../../src/vehicle/frames.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { opendbcPath } from './helpers.ts';

/** the last timestamp at which each message id was sent */
function lastSent(frames: TimedFrame[]): Map<number, number> {
  const last = new Map<number, number>();
  for (const f of frames) last.set(f.id, f.t);
  return last;
}

describe('scenario frames on the bench DBC', () => {
  const urban = loadScenario('urban');
  const mapping = loadMapping('icabench_vehicle');

  it('schedules every mapped message at its DBC cycle time, in time order', () => {
    const frames = framesForInterval(urban, mapping, 0, 60);
    // per second: 50 motion + 10 battery + 2 climate + 5 position + 1 clock
    expect(frames.length).toBe(60 * 68);
    const motion = frames.filter((f) => f.id === 0x310).map((f) => f.t);
    expect(motion.length).toBe(3000);
    motion.forEach((t, k) => expect(t).toBeCloseTo(k * 0.02, 9));
    for (let i = 1; i < frames.length; i++) expect(frames[i].t).toBeGreaterThanOrEqual(frames[i - 1].t);
    // a window continues exactly where the previous one stopped
    const split = [...framesForInterval(urban, mapping, 0, 30), ...framesForInterval(urban, mapping, 30, 60)];
    expect(split.map((f) => [f.t, f.id])).toEqual(frames.map((f) => [f.t, f.id]));
  });

  it('decodes back to the scenario state within one DBC resolution step', () => {
    const highway = loadScenario('highway');
    const frames = framesForInterval(highway, mapping, 0, 301);
    const decoder = new VehicleContextDecoder(mapping);
    const outcome = decoder.ingest(framesToMessage(mapping.dbcName, frames.slice(0, 1500)));
    expect(outcome).toEqual({ accepted: 1500, rejected: 0, problems: [] });
    decoder.ingestFrames(frames.slice(1500));
    const last = lastSent(frames);
    const at = (id: number) => highway.stateAt(last.get(id)!);
    const state = decoder.state()!;
    expect(state.speedKmh).toBeCloseTo(at(0x310).vehicle.speedKmh, 1);
    expect(state.gear).toBe('D');
    expect(state.parkingBrake).toBe(false);
    expect(Math.abs(state.headingDeg! - at(0x310).vehicle.headingDeg!)).toBeLessThanOrEqual(0.01);
    expect(Math.abs(state.stateOfChargePct! - at(0x320).vehicle.stateOfChargePct!)).toBeLessThanOrEqual(0.1);
    expect(Math.abs(state.rangeKm! - at(0x320).vehicle.rangeKm!)).toBeLessThanOrEqual(0.5);
    expect(state.outsideTempC).toBeCloseTo(24, 9);
    expect(state.hvacSetpointC).toBe(20);
    expect(Math.abs(state.position!.lat - at(0x340).position.lat)).toBeLessThanOrEqual(1e-7);
    expect(Math.abs(state.position!.lon - at(0x340).position.lon)).toBeLessThanOrEqual(1e-7);
    expect(state.date).toBe('2026-06-12');
    expect(state.time).toBe(at(0x350).time);
    expect(decoder.counts()).toEqual({ framesAccepted: frames.length, unknownId: 0, lengthMismatch: 0, valuesRejected: 0, messagesRejected: 0 });
  });

  it('carries the parking brake: engaged in P, released in D', () => {
    const parked = new VehicleContextDecoder(mapping);
    parked.ingestFrames(framesForInterval(loadScenario('parked'), mapping, 0, 1));
    expect(parked.state()).toMatchObject({ gear: 'P', parkingBrake: true });
    const driving = new VehicleContextDecoder(mapping);
    driving.ingestFrames(framesForInterval(urban, mapping, 100, 101));
    expect(driving.state()).toMatchObject({ gear: 'D', parkingBrake: false });
  });

  it('has no state until speed and gear have arrived', () => {
    const decoder = new VehicleContextDecoder(mapping);
    expect(decoder.state()).toBeNull();
    decoder.ingestFrames(framesForInterval(urban, mapping, 0, 0.001).filter((f) => f.id !== 0x310));
    expect(decoder.state()).toBeNull();
  });
});

describe('mappings onto opendbc cars', () => {
  for (const [name, fields] of [
    ['tesla_model_s', ['speedKmh', 'gear', 'outsideTempC', 'headingDeg', 'position']],
    ['hyundai_2015', ['speedKmh', 'gear', 'parkingBrake', 'outsideTempC', 'hvacSetpointC']],
  ] as const) {
    it(`${name}: a scenario goes through the car's DBC and comes back`, () => {
      const mapping = loadMapping(name);
      const highway = loadScenario('highway');
      const frames = framesForInterval(highway, mapping, 250, 251);
      const decoder = new VehicleContextDecoder(mapping);
      expect(decoder.ingest(framesToMessage(mapping.dbcName, frames)).rejected).toBe(0);
      const state = decoder.state()!;
      expect(Object.keys(state).sort()).toEqual([...fields].sort());
      const last = lastSent(frames);
      const speedMessage = mapping.messages.find((m) => m.message.signals.some((s) => /Speed|Vanz/.test(s.name)))!.message;
      const expected = highway.stateAt(last.get(speedMessage.id)!);
      // Tesla: 0.05 mph steps; Hyundai: 0.5 km/h steps
      expect(Math.abs(state.speedKmh - expected.vehicle.speedKmh)).toBeLessThanOrEqual(name === 'tesla_model_s' ? 0.05 / 0.621371192 : 0.5);
      expect(state.gear).toBe('D');
      expect(state.outsideTempC).toBe(24);
      if (name === 'tesla_model_s') {
        const gps = highway.stateAt(last.get(984)!);
        expect(Math.abs(state.position!.lat - gps.position.lat)).toBeLessThanOrEqual(1e-6);
        expect(Math.abs(state.position!.lon - gps.position.lon)).toBeLessThanOrEqual(1e-6);
      } else {
        expect(state.hvacSetpointC).toBe(20);
        expect(state.parkingBrake).toBe(false);
      }
    });
  }

  it('rejects mapping files that do not fit their DBC, naming file and field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-mapping-'));
    const write = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    const dbc = join(import.meta.dirname, '../../hardware/icabench_vehicle.dbc');
    const header = `name: t\ndbc: ${dbc}\n`;
    const gear = '  gear: { message: VEHICLE_MOTION, signal: Gear, values: { P: P, R: R, N: N, D: D } }\n';
    expect(() => loadMapping(write('a.yaml', `${header}signals:\n  speedKmh: { message: NOPE, signal: X }\n${gear}`))).toThrow(/a\.yaml:\d+: signals\.speedKmh\.message: NOPE is not a message of/);
    expect(() => loadMapping(write('b.yaml', `${header}signals:\n  speedKmh: { message: VEHICLE_MOTION, signal: X }\n${gear}`))).toThrow(/b\.yaml:\d+: signals\.speedKmh\.signal: X is not a signal of VEHICLE_MOTION/);
    expect(() => loadMapping(write('c.yaml', `${header}signals:\n  speedKmh: { message: VEHICLE_MOTION, signal: VehicleSpeed }\n`))).toThrow(/c\.yaml:\d+: signals\.gear: missing required field "gear" \(expected object\) in the mapping "signals"/);
    expect(() => loadMapping(write('d.yaml', `${header}signals:\n  speedKmh: { message: VEHICLE_MOTION, signal: VehicleSpeed }\n  gear: { message: VEHICLE_MOTION, signal: Gear, values: { P: Park, R: R, N: N, D: D } }\n`))).toThrow(/d\.yaml:\d+: signals\.gear\.values\.P: "Park" is not a label of Gear/);
    const tesla = opendbcPath('tesla_can.dbc');
    expect(() => loadMapping(write('e.yaml', `name: t\ndbc: ${tesla}\nsignals:\n  speedKmh: { message: DI_torque2, signal: DI_vehicleSpeed }\n  gear: { message: DI_torque2, signal: DI_gear, values: { P: 1, R: 2, N: 3, D: 4 } }\n`))).toThrow(/e\.yaml:\d+: cycleMs\.DI_torque2: required, the DBC gives DI_torque2 no GenMsgCycleTime/);
  });
});

describe('the decoder reports bad input and counts it', () => {
  const mapping = loadMapping('icabench_vehicle');
  const frame = (id: number, hex: string, t = 1): TimedFrame => ({ t, id, extended: false, data: Buffer.from(hex, 'hex') });

  it('unknown ids, wrong lengths, out-of-range values and unknown gears', () => {
    const decoder = new VehicleContextDecoder(mapping);
    // speed 50.00 km/h (0x1388), gear D, heading 0
    const good = frame(0x310, '8813030000000000');
    const outcome = decoder.ingestFrames([
      good,
      frame(0x123, '00'),
      frame(0x310, '881303'),
      frame(0x310, 'FFFF030000000000'), // 655.35 km/h, declared [0|300]
      frame(0x310, '8813070000000000'), // gear raw 7: no label, not mapped
    ]);
    expect(outcome.accepted).toBe(3);
    expect(outcome.rejected).toBe(2);
    expect(outcome.problems).toEqual([
      expect.stringMatching(/id 0x123 is not in .*icabench_vehicle\.dbc/),
      expect.stringMatching(/VEHICLE_MOTION \(id 0x310\) has 8 bytes .* frame has 3/),
      expect.stringMatching(/VEHICLE_MOTION\.VehicleSpeed = 655\.35 is outside \[0\|300\]/),
      expect.stringMatching(/VEHICLE_MOTION\.Gear = 7 is not a gear this mapping knows/),
    ]);
    expect(decoder.counts()).toEqual({ framesAccepted: 3, unknownId: 1, lengthMismatch: 1, valuesRejected: 2, messagesRejected: 0 });
    // the bad values were not used: the last good ones stand
    expect(decoder.state()).toMatchObject({ speedKmh: 50, gear: 'D' });
  });

  it('rejects malformed payloads and frames of another DBC', () => {
    const decoder = new VehicleContextDecoder(mapping);
    expect(decoder.ingest({ dbc: 'icabench_vehicle', frames: [{ t: 0, id: 0x310, data: 'XYZ' }] }).problems[0]).toMatch(/frames\.0\.data: expected data as hex bytes/);
    expect(decoder.ingest({ dbc: 'tesla_can', frames: [{ t: 0, id: 0x310, data: '00' }] })).toMatchObject({ rejected: 1, problems: [expect.stringMatching(/follow DBC "tesla_can", this head unit decodes "icabench_vehicle"/)] });
    expect(decoder.counts().messagesRejected).toBe(2);
    expect(decoder.recentProblems).toHaveLength(2);
  });

  it('negative speed from an offset signal is rejected by the shared VehicleState schema', () => {
    const tesla = loadMapping('tesla_model_s');
    const decoder = new VehicleContextDecoder(tesla);
    // DI_vehicleSpeed raw 0 = -25 mph, within the DBC's declared [-25|179.75]
    decoder.ingestFrames([{ t: 0, id: 280, extended: false, data: tesla.codec.encode('DI_torque2', { DI_vehicleSpeed: -25, DI_gear: 'DI_GEAR_R' }) }]);
    expect(decoder.counts().valuesRejected).toBe(1);
    expect(decoder.recentProblems[0]).toMatch(/speedKmh = -40\.2\d*: /);
    expect(decoder.state()).toBeNull();
  });
});

describe('vehicle_context over the bridge', () => {
  it('frames sent by the bench reach the head unit decoder unchanged', async () => {
    const message = framesToMessage('icabench_vehicle', [{ t: 1.5, id: 0x310, extended: false, data: Uint8Array.from([1, 2]) }, { t: 2, id: 0x1abcdef, extended: true, data: new Uint8Array() }]);
    expect(VehicleContextMessageSchema.parse(message)).toEqual(message);
    expect(messageToFrames(message)).toEqual([
      { t: 1.5, id: 0x310, extended: false, data: Uint8Array.from([1, 2]) },
      { t: 2, id: 0x1abcdef, extended: true, data: new Uint8Array() },
    ]);

    const mapping = loadMapping('icabench_vehicle');
    const decoder = new VehicleContextDecoder(mapping);
    const received: Array<string | null> = [];
    let resolveReceived!: () => void;
    const allReceived = new Promise<void>((resolve) => (resolveReceived = resolve));
    const frames = framesForInterval(loadScenario('urban'), mapping, 55, 60);
    const handler: HeadUnitHandler = {
      unit: { name: 'vehicle-test', version: '1' },
      capabilities: { text: true, audio: false, vehicleContext: true, structuredActions: false },
      startSession() {},
      async handleTurn() {
        return { text: '', actions: [] };
      },
      endSession() {},
      handleVehicleContext(sessionId, payload) {
        received.push(sessionId);
        decoder.ingest(payload);
        if (decoder.counts().framesAccepted === frames.length) resolveReceived();
      },
    };
    const server = await startBridgeServer({ token: 'vehicle-test-token' });
    const client = await connectHeadUnit({ url: server.url, token: 'vehicle-test-token', handler });
    try {
      const unit = await server.waitForHeadUnit(5_000);
      const sink = new BridgeFrameSink(mapping.dbcName, (payload) => unit.sendVehicleContext(null, payload));
      await sink.send(frames.slice(0, 100));
      await sink.send(frames.slice(100));
      await allReceived;
      expect(received).toEqual([null, null]);
      const expected = loadScenario('urban').stateAt(59.98);
      expect(decoder.state()).toMatchObject({ gear: 'D', date: '2026-06-12', time: '08:15' });
      expect(decoder.state()!.speedKmh).toBeCloseTo(expected.vehicle.speedKmh, 1);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
