import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { SharedSlotGate } from '../llm/limiter.ts';

const KEY_PREFIX = 'icabench:fleet:slots:';

/** Takes a slot when fewer than max are held; expired holders (a killed worker) are dropped first. Redis's clock decides. */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ttl * 2)
  return 1
end
return 0`;

/** Extends a held slot; 0 when it was lost (expired meanwhile). */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local updated = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + ttl, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return updated`;

/**
 * The model hosts' concurrency limits across the whole fleet: one sorted set of slot holders per
 * host in Redis, at most the tier's `maxConcurrent` at once whichever worker asks. A holder renews
 * its slot while the call runs; a worker that dies frees its slots when they expire (slotTtlMs).
 * Waiting calls poll with a short random back-off (no FIFO order across workers); a slot this process frees wakes
 * one of its own waiters at once, so a worker's queued calls (pipelined turns) refill the host without the back-off.
 */
export class RedisHostLimiter implements SharedSlotGate {
  private readonly owner = randomBytes(6).toString('hex');
  private counter = 0;
  private peak = 0;
  private active = 0;
  /** per host, this process's calls waiting for a slot (wake one to retry now) */
  private readonly napping = new Map<string, Set<() => void>>();

  constructor(
    private readonly redis: Redis,
    private readonly slotTtlMs = 30_000,
  ) {}

  /** the most calls this process held slots for at once */
  get peakInFlight(): number {
    return this.peak;
  }

  async run<T>(endpoint: string, maxConcurrent: number, task: () => Promise<T>): Promise<T> {
    const key = KEY_PREFIX + endpoint;
    const token = `${this.owner}:${this.counter++}`;
    let wait = 5;
    while ((await this.redis.eval(ACQUIRE, 1, key, this.slotTtlMs, maxConcurrent, token)) !== 1) {
      await this.nap(key, wait + Math.random() * wait);
      wait = Math.min(100, wait * 2);
    }
    this.active++;
    this.peak = Math.max(this.peak, this.active);
    const renew = setInterval(() => void this.redis.eval(RENEW, 1, key, this.slotTtlMs, token).catch(() => undefined), Math.floor(this.slotTtlMs / 3));
    try {
      return await task();
    } finally {
      clearInterval(renew);
      this.active--;
      await this.redis.zrem(key, token).catch(() => undefined);
      this.napping.get(key)?.values().next().value?.();
    }
  }

  /** Waits `ms`, or less when this process frees a slot of the host first. */
  private nap(key: string, ms: number): Promise<void> {
    let waiters = this.napping.get(key);
    if (!waiters) this.napping.set(key, (waiters = new Set()));
    const napping = waiters;
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        napping.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      napping.add(wake);
    });
  }
}
