import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { io as dial } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/server.ts';
import { ConformanceReportSchema } from '../../src/conformance/checks.ts';
import { connectHeadUnit } from '../../packages/bridge-sdk/src/index.ts';
import { CLI, runCli } from '../helpers/cli.ts';
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
});
