import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { io as dial } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/server.ts';
import { ConformanceReportSchema } from '../../src/conformance/checks.ts';
import { connectHeadUnit } from '../../packages/bridge-sdk/src/index.ts';
import { CLI, runCli, spawnCli } from '../helpers/cli.ts';
import { goodHandler } from '../conformance/units.ts';

const TOKEN = 'slow-token';
/** An HTTP request for the socket.io endpoint, sent one byte at a time and never finished. */
const REQUEST = 'GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Padding: ' + 'x'.repeat(10_000);

/** A peer that opens the port and trickles its request a byte every 50 ms; `closed` resolves when the bench hangs up. */
function trickler(port: number): { socket: Socket; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let at = 0;
  const timer = setInterval(() => {
    if (!socket.destroyed && socket.writable) socket.write(REQUEST[at++ % REQUEST.length]!);
  }, 50);
  const closed = new Promise<void>((resolve) => socket.once('close', () => (clearInterval(timer), resolve())));
  return { socket, closed };
}

/** A peer that opens the port and sends nothing at all. */
function silent(port: number): { socket: Socket; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  return { socket, closed: new Promise<void>((resolve) => socket.once('close', () => resolve())) };
}

let bridge: BridgeServer | null = null;
let peers: Socket[] = [];
afterEach(async () => {
  for (const peer of peers) peer.destroy();
  peers = [];
  await bridge?.close();
  bridge = null;
});

describe('connections that never complete the handshake', () => {
  it('are hung up after helloTimeoutMs (trickling, silent, and socket.io sockets without hello), while a real unit dials in beside them', { timeout: 60_000 }, async () => {
    bridge = await startBridgeServer({ token: TOKEN, helloTimeoutMs: 1_000 });
    const slow = [...Array.from({ length: 20 }, () => trickler(bridge!.port)), ...Array.from({ length: 20 }, () => silent(bridge!.port))];
    peers = slow.map((p) => p.socket);
    // socket.io clients that connect and never say hello
    const mute = Array.from({ length: 5 }, () => dial(bridge!.url, { transports: ['websocket'], reconnection: false }));
    const muteRefused = mute.map((client) => new Promise<unknown>((resolve) => client.once('bridge_error', resolve)));
    const unit = await connectHeadUnit({ url: bridge.url, token: TOKEN, handler: goodHandler() });
    try {
      const connection = await bridge.waitForHeadUnit(20_000);
      expect(connection.connected).toBe(true);
      // every slow peer is hung up by the bench: the test ends (within its timeout) only if each one closes
      await Promise.all(slow.map((p) => p.closed));
      expect(await Promise.all(muteRefused)).toEqual(mute.map(() => ({ code: 'protocol', message: 'no hello within 1000 ms' })));
      // the unit that did say hello is untouched
      expect(connection.connected).toBe(true);
    } finally {
      for (const client of mute) client.close();
      await unit.close();
    }
  });

  it('never delay closing the bridge: close() returns while they are still trickling', { timeout: 30_000 }, async () => {
    // a long hello bound: the peers would stay for a minute if the close waited for them
    bridge = await startBridgeServer({ token: TOKEN, helloTimeoutMs: 60_000 });
    const slow = Array.from({ length: 20 }, () => trickler(bridge!.port));
    peers = slow.map((p) => p.socket);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(slow.every((p) => !p.socket.destroyed)).toBe(true);
    const closing = bridge;
    bridge = null;
    await closing.close();
    await Promise.all(slow.map((p) => p.closed));
    expect(slow.every((p) => p.socket.destroyed)).toBe(true);
  });

  it('`icabench conformance` with 200 trickling connections on its port gives its verdict and exits', { timeout: 240_000 }, async () => {
    const probe = await startBridgeServer({ token: 'port-probe' });
    const port = probe.port;
    await probe.close();
    const out = mkdtempSync(join(tmpdir(), 'icabench-conformance-slow-'));
    const kit = runCli(['conformance', '--port', String(port), '--token', TOKEN, '--wait', '90', '--turn-timeout', '10000', '--reconnect-wait', '30000', '--out', out]);
    // the slow peers keep coming back while the kit runs: each is hung up and another one takes its place
    let running = true;
    const keepTrickling = async () => {
      while (running) {
        const peer = trickler(port);
        peers.push(peer.socket);
        await peer.closed;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const swarm = Array.from({ length: 200 }, () => keepTrickling());
    const unit = spawn(process.execPath, [CLI, 'headunit', '--url', `http://127.0.0.1:${port}`, '--token', TOKEN, '--tool-agent', 'replay'], { stdio: 'ignore' });
    try {
      const result = await kit;
      expect(result.stdout, result.stderr).toContain('conformance: PASSED (icabench-reference');
      expect(result.code).toBe(0);
      const report = ConformanceReportSchema.parse(JSON.parse(readFileSync(join(out, 'conformance.json'), 'utf8')));
      expect(report.passed).toBe(true);
    } finally {
      running = false;
      for (const peer of peers) peer.destroy();
      await Promise.all(swarm);
      unit.kill('SIGINT');
    }
  });

  it('a dialogue campaign with 20 trickling connections on its bridge port writes its report and exits, every conversation done and every slow socket hung up by the bench', { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-campaign-slow-'));
    const config = join(dir, 'slow.yaml');
    writeFileSync(config, `name: slow-peers\nseeds: ${resolve('bench-configs/seeds/in-car.yaml')}\nconversations: 20\nmaxTurns: [2]\nconcurrency: 2\nheadUnit: { type: bridge, port: 0, tokenEnv: ICABENCH_SLOW_TOKEN, waitSeconds: 120 }\n`);
    const out = join(dir, 'out');
    const run = spawnCli(['run', config, '--workspace', join(dir, 'ws'), '--out', out, '--no-progress'], { ICABENCH_SLOW_TOKEN: TOKEN });
    const [, url] = await run.waitFor(/bridge listening on (\S+);/);
    const port = Number(new URL(url!).port);
    // 20 peers that open the port and trickle bytes without a handshake, each replaced as soon as the bench hangs it up
    let running = true;
    let opened = 0;
    const keepTrickling = async () => {
      while (running) {
        const peer = trickler(port);
        peers.push(peer.socket);
        peer.socket.once('connect', () => opened++);
        await peer.closed;
      }
    };
    const swarm = Array.from({ length: 20 }, () => keepTrickling());
    while (opened < 20) await new Promise((resolve) => setTimeout(resolve, 50));
    // the unit dials in beside them
    const unit = spawn(process.execPath, [CLI, 'headunit', '--url', url!, '--token', TOKEN], { stdio: 'ignore' });
    try {
      // the peers keep trickling until the run has exited: it must end without waiting for them
      expect(await run.exited, run.output()).toBe(0);
      expect(run.output()).toMatch(/^run \S+ completed: 20 conversations/m);
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
      expect(summary.run.status).toBe('completed');
      expect(summary.conversations).toBe(20);
      // every slow peer is hung up by the bench (the test destroys none before this): the swarm ends only once each one closed
      running = false;
      await Promise.all(swarm);
      expect(peers.every((peer) => peer.destroyed)).toBe(true);
    } finally {
      running = false;
      unit.kill('SIGINT');
    }
  });
});
