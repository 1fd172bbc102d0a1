/** The wire schemas of the context vector live in the bridge SDK (one source for the bench and head units). */
export {
  ContextVectorSchema,
  GeoPointSchema,
  HHMM,
  ISODate,
  VehicleStateSchema,
  type ContextVector,
  type GeoPoint,
  type VehicleState,
} from '../../packages/bridge-sdk/src/protocol/context.ts';

export function minutesOfDay(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h * 60 + m;
}

export function formatMinutes(total: number): string {
  const wrapped = ((Math.round(total) % 1440) + 1440) % 1440;
  const h = Math.floor(wrapped / 60);
  const m = wrapped % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
}
