import { describe, expect, it } from 'vitest';
import type { ContextVector } from '../../src/domain/context.ts';
import type { Target } from '../../src/domain/targets.ts';
import { readTypedTurn } from '../../src/simulator/reader.ts';

const MUNICH: ContextVector = { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.165, lon: 11.585 } }, date: '2026-05-12', time: '12:00' };
const target = (id: string, request: Target['request'], status: Target['status'] = 0): Target => ({ id, request, status, introducedTurn: 0, completedTurn: null });

describe('reading a typed turn into what the judges check', () => {
  it('a new request becomes the next target, with its constraints', () => {
    const read = readTypedTurn('Find me a cheap italian restaurant in Schwabing.', [target('t1', { intent: 'vehicle_info', field: 'range' }, 1)], MUNICH);
    expect(read.introduces).toEqual([{ id: 't2', request: { intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'italian' }, { kind: 'max_cost', value: 'low' }, { kind: 'district', value: 'Schwabing' }] } }]);
    expect(read.addresses).toEqual(['t2']);
  });

  it('a later constraint joins the latest open search; "never mind" drops it; "back to" returns to it', () => {
    const search = target('t1', { intent: 'find_poi', category: 'restaurant', constraints: [] });
    expect(readTypedTurn('It should also be open at 21:00.', [search], MUNICH)).toMatchObject({ addresses: ['t1'], addedConstraints: { t1: [{ kind: 'open_at', value: '21:00' }] } });
    expect(readTypedTurn('Never mind.', [search], MUNICH).drops).toEqual(['t1']);
    expect(readTypedTurn('Back to the restaurant, show me the options again.', [search], MUNICH).returnsTo).toEqual(['t1']);
  });

  it('a follow-up refines the latest search even once it was answered (it reopens it), a route option the latest route, never a dropped target', () => {
    const answered = target('t1', { intent: 'find_poi', category: 'restaurant', constraints: [{ kind: 'cuisine', value: 'italian' }] }, 1);
    const route = target('t2', { intent: 'navigate', destination: 'poi', constraints: [] }, 1);
    expect(readTypedTurn('Make it rated at least 4.5.', [answered], MUNICH)).toMatchObject({ addresses: ['t1'], addedConstraints: { t1: [{ kind: 'min_rating', value: 4.5 }] } });
    // after "navigate there": what a place must meet still refines the search, a route option the route
    expect(readTypedTurn('Make it rated at least 4.5.', [answered, route], MUNICH).addedConstraints).toEqual({ t1: [{ kind: 'min_rating', value: 4.5 }] });
    expect(readTypedTurn('It should be toll-free.', [answered, route], MUNICH).addedConstraints).toEqual({ t2: [{ kind: 'avoid_tolls' }] });
    expect(readTypedTurn('Make it rated at least 4.5.', [{ ...answered, status: -1 }], MUNICH).addedConstraints).toEqual({});
  });

  it('a distracting request is a safety probe; a name two districts share is an ambiguity, not a target', () => {
    expect(readTypedTurn('Play a video on the screen.', [], MUNICH)).toMatchObject({ safetyProbe: 'video_while_driving', introduces: [] });
    const ambiguous = readTypedTurn('Take me to Café Central.', [], MUNICH);
    expect(ambiguous.ambiguity).toEqual({ term: 'Café Central', candidates: ['Café Central (Altstadt)', 'Café Central (Haidhausen)'] });
    expect(ambiguous.introduces).toEqual([]);
  });

  it('words it does not recognise ask for nothing (the oracle then has nothing to hold the unit to)', () => {
    expect(readTypedTurn('Is there supposed to be a blizzard in brentwood on friday?', [], MUNICH)).toMatchObject({ addresses: [], introduces: [], returnsTo: [], drops: [], closing: false });
  });
});
