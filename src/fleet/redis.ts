
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

/** Socket-level failures: the Redis is unreachable (an outage), not a command that went wrong. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

function isConnectionError(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return (code !== undefined && CONNECTION_ERROR_CODES.has(code)) || /^Connection is closed|^Stream isn't writeable/.test(error.message);
}

/** BullMQ's errors about a job whose keys are gone, or whose lock it could not renew because of that. */
const LOST_JOB = /^Missing (key|lock) for job|^could not renew lock for job/;

export type RedisHealthChange = { state: 'down'; cause: string } | { state: 'back'; outageMs: number };

/**
 * One process's view of its fleet Redis. ioredis and every BullMQ queue, worker and event stream hold
 * their own connection and emit an 'error' per reconnect attempt; all of them report here, so an
 * outage is one line when it starts and one line, with its length, when the main connection is ready again.
 */
export class RedisHealth {
  private downSince: number | null = null;
  /** a job's keys vanished (Redis restarted without persistence or was flushed): said once per outage, the rest are its echoes */
  private lostJobsSaid = false;
  private readonly listeners: Array<(change: RedisHealthChange) => void> = [];

  constructor(
    private readonly url: string,
    private readonly log: (line: string) => void,
    /** whether the process's main connection is up: a lagging connection's error after Redis came back is no new outage */
    private readonly mainReady: () => boolean,
  ) {}

  get down(): boolean {
    return this.downSince !== null;
  }

  onChange(listener: (change: RedisHealthChange) => void): void {
    this.listeners.push(listener);
  }

  /** The 'error' listener of one connection (`source` names it in a line about anything but an outage). */
  errorListener(source: string): (error: Error) => void {
    return (error) => {
      if (LOST_JOB.test(error.message)) {
        if (!this.lostJobsSaid) this.log(`${source}: ${error.message} (Redis lost the jobs it held: restarted without persistence or flushed; further lines like this are not shown)`);
        this.lostJobsSaid = true;
        return;
      }
      if (!isConnectionError(error)) return this.log(`${source}: ${error.message}`);
      if (this.downSince !== null || this.mainReady()) return;
      this.downSince = Date.now();
      this.lostJobsSaid = false;
      const cause = (error as NodeJS.ErrnoException).code ?? error.message;
      this.log(`fleet Redis ${redactedRedisUrl(this.url)} is unreachable (${cause}); waiting for it to come back`);
      for (const listener of this.listeners) listener({ state: 'down', cause });
    };
  }

  /** The main connection is ready (again). */
  ready(): void {
    if (this.downSince === null) return;
    const outageMs = Date.now() - this.downSince;
    this.downSince = null;
    this.log(`fleet Redis ${redactedRedisUrl(this.url)} is back after ${(outageMs / 1000).toFixed(1)} s`);
    for (const listener of this.listeners) listener({ state: 'back', outageMs });
  }
}

/**
 * Connects to the fleet's Redis: one attempt first, so an unreachable Redis is reported at once
 * (naming the URL without its password); afterwards the connection reconnects by itself, and an
 * outage is reported through `health` (one line when it starts, one when it ends) instead of thrown.
 */
export async function connectFleetRedis(url: string, flag: string, log: (line: string) => void): Promise<{ redis: Redis; health: RedisHealth }> {
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
  const health = new RedisHealth(url, log, () => redis.status === 'ready');
  redis.on('error', health.errorListener('fleet Redis'));
  redis.on('ready', () => health.ready());
  return { redis, health };
}
