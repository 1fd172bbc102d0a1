import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A throwaway redis-server on a free loopback port, without persistence (the Debian package `redis-server`). */
export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** SIGKILL: the queue and every key are gone (no persistence) */
  kill(): Promise<void>;
  /** a fresh, empty redis-server on the same port */
  restart(): Promise<void>;
}

const INSTALL = 'redis-server is not installed: run scripts/setup-system.sh, or sudo apt-get install -y redis-server (docs/fleet.md). The fleet tests need a real Redis and fail without one.';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export async function startRedis(): Promise<TestRedis> {
  if (spawnSync('redis-server', ['--version']).error) throw new Error(INSTALL);
  const port = await freePort();
  let child = await spawnRedis(port);
  const stopWith = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
    restart: async () => {
      child = await spawnRedis(port);
    },
  };
}

async function spawnRedis(port: number): Promise<ChildProcess> {
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready: ${output.slice(-500)}`)));
  });
  return child;
}
