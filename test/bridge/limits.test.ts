import { describe, expect, it } from 'vitest';
import { payloadBytes, RateLimiter, transportCapBytes } from '../../src/bridge/limits.ts';

describe('RateLimiter', () => {
  it('allows a burst up to the rate, refuses beyond it and refills with time', () => {
    let now = 0;
    const limiter = new RateLimiter(5, () => now);
    const burst = Array.from({ length: 7 }, () => limiter.tryTake());
    expect(burst).toEqual([true, true, true, true, true, false, false]);
    now += 200; // one token back at 5 per second
    expect(limiter.tryTake()).toBe(true);
    expect(limiter.tryTake()).toBe(false);
    now += 10_000; // refill is capped at one second's worth
    expect(Array.from({ length: 6 }, () => limiter.tryTake()).filter(Boolean)).toHaveLength(5);
  });
});

describe('payloadBytes', () => {
  it('counts JSON as UTF-8 bytes and binary parts by length', () => {
    expect(payloadBytes({ text: 'ab' })).toBe(Buffer.byteLength('{"text":"ab"}'));
    expect(payloadBytes({ text: 'ä' })).toBe(Buffer.byteLength('{"text":"ä"}'));
    expect(payloadBytes(Buffer.alloc(1000))).toBe(1000);
    // the buffer counts as its 1000 bytes, not as a JSON array of numbers
    expect(payloadBytes({ chunk: Buffer.alloc(1000) })).toBe(1000 + Buffer.byteLength('{"chunk":null}'));
    expect(payloadBytes(undefined)).toBe(0);
  });

  it('keeps the transport cap above the message limit', () => {
    expect(transportCapBytes(1024)).toBeGreaterThan(1024);
  });
});
