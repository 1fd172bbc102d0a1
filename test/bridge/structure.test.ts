import { describe, expect, it } from 'vitest';
import { bridgeStructureLimits, checkStructure } from '../../src/protocol/structure.ts';
import { nestedArray } from './helpers.ts';

const limits = { maxDepth: 4, maxEntries: 10, maxStringChars: 8 };

describe('checkStructure (iterative)', () => {
  it('accepts a value exactly at each limit and refuses one step beyond', () => {
    expect(checkStructure(nestedArray(4), limits)).toBeNull();
    expect(checkStructure(nestedArray(5), limits)).toMatchObject({ limit: 'maxDepth', code: 'invalid_message' });
    expect(checkStructure({ a: { b: { c: { d: 1 } } } }, limits)).toBeNull();
    expect(checkStructure({ a: { b: { c: { d: { e: 1 } } } } }, limits)?.message).toBe('nested deeper than 4 levels');

    expect(checkStructure(Array.from({ length: 10 }, () => 1), limits)).toBeNull();
    expect(checkStructure(Array.from({ length: 11 }, () => 1), limits)).toMatchObject({ limit: 'maxEntries', code: 'too_large' });
    // keys and elements count together over the whole value
    expect(checkStructure({ a: [1, 2, 3, 4], b: [1, 2, 3, 4] }, limits)).toBeNull();
    expect(checkStructure({ a: [1, 2, 3, 4], b: [1, 2, 3, 4, 5] }, limits)?.limit).toBe('maxEntries');

    expect(checkStructure({ text: '12345678' }, limits)).toBeNull();
    expect(checkStructure({ text: '123456789' }, limits)).toMatchObject({ limit: 'maxStringChars', code: 'too_large' });
    expect(checkStructure({ '123456789': 1 }, limits)?.limit).toBe('maxStringChars');
    expect(checkStructure('123456789', limits)?.limit).toBe('maxStringChars');
  });

  it('treats binary parts as leaves whatever their size', () => {
    expect(checkStructure({ data: Buffer.alloc(10_000) }, limits)).toBeNull();
    expect(checkStructure({ data: new ArrayBuffer(10_000) }, limits)).toBeNull();
    expect(checkStructure({ data: new Uint16Array(5_000) }, limits)).toBeNull();
  });

  it('walks 1,000,000 levels without recursion and stops at the first level beyond the limit', () => {
    const deep = nestedArray(1_000_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(checkStructure(deep, bridgeStructureLimits(256 * 1024))).toMatchObject({ limit: 'maxDepth' });
    const deepObject = JSON.parse(`${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`);
    expect(checkStructure(deepObject, bridgeStructureLimits(256 * 1024))?.limit).toBe('maxDepth');
  });

  it('lets every message the reference head unit sends through the bridge limits', () => {
    const reply = {
      sessionId: 's',
      turn: 0,
      text: 'x',
      actions: [{ type: 'trip_plan', stops: [{ poi: { id: 'p', openingHours: { monday: '08:00-20:00' }, position: { lat: 1, lon: 2 } }, eta: '12:00' }] }],
      state: { route: { via: [{ name: 'a' }] } },
    };
    expect(checkStructure(reply, bridgeStructureLimits(256 * 1024))).toBeNull();
  });
});
