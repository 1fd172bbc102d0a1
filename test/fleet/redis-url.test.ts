import { describe, expect, it } from 'vitest';
import { connectFleetRedis, fleetRedisOptions, redactedRedisUrl } from '../../src/fleet/redis.ts';
import { canServe, servedQueueNames, itemQueueName } from '../../src/fleet/protocol.ts';
import { startFleetWorker } from '../../src/fleet/worker.ts';

describe('fleet Redis URL', () => {
  it('takes a loopback Redis as it is', () => {
    expect(fleetRedisOptions('redis://127.0.0.1:6390/2')).toMatchObject({ host: '127.0.0.1', port: 6390, db: 2, maxRetriesPerRequest: null });
    expect(fleetRedisOptions('redis://localhost')).toMatchObject({ host: 'localhost', port: 6379 });
  });

  it('refuses a remote Redis without password and TLS, with the fix', () => {
    expect(() => fleetRedisOptions('redis://10.0.0.5:6379')).toThrow(/10\.0\.0\.5 is not on this machine, and the URL has neither a password nor TLS.*rediss:\/\/:PASSWORD@10\.0\.0\.5:PORT/);
    expect(() => fleetRedisOptions('redis://:secret@lab-redis:6379')).toThrow(/a password but no TLS/);
    expect(() => fleetRedisOptions('rediss://lab-redis:6380')).toThrow(/TLS but no password/);
    expect(fleetRedisOptions('rediss://:s%40cret@lab-redis:6380')).toMatchObject({ host: 'lab-redis', port: 6380, password: 's@cret', tls: { servername: 'lab-redis' } });
  });

  it('names what is wrong with a URL that is not one', () => {
    expect(() => fleetRedisOptions('127.0.0.1:6379', '--fleet')).toThrow(/^--fleet 127\.0\.0\.1:6379: the scheme must be redis:\/\/|^--fleet 127\.0\.0\.1:6379: not a URL/);
    expect(() => fleetRedisOptions('http://127.0.0.1')).toThrow(/scheme must be redis:\/\/ .* not http:/);
  });

  it('an unreachable Redis is reported at once with the cause, not retried forever', async () => {
    await expect(connectFleetRedis('redis://127.0.0.1:1', '--fleet', () => undefined)).rejects.toThrow(/^--fleet: cannot reach the fleet's Redis at redis:\/\/127\.0\.0\.1:1: connect ECONNREFUSED 127\.0\.0\.1:1 \(is redis-server running/);
  });

  it('keeps the password out of logs', () => {
    expect(redactedRedisUrl('rediss://:secret@lab:6380')).toBe('rediss://:***@lab:6380');
  });
});

describe('capability routing', () => {
  it('a worker whose rig can serve no queue is refused before it connects to Redis (nothing listens on this one)', async () => {
    const start = startFleetWorker({ redisUrl: 'redis://127.0.0.1:1', rig: 'mute', capabilities: ['audio'], transports: ['reference'], concurrency: 1, lockMs: 5_000, log: () => undefined });
    await expect(start).rejects.toThrow('worker of rig "mute": with capabilities audio it can serve no run (every run needs text)');
  });

  const voice = { transport: 'reference' as const, capabilities: ['audio' as const, 'text' as const] };
  it('a text worker does not listen on the queue of spoken campaigns; an audio worker listens on both', () => {
    expect(servedQueueNames(['text', 'vehicle'], ['reference'])).not.toContain(itemQueueName(voice));
    expect(servedQueueNames(['text', 'audio'], ['reference'])).toEqual(expect.arrayContaining([itemQueueName(voice), itemQueueName({ transport: 'reference', capabilities: ['text'] })]));
    expect(canServe({ capabilities: ['text'], transports: ['reference'] }, voice)).toBe(false);
    expect(canServe({ capabilities: ['text', 'audio'], transports: ['bridge'] }, voice)).toBe(false);
    expect(canServe({ capabilities: ['text', 'audio'], transports: ['reference'] }, voice)).toBe(true);
  });
});
