import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('the live-session API keeps the car within physics', () => {
  it('refuses a session that starts outside physics with 400, naming the value, the field and the range', async () => {
    const res = await h.api('/api/session/start', { body: { config: { context: { vehicle: { speedKmh: 1e308, gear: 'D' }, time: '24:00' } } } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_config');
    expect(res.json.error.message).toContain('context.vehicle.speedKmh: speed 1e308 km/h is out of range 0–300 km/h');
    expect(res.json.error.fields).toEqual(
      expect.arrayContaining([
        { path: 'context.vehicle.speedKmh', message: 'speed 1e308 km/h is out of range 0–300 km/h' },
        { path: 'context.time', message: 'time "24:00" is not a time of day: expected HH:MM from 00:00 to 23:59' },
      ]),
    );
    expect((await h.api('/api/session')).json.active).toBe(false);
  });

  it('refuses a context change outside physics with 400 and keeps the state; a change within it applies', async () => {
    const started = await h.api('/api/session/start', { body: { config: { name: 'physics' } } });
    expect(started.status).toBe(202);
    try {
      const refused = await h.api('/api/session/context', { body: { change: { vehicle: { speedKmh: 1e308, gear: 'Q' }, position: { lat: -91, lon: 11 } } } });
      expect(refused.status).toBe(400);
      expect(refused.json.error.message).toBe(
        'context: position.lat: latitude -91 ° is out of range -90 to 90 °; vehicle.speedKmh: speed 1e308 km/h is out of range 0–300 km/h; vehicle.gear: gear "Q" is not a gear: expected one of P, R, N, D',
      );
      expect(refused.json.error.fields.map((f: { path: string }) => f.path)).toEqual(['position.lat', 'vehicle.speedKmh', 'vehicle.gear']);
      expect((await h.api('/api/session')).json.context.vehicle).toEqual({ speedKmh: 0, gear: 'P' });
      const applied = await h.api('/api/session/context', { body: { change: { vehicle: { speedKmh: 120, gear: 'D', stateOfChargePct: 35 } } } });
      expect(applied.status).toBe(200);
      expect(applied.json.context.vehicle).toEqual({ speedKmh: 120, gear: 'D', stateOfChargePct: 35 });
    } finally {
      expect((await h.api('/api/session/end', { body: {} })).status).toBe(200);
    }
  });
});

describe('the live-session API refuses a start it cannot give', () => {
  it('an unknown district is a 400 naming the field and the accepted districts, and no session starts', async () => {
    const res = await h.api('/api/session/start', { body: { config: { context: { district: 'Atlantis' } } } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_config');
    expect(res.json.error.message).toMatch(/^context\.district: "Atlantis" is not a district of the reference world \(.*Schwabing.*Maxvorstadt.*\)/);
    expect(res.json.error.fields).toEqual([{ path: 'context.district', message: expect.stringContaining('Maxvorstadt') }]);
    expect((await h.api('/api/session')).json.active).toBe(false);
  });
});
