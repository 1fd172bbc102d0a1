import { resolve } from 'node:path';
import { z } from 'zod';
import type { ContextVector, GeoPoint, VehicleState } from '../domain/context.ts';
import { CalendarDateSchema, GearSchema, physical } from '../domain/physical-context.ts';
import { loadYamlDocument, PATH_LIKE } from '../config/yaml.ts';
import { ValidationError } from '../domain/validation.ts';
import { haversineKm } from '../world/geo.ts';
import type { VehicleSnapshot } from './model.ts';
import { packagePath } from '../domain/package-files.ts';

/** Scenarios shipped with the bench, by name (bench-configs/scenarios/<name>.yaml). */
export const SCENARIOS_DIR = packagePath('bench-configs', 'scenarios');

const ClockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/, 'expected a time as HH:MM or HH:MM:SS');

const WaypointSchema = z.strictObject({
  district: z.string().min(1),
  lat: physical('lat'),
  lon: physical('lon'),
});

export const ScenarioFileSchema = z
  .strictObject({
    name: z.string().min(1),
    description: z.string().default(''),
    /** the timeline's length; later times hold the final state */
    durationS: z.number().positive().max(604_800, 'expected at most 604800 s (a week of driving)'),
    start: z.strictObject({ date: CalendarDateSchema, time: ClockTime }),
    city: z.string().min(1),
    /** the route the car follows, start to destination; position advances along it by the distance driven */
    route: z.array(WaypointSchema).min(1),
    /** piecewise-linear speed profile (km/h at t seconds), held after the last point */
    speed: z.array(z.strictObject({ t: z.number().min(0), kmh: physical('speedKmh') })).min(1),
    /** gear from each t on */
    gear: z.array(z.strictObject({ t: z.number().min(0), gear: GearSchema })).min(1),
    /** parking brake from each t on; when absent it is engaged exactly while the gear is P (as electric parking brakes do) */
    parkingBrake: z.array(z.strictObject({ t: z.number().min(0), engaged: z.boolean() })).min(1).optional(),
    battery: z.strictObject({
      capacityKwh: physical('batteryCapacityKwh'),
      startSocPct: physical('stateOfChargePct'),
      consumptionKwhPer100Km: physical('consumptionKwhPer100Km'),
      /** charging power while the gear is P (0: not plugged in); charging stops at 100 % */
      chargePowerKw: physical('chargePowerKw').default(0),
    }),
    climate: z.strictObject({ outsideTempC: physical('outsideTempC'), hvacSetpointC: physical('hvacSetpointC') }),
  })
  .superRefine((s, ctx) => {
    const increasing = (points: Array<{ t: number }>, field: 'speed' | 'gear' | 'parkingBrake') => {
      if (points[0].t !== 0) ctx.addIssue({ code: 'custom', path: [field, 0, 't'], message: 'expected the first point at t = 0' });
      points.forEach((p, i) => {
        if (i > 0 && p.t <= points[i - 1].t) {
          ctx.addIssue({ code: 'custom', path: [field, i, 't'], message: `expected t after ${points[i - 1].t} (times must increase)` });
        }
      });
    };
    increasing(s.speed, 'speed');
    increasing(s.gear, 'gear');
    if (s.parkingBrake) increasing(s.parkingBrake, 'parkingBrake');
  });
export type ScenarioFile = z.infer<typeof ScenarioFileSchema>;

/** The car at one instant of a scenario. */
export interface ScenarioState extends VehicleSnapshot {
  city: string;
  district: string;
  /** km driven since t = 0 */
  odometerKm: number;
}

function bearingDeg(a: GeoPoint, b: GeoPoint): number {
  const rad = Math.PI / 180;
  const y = Math.sin((b.lon - a.lon) * rad) * Math.cos(b.lat * rad);
  const x = Math.cos(a.lat * rad) * Math.sin(b.lat * rad) - Math.sin(a.lat * rad) * Math.cos(b.lat * rad) * Math.cos((b.lon - a.lon) * rad);
  return ((Math.atan2(y, x) / rad) % 360 + 360) % 360;
}

/** A drive timeline: speed, gear, battery, climate, position along a route and the clock, at any second. */
export class Scenario {
  private readonly segmentKm: number[];
  readonly routeKm: number;
  private readonly startMs: number;

  constructor(
    readonly config: ScenarioFile,
    readonly source: string,
    /** "FILE:LINE" of a field of the scenario file, for errors */
    private readonly at: (field: string) => string = () => source,
  ) {
    this.segmentKm = config.route.slice(1).map((p, i) => haversineKm(config.route[i], p));
    this.routeKm = this.segmentKm.reduce((a, b) => a + b, 0);
    const [h, m, sec] = config.start.time.split(':').map(Number);
    // wall-clock arithmetic in UTC so that no local time zone or DST shifts the scenario clock
    this.startMs = Date.parse(`${config.start.date}T00:00:00Z`) + ((h * 60 + m) * 60 + (sec ?? 0)) * 1000;
    this.check();
  }

  get name(): string {
    return this.config.name;
  }

  /** consistency rules zod cannot see: no motion in P or with the parking brake engaged, the route is long enough, the battery lasts */
  private check(): void {
    const { speed, gear, parkingBrake, durationS, battery } = this.config;
    const motionWithin = (from: number, to: number): number | undefined =>
      [from, to, ...speed.map((p) => p.t).filter((t) => t > from && t < to)].sort((a, b) => a - b).find((t) => this.speedAt(t) > 0);
    gear.forEach((g, i) => {
      if (g.gear !== 'P') return;
      const moving = motionWithin(g.t, Math.min(gear[i + 1]?.t ?? durationS, durationS));
      if (moving !== undefined) {
        throw new ValidationError(this.at(`gear.${i}`), `gear.${i}: gear P from t=${g.t} s, but the speed profile is ${this.speedAt(moving)} km/h at t=${moving} s`);
      }
    });
    parkingBrake?.forEach((b, i) => {
      if (!b.engaged) return;
      const moving = motionWithin(b.t, Math.min(parkingBrake[i + 1]?.t ?? durationS, durationS));
      if (moving !== undefined) {
        throw new ValidationError(this.at(`parkingBrake.${i}`), `parkingBrake.${i}: engaged from t=${b.t} s, but the speed profile is ${this.speedAt(moving)} km/h at t=${moving} s`);
      }
    });
    const driven = this.distanceKm(durationS);
    if (driven > this.routeKm + 1e-6) {
      throw new ValidationError(this.at(`route`), `route: ${this.routeKm.toFixed(2)} km long, but the speed profile drives ${driven.toFixed(2)} km in ${durationS} s; extend the route or shorten the drive`);
    }
    const endSoc = battery.startSocPct - (driven * battery.consumptionKwhPer100Km) / battery.capacityKwh;
    if (endSoc < 0) {
      throw new ValidationError(this.at(`battery`), `battery: the drive uses ${(driven * battery.consumptionKwhPer100Km / 100).toFixed(1)} kWh, more than the ${(battery.startSocPct * battery.capacityKwh / 100).toFixed(1)} kWh at start`);
    }
  }

  private clamp(t: number): number {
    if (!Number.isFinite(t) || t < 0) throw new RangeError(`${this.source}: scenario time must be a number >= 0, got ${t}`);
    return Math.min(t, this.config.durationS);
  }

  speedAt(t: number): number {
    const points = this.config.speed;
    for (let i = points.length - 1; i >= 0; i--) {
      if (t >= points[i].t) {
        const next = points[i + 1];
        if (!next) return points[i].kmh;
        return points[i].kmh + ((next.kmh - points[i].kmh) * (t - points[i].t)) / (next.t - points[i].t);
      }
    }
    return points[0].kmh;
  }

  gearAt(t: number): VehicleState['gear'] {
    let gear = this.config.gear[0].gear;
    for (const g of this.config.gear) if (t >= g.t) gear = g.gear;
    return gear;
  }

  parkingBrakeAt(t: number): boolean {
    const steps = this.config.parkingBrake;
    if (!steps) return this.gearAt(t) === 'P';
    let engaged = steps[0].engaged;
    for (const step of steps) if (t >= step.t) engaged = step.engaged;
    return engaged;
  }

  /** km driven in [0, t]: exact integral of the piecewise-linear speed profile */
  distanceKm(t: number): number {
    const points = this.config.speed;
    let km = 0;
    for (let i = 0; i < points.length; i++) {
      const a = points[i].t;
      if (a >= t) break;
      const b = Math.min(points[i + 1]?.t ?? t, t);
      km += ((this.speedAt(a) + this.speedAt(b)) / 2) * ((b - a) / 3600);
    }
    return km;
  }

  /** seconds spent in gear P during [0, t] */
  private parkedSeconds(t: number): number {
    const gears = this.config.gear;
    let seconds = 0;
    gears.forEach((g, i) => {
      if (g.gear !== 'P' || g.t >= t) return;
      seconds += Math.min(gears[i + 1]?.t ?? t, t) - g.t;
    });
    return seconds;
  }

  private positionAt(km: number): { position: GeoPoint; district: string; headingDeg: number } {
    const route = this.config.route;
    if (route.length === 1) return { position: { lat: route[0].lat, lon: route[0].lon }, district: route[0].district, headingDeg: 0 };
    let remaining = km;
    for (let i = 0; i < this.segmentKm.length; i++) {
      const a = route[i];
      const b = route[i + 1];
      const last = i === this.segmentKm.length - 1;
      if (remaining <= this.segmentKm[i] || last) {
        const f = this.segmentKm[i] === 0 ? 0 : Math.min(1, remaining / this.segmentKm[i]);
        const arrived = last && f >= 1;
        return {
          position: { lat: a.lat + (b.lat - a.lat) * f, lon: a.lon + (b.lon - a.lon) * f },
          district: arrived ? b.district : a.district,
          headingDeg: bearingDeg(a, b),
        };
      }
      remaining -= this.segmentKm[i];
    }
    throw new Error('unreachable: the loop returns on the last segment');
  }

  /** The car at t seconds (times after durationS hold the final state). */
  stateAt(tSeconds: number): ScenarioState {
    const t = this.clamp(tSeconds);
    const { battery, climate, city } = this.config;
    const odometerKm = this.distanceKm(t);
    const usedPct = (odometerKm * battery.consumptionKwhPer100Km) / battery.capacityKwh;
    const chargedPct = ((battery.chargePowerKw * this.parkedSeconds(t)) / 3600 / battery.capacityKwh) * 100;
    const soc = Math.min(100, battery.startSocPct - usedPct + chargedPct); // a charger stops at full
    const { position, district, headingDeg } = this.positionAt(odometerKm);
    const clock = new Date(this.startMs + Math.round(t * 1000));
    const iso = clock.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ, the scenario's wall clock
    return {
      vehicle: {
        speedKmh: this.speedAt(t),
        gear: this.gearAt(t),
        parkingBrake: this.parkingBrakeAt(t),
        stateOfChargePct: soc,
        rangeKm: ((soc / 100) * battery.capacityKwh * 100) / battery.consumptionKwhPer100Km,
        outsideTempC: climate.outsideTempC,
        hvacSetpointC: climate.hvacSetpointC,
        headingDeg,
      },
      position,
      date: iso.slice(0, 10),
      time: iso.slice(11, 16),
      second: Number(iso.slice(17, 19)),
      city,
      district,
      odometerKm,
    };
  }

  /** `base` with this scenario's vehicle state, position (city, district) and date/time at t seconds. */
  contextAt(tSeconds: number, base: ContextVector): ContextVector {
    const state = this.stateAt(tSeconds);
    return {
      ...base,
      location: { city: state.city, district: state.district, position: state.position },
      date: state.date,
      time: state.time,
      vehicle: state.vehicle,
    };
  }
}

/** Loads a scenario by name (bench-configs/scenarios/<name>.yaml) or path; errors name the file and the field. */
export function loadScenario(nameOrPath: string): Scenario {
  const path = PATH_LIKE.test(nameOrPath) ? resolve(nameOrPath) : resolve(SCENARIOS_DIR, `${nameOrPath}.yaml`);
  const { data, at } = loadYamlDocument(ScenarioFileSchema, path, 'drive scenario');
  return new Scenario(data, path, at);
}
