import { describeHeadUnit, HeadUnitConfigSchema, injectedFaults } from '../../run/headunit-config.ts';
import type { UnitUnderTest } from '../../report/dialogue-first-screen.ts';

/**
 * What a run of conversations (dialogue, suite, live session) stored of its head unit, for its report's first screen:
 * the unit as its config names it, and the faults the reference unit was told to commit on purpose.
 */
export function unitUnderTest(storedConfig: unknown): UnitUnderTest {
  const headUnit = HeadUnitConfigSchema.safeParse((storedConfig as { headUnit?: unknown } | null)?.headUnit ?? { type: 'reference' });
  if (!headUnit.success) return { unit: 'not recorded with the run', faults: null };
  return { unit: describeHeadUnit(headUnit.data), faults: injectedFaults(headUnit.data) };
}
