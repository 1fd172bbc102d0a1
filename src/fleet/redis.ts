
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
