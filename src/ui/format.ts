import { PHYSICAL_RANGES, type PhysicalQuantity } from '../domain/physical-context.ts';

/** The digits a car's reading is shown with: what its sensor resolves, not what the simulation's arithmetic produced (60.9 %, not 60.93123333333333 %). */
const DIGITS: Partial<Record<PhysicalQuantity, number>> = { speedKmh: 0, stateOfChargePct: 1, rangeKm: 0, outsideTempC: 1, hvacSetpointC: 1, headingDeg: 0 };

/** A reading as its digits show it, without a unit ("60.9"; a whole value without ".0"). */
export function readingValue(quantity: PhysicalQuantity, value: number): string {
  return String(Number(value.toFixed(DIGITS[quantity] ?? 2)));
}

/** A reading with its unit: "60.9 %", "30 km/h". */
export function reading(quantity: PhysicalQuantity, value: number): string {
  return `${readingValue(quantity, value)} ${PHYSICAL_RANGES[quantity].unit}`;
}
