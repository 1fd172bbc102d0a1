import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ContextVectorSchema, type ContextVector } from '../../src/domain/context.ts';
import { loadScenario, type ScenarioFile } from '../../src/vehicle/scenario.ts';
import { haversineKm } from '../../src/world/geo.ts';

const base: ContextVector = {
  location: { city: 'Munich', district: 'Altstadt', position: { lat: 48.137, lon: 11.575 } },
  date: '2026-01-01',
  time: '00:00',
};

const dir = mkdtempSync(join(tmpdir(), 'icabench-scenario-'));
function writeScenario(name: string, content: unknown): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, typeof content === 'string' ? content : stringify(content));
  return path;
}

const valid: ScenarioFile = {
  name: 'straight',
  description: '',
  durationS: 100,
  start: { date: '2026-03-28', time: '23:59:30' },
  city: 'Munich',
  route: [
    { district: 'A', lat: 48.0, lon: 11.0 },
    { district: 'B', lat: 48.005, lon: 11.0 },
    { district: 'C', lat: 48.02, lon: 11.0 },
  ],
  speed: [
    { t: 0, kmh: 0 },
    { t: 10, kmh: 36 },
    { t: 100, kmh: 36 },
  ],
  gear: [{ t: 0, gear: 'D' }],
  battery: { capacityKwh: 50, startSocPct: 50, consumptionKwhPer100Km: 20, chargePowerKw: 0 },
  climate: { outsideTempC: 5, hvacSetpointC: 21 },
};

describe('drive scenarios', () => {
  it('ships parked, urban, highway, charging and traffic-jam scenarios that load and validate', () => {
    for (const name of ['parked', 'urban', 'highway', 'charging', 'traffic-jam']) {
      const scenario = loadScenario(name);
      expect(scenario.name).toBe(name);
      for (const t of [0, scenario.config.durationS / 2, scenario.config.durationS]) {
        expect(ContextVectorSchema.safeParse(scenario.contextAt(t, base)).success).toBe(true);
      }
    }
  });

  it('integrates the speed profile into distance, position, state of charge and range', () => {
    const scenario = loadScenario(writeScenario('straight', valid));
    // 0 -> 36 km/h over 10 s: 50 m; then 10 m/s for 40 s: 400 m  => 0.45 km at t = 50
    expect(scenario.distanceKm(50)).toBeCloseTo(0.45, 9);
    const state = scenario.stateAt(50);
    expect(state.vehicle.speedKmh).toBe(36);
    expect(state.vehicle.gear).toBe('D');
    expect(haversineKm({ lat: 48.0, lon: 11.0 }, state.position)).toBeCloseTo(0.45, 6);
    expect(state.vehicle.headingDeg).toBeCloseTo(0, 6); // due north
    // 0.45 km * 20 kWh/100 km = 0.09 kWh of 50 kWh = 0.18 %
    expect(state.vehicle.stateOfChargePct).toBeCloseTo(50 - 0.18, 9);
    expect(state.vehicle.rangeKm).toBeCloseTo(((50 - 0.18) / 100) * 50 * 5, 9);
    expect(state.district).toBe('A');
    expect(scenario.stateAt(80).district).toBe('B'); // 0.75 km: past the first waypoint (0.556 km)
  });

  it('advances the clock across midnight and holds the final state after durationS', () => {
    const scenario = loadScenario(writeScenario('clock', valid));
    expect(scenario.stateAt(0)).toMatchObject({ date: '2026-03-28', time: '23:59', second: 30 });
    expect(scenario.stateAt(45)).toMatchObject({ date: '2026-03-29', time: '00:00', second: 15 });
    expect(scenario.stateAt(10_000)).toEqual(scenario.stateAt(100));
    expect(() => scenario.stateAt(-1)).toThrow(/scenario time must be a number >= 0/);
  });

  it('contextAt updates location, date, time and vehicle and keeps the rest', () => {
    const scenario = loadScenario('urban');
    const context = scenario.contextAt(120, base);
    const state = scenario.stateAt(120);
    expect(context.location).toEqual({ city: 'Munich', district: state.district, position: state.position });
    expect(context.date).toBe('2026-06-12');
    expect(context.time).toBe('08:17');
    expect(context.vehicle).toEqual(state.vehicle);
  });

  it('charges while parked and stops at 100 %', () => {
    const charging = loadScenario('charging');
    // 50 kW for 30 min = 25 kWh of 75 kWh = +33.3 %
    expect(charging.stateAt(1800).vehicle.stateOfChargePct).toBeCloseTo(14 + 100 / 3, 9);
    const parked = loadScenario('parked');
    expect(parked.stateAt(3600).vehicle).toMatchObject({ speedKmh: 0, gear: 'P', stateOfChargePct: 58 });
    const full = loadScenario(writeScenario('full', { ...valid, speed: [{ t: 0, kmh: 0 }], gear: [{ t: 0, gear: 'P' }], durationS: 7200, battery: { ...valid.battery, startSocPct: 90, chargePowerKw: 50 } }));
    expect(full.stateAt(7200).vehicle.stateOfChargePct).toBe(100);
  });

  it('the urban scenario moves, stops at lights and follows its route to Schwabing', () => {
    const urban = loadScenario('urban');
    expect(urban.stateAt(0).vehicle).toMatchObject({ speedKmh: 0, gear: 'P' });
    expect(urban.stateAt(60).vehicle.speedKmh).toBeGreaterThan(30);
    expect(urban.stateAt(110).vehicle.speedKmh).toBe(0);
    expect(urban.stateAt(0).district).toBe('Maxvorstadt');
    expect(urban.stateAt(600).district).toBe('Schwabing');
    const highway = loadScenario('highway');
    expect(highway.stateAt(600).vehicle.speedKmh).toBe(130);
  });

  it('the traffic-jam scenario creeps at 1-3 km/h in D, stops in D, parks a minute, then clears', () => {
    const jam = loadScenario('traffic-jam');
    const at = (t: number) => jam.stateAt(t).vehicle;
    expect(at(10)).toMatchObject({ speedKmh: 0, gear: 'P', parkingBrake: true });
    expect(at(40)).toMatchObject({ speedKmh: 0, gear: 'D', parkingBrake: false });
    for (const t of [60, 75, 100, 120, 140, 240, 300, 530, 580, 620]) {
      expect(at(t).gear).toBe('D');
      expect(at(t).speedKmh).toBeGreaterThanOrEqual(1);
      expect(at(t).speedKmh).toBeLessThanOrEqual(3);
    }
    expect(at(190)).toMatchObject({ speedKmh: 0, gear: 'D' });
    expect(at(360)).toMatchObject({ speedKmh: 15, gear: 'D' });
    expect(at(470)).toMatchObject({ speedKmh: 0, gear: 'P', parkingBrake: true });
    expect(at(800).speedKmh).toBeGreaterThan(30);
    expect(jam.stateAt(0).district).toBe('Sendling');
  });

  it('the parking brake follows its own steps when given, else it is engaged exactly in P', () => {
    const parkedFirst = { ...valid, speed: [{ t: 0, kmh: 0 }, { t: 20, kmh: 0 }, { t: 30, kmh: 36 }, { t: 100, kmh: 36 }], gear: [{ t: 0, gear: 'N' }, { t: 20, gear: 'D' }] };
    const braked = loadScenario(writeScenario('braked', { ...parkedFirst, parkingBrake: [{ t: 0, engaged: true }, { t: 15, engaged: false }] }));
    expect([0, 14, 15, 50].map((t) => braked.stateAt(t).vehicle.parkingBrake)).toEqual([true, true, false, false]);
    const automatic = loadScenario('urban');
    expect([0, 100, 595].map((t) => automatic.stateAt(t).vehicle.parkingBrake)).toEqual([true, false, true]);
  });
});

describe('scenario validation errors name the file, the line and the field', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['missing field', { ...valid, durationS: undefined }, /missing-field\.yaml:1: durationS: missing required field "durationS" \(expected number\) in the top-level mapping at line 1/],
    ['bad time', { ...valid, start: { date: '2026-03-28', time: '25:00' } }, /bad-time\.yaml:\d+: start\.time: expected a time as HH:MM or HH:MM:SS/],
    ['bad date', { ...valid, start: { date: '2026-02-30x', time: '10:00' } }, /bad-date\.yaml:\d+: start\.date: date "2026-02-30x" is not a calendar date: expected a date as YYYY-MM-DD/],
    ['no such day', { ...valid, start: { date: '2026-02-30', time: '10:00' } }, /no-such-day\.yaml:\d+: start\.date: date "2026-02-30" is not a calendar date/],
    ['speed out of physics', { ...valid, speed: [{ t: 0, kmh: 0 }, { t: 10, kmh: 1e308 }] }, /speed-out-of-physics\.yaml:\d+: speed\.1\.kmh: speed 1e308 km\/h is out of range 0–300 km\/h/],
    ['charge out of physics', { ...valid, battery: { ...valid.battery, startSocPct: 140 } }, /charge-out-of-physics\.yaml:\d+: battery\.startSocPct: state of charge 140 % is out of range 0–100 %/],
    ['temperature out of physics', { ...valid, climate: { outsideTempC: 99, hvacSetpointC: 21 } }, /temperature-out-of-physics\.yaml:\d+: climate\.outsideTempC: outside temperature 99 °C is out of range -50 to 60 °C/],
    ['position out of physics', { ...valid, route: [{ district: 'A', lat: 48, lon: 200 }] }, /position-out-of-physics\.yaml:\d+: route\.0\.lon: longitude 200 ° is out of range -180 to 180 °/],
    ['times not increasing', { ...valid, speed: [{ t: 0, kmh: 0 }, { t: 10, kmh: 5 }, { t: 10, kmh: 6 }] }, /times-not-increasing\.yaml:\d+: speed\.2\.t: expected t after 10/],
    ['first point not at 0', { ...valid, gear: [{ t: 2, gear: 'D' }] }, /first-point-not-at-0\.yaml:\d+: gear\.0\.t: expected the first point at t = 0/],
    ['moving in P', { ...valid, gear: [{ t: 0, gear: 'P' }, { t: 20, gear: 'D' }] }, /moving-in-p\.yaml:\d+: gear\.0: gear P from t=0 s, but the speed profile is 36 km\/h at t=10 s/],
    ['moving with the parking brake', { ...valid, parkingBrake: [{ t: 0, engaged: true }, { t: 50, engaged: false }] }, /moving-with-the-parking-brake\.yaml:\d+: parkingBrake\.0: engaged from t=0 s, but the speed profile is 36 km\/h at t=10 s/],
    ['route too short', { ...valid, durationS: 1000 }, /route-too-short\.yaml:\d+: route: 2\.22 km long, but the speed profile drives 9\.95 km in 1000 s/],
    ['battery runs out', { ...valid, battery: { ...valid.battery, startSocPct: 0.1 } }, /battery-runs-out\.yaml:\d+: battery: the drive uses 0\.2 kWh/],
    ['unknown gear', { ...valid, gear: [{ t: 0, gear: 'X' }] }, /unknown-gear\.yaml:\d+: gear\.0\.gear: gear "X" is not a gear: expected one of P, R, N, D/],
  ];
  for (const [label, content, pattern] of cases) {
    it(label, () => {
      const path = writeScenario(label.replace(/ /g, '-').toLowerCase(), content);
      expect(() => loadScenario(path)).toThrow(pattern);
    });
  }

  it('reports YAML syntax errors and unknown names', () => {
    expect(() => loadScenario(writeScenario('broken', 'name: [unclosed'))).toThrow(/broken\.yaml:1:\d+: invalid YAML/);
    expect(() => loadScenario('no-such-scenario')).toThrow(/no-such-scenario\.yaml: cannot read the drive scenario \(no such file\)/);
  });
});
