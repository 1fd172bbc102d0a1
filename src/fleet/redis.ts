
/** The connection options (both ioredis and BullMQ take them). */
export interface FleetRedisOptions {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls?: { servername: string };
  maxRetriesPerRequest: null;
}

import { Redis } from 'ioredis';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/**
 * The Redis connection of a fleet (`--redis` of `icabench worker`, `--fleet` of `icabench run`).
 * Redis on loopback needs nothing more; a Redis on another machine carries the whole campaign and
 * every result, so it is refused unless the URL asks for TLS (rediss://) and carries a password.
 */
export function fleetRedisOptions(url: string, flag = '--redis'): FleetRedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${flag} ${url}: not a URL; expected redis://127.0.0.1:6379 (loopback) or rediss://:PASSWORD@host:6380 (lab network, docs/fleet.md)`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`${flag} ${url}: the scheme must be redis:// (loopback) or rediss:// (TLS), not ${parsed.protocol}//`);
  }
  const host = parsed.hostname || '127.0.0.1';
  const tls = parsed.protocol === 'rediss:';
  const password = decodeURIComponent(parsed.password);
  if (!LOOPBACK.has(host) && (!tls || !password)) {
    throw new Error(
      `${flag}: the Redis at ${host} is not on this machine, and the URL has ${tls ? 'TLS but no password' : password ? 'a password but no TLS' : 'neither a password nor TLS'}: ` +
        'every campaign and result crosses it. Set requirepass and tls-port on that Redis and use rediss://:PASSWORD@' +
        `${host}:PORT (docs/fleet.md, "Lab network")`,
    );
  }
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new Error(`${flag} ${url}: the database after the port must be a number (redis://host:port/0)`);
  return {
    host: host.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : 6379,
    db,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(password ? { password } : {}),
    ...(tls ? { tls: { servername: host } } : {}),
    // BullMQ's workers block on Redis: their commands must wait for a reconnect rather than fail
    maxRetriesPerRequest: null,
  };
}

/** The URL without its password, for logs. */
export function redactedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * Connects to the fleet's Redis: one attempt first, so an unreachable Redis is reported at once
 * (naming the URL without its password); afterwards the connection reconnects by itself, and
 * connection errors are logged once per outage instead of thrown.
 */
export async function connectFleetRedis(url: string, flag: string, log: (line: string) => void): Promise<Redis> {
  const options = fleetRedisOptions(url, flag);
  const probe = new Redis({ ...options, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  let cause: Error | null = null;
  probe.on('error', (error: Error) => (cause ??= error));
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    throw new Error(`${flag}: cannot reach the fleet's Redis at ${redactedRedisUrl(url)}: ${(cause ?? (error as Error)).message} (is redis-server running? docs/fleet.md)`);
  } finally {
    probe.disconnect();
  }
  const redis = new Redis(options);
  let down = false;
  redis.on('error', (error: Error) => {
    if (!down) log(`fleet Redis ${redactedRedisUrl(url)}: ${error.message}; reconnecting`);
    down = true;
  });
  redis.on('ready', () => {
    if (down) log(`fleet Redis ${redactedRedisUrl(url)}: connected again`);
    down = false;
  });
  return redis;
}
