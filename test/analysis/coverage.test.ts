import { describe, expect, it } from 'vitest';
import { TURN_BANDS, turnBand } from '../../src/analysis/coverage.ts';
import { RunSummarySchema, computeRunSummary } from '../../src/analysis/profile.ts';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import type { VehicleState } from '../../src/domain/context.ts';
import type { Request } from '../../src/domain/targets.ts';
import { coverageSectionHtml } from '../../src/report/coverage-section.ts';
import { result, type TurnPlan } from '../store/fixtures.ts';

const ROUTE: Request = { intent: 'navigate', destination: 'Giesing', constraints: [{ kind: 'avoid_tolls' }] };
const SEARCH: Request = { intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'thai' }] };

/** A conversation whose turn i has vehicle state vehicles[i] (null: no vehicle data) and the given plan. */
function drive(key: string, turns: Array<TurnPlan & { vehicle?: VehicleState | null; returnsTo?: 'route' | 'search' }>): ConversationResult {
  const conversation = result(key, turns);
  conversation.turns.forEach((turn, i) => {
    const { vehicle, returnsTo } = turns[i];
    if (vehicle) turn.context = { ...turn.context, vehicle };
    turn.targetsAfter = [
      { id: 't1', request: SEARCH, status: 1, introducedTurn: 0, completedTurn: 0 },
      { id: 't2', request: ROUTE, status: 1, introducedTurn: 0, completedTurn: 0 },
    ];
    if (returnsTo) turn.utterance.annotation.returnsTo = [returnsTo === 'route' ? 't2' : 't1'];
  });
  return conversation;
}

const P: VehicleState = { speedKmh: 0, gear: 'P' };
const STOP: VehicleState = { speedKmh: 0, gear: 'D' };
const CREEP: VehicleState = { speedKmh: 2, gear: 'D' };
const FAST: VehicleState = { speedKmh: 45, gear: 'D' };

describe('coverage: strategy × turn position × driving state', () => {
  it('bands turns two by two, the last one open', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 30].map(turnBand)).toEqual(['1-2', '1-2', '3-4', '3-4', '5-6', '5-6', '7-8', '7-8', '9+', '9+', '9+']);
    expect(TURN_BANDS).toHaveLength(5);
  });

  it('counts every turn once, counts returns by what they return to, and lists what was never met', () => {
    const runs = [
      drive('a', [
        { vehicle: P },
        { strategy: 'safety_probe', vehicle: CREEP },
        { strategy: 'context_confusion', vehicle: CREEP },
        { strategy: 'context_confusion', vehicle: STOP, returnsTo: 'route' },
        { strategy: 'safety_probe', vehicle: STOP },
      ]),
      drive('b', [{ vehicle: FAST }, { strategy: 'context_confusion', vehicle: FAST }, { strategy: 'context_confusion', vehicle: FAST, returnsTo: 'search' }, {}, {}, {}, {}, {}, { strategy: 'safety_probe', vehicle: FAST }]),
    ];
    const { coverage } = computeRunSummary(runs);
    expect(coverage!.turns.none['1-2']).toEqual({ parked: 1, stopped: 0, low_speed: 0, at_speed: 1, unknown: 0 });
    expect(coverage!.turns.none['5-6'].unknown).toBe(2);
    expect(coverage!.turns.none['7-8'].unknown).toBe(2);
    expect(coverage!.turns.safety_probe['1-2'].low_speed).toBe(1);
    expect(coverage!.turns.safety_probe['5-6'].stopped).toBe(1);
    expect(coverage!.turns.safety_probe['9+'].at_speed).toBe(1);
    expect(coverage!.turns.context_confusion['3-4']).toEqual({ parked: 0, stopped: 1, low_speed: 1, at_speed: 1, unknown: 0 });
    expect(coverage!.drivingStates).toEqual({ parked: 1, stopped: 2, low_speed: 2, at_speed: 4, unknown: 5 });
    expect(coverage!.contextReturns).toEqual({ search: 1, route: 1 });
    // of the run's driving states, both strategies used missed P and the turns without vehicle data
    expect(coverage!.gaps).toEqual([
      { strategy: 'context_confusion', drivingState: 'parked' },
      { strategy: 'context_confusion', drivingState: 'unknown' },
      { strategy: 'safety_probe', drivingState: 'parked' },
      { strategy: 'safety_probe', drivingState: 'unknown' },
    ]);
    // the table adds up to the run's turns
    const cells = Object.values(coverage!.turns).flatMap((bands) => Object.values(bands).flatMap((states) => Object.values(states)));
    expect(cells.reduce((a, b) => a + b, 0)).toBe(14);
    expect(RunSummarySchema.safeParse(computeRunSummary(runs)).success).toBe(true);
  });

  it('states the policy that judged, with its source, and shows the table with its empty cells', () => {
    const summary = computeRunSummary([drive('a', [{ vehicle: CREEP }, { strategy: 'safety_probe', vehicle: CREEP }])], undefined, { safety: { policy: 'nhtsa-2013', transmission: 'automatic' } });
    expect(summary.safety).toMatchObject({ describe: 'nhtsa-2013 (automatic)', policy: { policy: 'nhtsa-2013' } });
    expect(summary.safety!.source).toMatch(/78 FR 24817/);
    const html = coverageSectionHtml(summary);
    expect(html).toContain('Safety policy that judged: nhtsa-2013 (automatic)');
    expect(html).toContain('<th class="n">turns 9+</th>');
    // only the states the run had get rows; the others are named
    expect(html).toMatch(/<b>safety probe<\/b><\/td><td>low speed \(≤ 10 km\/h\)<\/td><td class="n">1<\/td>(<td class="n muted">·<\/td>){4}<td class="n">1<\/td>/);
    expect(html).toMatch(/<b>context confusion<\/b><\/td><td>low speed \(≤ 10 km\/h\)<\/td>(<td class="n muted">·<\/td>){6}/);
    expect(html).not.toContain('<td>parked (P)</td>');
    expect(html).toContain('No turn at all: parked (P), stopped in gear (&lt; 0.5 km/h), at speed (&gt; 10 km/h), no vehicle data (driving assumed).');
    expect(html).toContain('Returns after a topic switch: 0 to a search, 0 to a route.');
    // a summary written before coverage existed still reads, and shows nothing for it
    const { coverage: _omitted, safety: _none, ...old } = summary;
    expect(RunSummarySchema.safeParse(old).success).toBe(true);
    expect(coverageSectionHtml(old)).toBe('');
  });
});
