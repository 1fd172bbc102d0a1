import type { GeoPoint } from '../domain/context.ts';

const EARTH_RADIUS_KM = 6371.0088;

export function haversineKm(a: GeoPoint, b: GeoPoint): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * The bench's road model: roads are longer than the straight line (detour factor) and
 * urban driving is slower than highway driving. Deterministic, so drive times are reproducible.
 */
export interface RoadEstimate {
  distanceKm: number;
  durationMin: number;
  highway: boolean;
}

export const ROAD_DETOUR_FACTOR = 1.3;
export const URBAN_SPEED_KMH = 28;
export const HIGHWAY_SPEED_KMH = 90;
/** Trips longer than this use a highway for the middle part unless highways are avoided. */
export const HIGHWAY_THRESHOLD_KM = 8;

export function estimateDrive(from: GeoPoint, to: GeoPoint, options: { avoidHighways?: boolean } = {}): RoadEstimate {
  const distanceKm = haversineKm(from, to) * ROAD_DETOUR_FACTOR;
  if (options.avoidHighways || distanceKm <= HIGHWAY_THRESHOLD_KM) {
    return { distanceKm, durationMin: (distanceKm / URBAN_SPEED_KMH) * 60, highway: false };
  }
  const urbanKm = HIGHWAY_THRESHOLD_KM;
  const highwayKm = distanceKm - urbanKm;
  return { distanceKm, durationMin: (urbanKm / URBAN_SPEED_KMH + highwayKm / HIGHWAY_SPEED_KMH) * 60, highway: true };
}
