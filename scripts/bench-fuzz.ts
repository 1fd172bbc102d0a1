/**
 * Bridge fuzz benchmark: 100,000 fuzzed messages (session_ready, assistant_reply, bridge_error,
 * audio_chunk, audio_end from an authenticated unit, fuzzed pre-auth hellos on fresh connections,
 * and every 1,000th message nested 100,000 deep) against a bench in its own process, while a
 * well-behaved unit keeps a conversation going. Records messages/s and the bench's RSS before and
 * after. Usage:
 *   npm run bench:fuzz -- [--messages 100000] [--seed 1]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import fc from 'fast-check';
import { io, type Socket } from 'socket.io-client';
import { startBridgeServer } from '../src/bridge/server.ts';
import { connectHeadUnit } from '../src/bridge/client.ts';
import type { BridgeHeadUnitConnection, BridgeUnitStats } from '../src/bridge/connection.ts';
import type { HeadUnitHandler } from '../src/headunit/types.ts';
import { BRIDGE_PROTOCOL, EVENTS } from '../src/protocol/bridge.ts';
import { AUDIO_EVENTS } from '../src/protocol/audio.ts';
import { hostileValue } from '../test/helpers/fuzz.ts';

const TOKEN = 'bench-fuzz';
const CONTEXT = { location: { city: 'Munich', district: 'Maxvorstadt', position: { lat: 48.15, lon: 11.57 } }, date: '2026-03-14', time: '18:30' } as const;

interface BenchReport {
  rssMiB: number;
  heapMiB: number;
  stats: BridgeUnitStats;
  refused: number;
  probeTurns: number;
  probeFailures: number;
}
type ToBench = { type: 'report' } | { type: 'stop' };
type FromBench = { type: 'ready'; url: string } | ({ type: 'report' } & BenchReport);

/** The bench side, in its own process: a bridge server and a well-behaved unit whose conversation runs throughout. */
async function benchSide(): Promise<void> {
  const server = await startBridgeServer({ token: TOKEN, maxMessagesPerSecond: 1e9 });
  const handler: HeadUnitHandler = {
    unit: { name: 'probe', version: '1' },
    capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: false },
    startSession() {},
    async handleTurn(_s, turn) {
      return { text: `ok ${turn}`, actions: [] };
    },
    endSession() {},
  };
  await connectHeadUnit({ url: server.url, token: TOKEN, handler });
  const probe = await server.waitForHeadUnit(5_000, 'probe');
  const session = await probe.openSession('probe', CONTEXT);
  let probeTurns = 0;
  let probeFailures = 0;
  let running = true;
  void (async () => {
    for (let turn = 0; running; turn++) {
      try {
        await session.send(turn, 'still there?', CONTEXT);
        probeTurns += 1;
      } catch {
        probeFailures += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  let fuzzer: BridgeHeadUnitConnection | null = null;
  void server.waitForHeadUnit(600_000, 'fuzzer').then((connection) => (fuzzer = connection));
  const send = (message: FromBench) => process.send!(message);
  process.on('message', (message: ToBench) => {
    if (message.type === 'stop') {
      running = false;
      void server.close().then(() => process.exit(0));
      return;
    }
    const memory = process.memoryUsage();
    send({
      type: 'report',
      rssMiB: memory.rss / 2 ** 20,
      heapMiB: memory.heapUsed / 2 ** 20,
      stats: fuzzer?.stats() ?? emptyStats(),
      refused: server.refusedConnections(),
      probeTurns,
      probeFailures,
    });
  });
  send({ type: 'ready', url: server.url });
}

function emptyStats(): BridgeUnitStats {
  return { sessionsOpened: 0, replies: 0, duplicateReplies: 0, lateReplies: 0, wrongTurnReplies: 0, invalidMessages: 0, unattributed: 0, dropped: 0, contained: 0, beforeHello: 0 };
}

function ask(child: ChildProcess): Promise<BenchReport> {
  return new Promise((resolve) => {
    const onMessage = (message: FromBench) => {
      if (message.type !== 'report') return;
      child.off('message', onMessage);
      resolve(message);
    };
    child.on('message', onMessage);
    child.send({ type: 'report' } satisfies ToBench);
  });
}

function connect(url: string): Promise<Socket> {
  const socket = io(url, { transports: ['websocket'], reconnection: false, forceNew: true, timeout: 10_000 });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', reject);
  });
}

async function fuzzerSide(): Promise<void> {
  const options = new Command().option('--messages <n>', 'fuzzed messages to send', '100000').option('--seed <n>', 'fast-check seed', '1').parse(process.argv).opts<{ messages: string; seed: string }>();
  const total = Number(options.messages);
  const child = fork(fileURLToPath(import.meta.url), ['--bench-side'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve) => child.once('message', (m: FromBench) => m.type === 'ready' && resolve(m.url)));
  const unit = await connect(url);
  unit.emit(EVENTS.hello, { protocol: BRIDGE_PROTOCOL, token: TOKEN, unit: { name: 'fuzzer', version: '1' } });
  await new Promise((resolve) => unit.once(EVENTS.helloAck, resolve));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const before = await ask(child);

  const events = [EVENTS.sessionReady, EVENTS.assistantReply, EVENTS.error, AUDIO_EVENTS.chunk, AUDIO_EVENTS.end];
  const values = fc.sample(hostileValue([{ sessionId: 'nobody', turn: 0, text: 'x' }], { maxStringChars: 4_000, maxWide: 1_000 }), { numRuns: total, seed: Number(options.seed) });
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  let hellos = 0;
  let textMessages = 0;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    if (i % 1_000 === 999) {
      (unit.io.engine as unknown as { write(m: string): void }).write(`2["${EVENTS.assistantReply}",{"sessionId":"x","turn":0,"text":"t","state":${deep}}]`);
      textMessages += 1;
    } else if (i % 500 === 0) {
      const stranger = await connect(url);
      stranger.emit(EVENTS.hello, values[i]);
      stranger.once('disconnect', () => stranger.close());
      hellos += 1;
    } else {
      const event = events[i % events.length];
      unit.emit(event, values[i]);
      if (!event.startsWith('audio_')) textMessages += 1;
    }
    // let the socket drain now and then, as a real peer's writes would
    if (i % 200 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  // every text message is counted once by the bench (no session is open for the fuzzer)
  let after = await ask(child);
  const deadline = Date.now() + 120_000;
  while (after.stats.unattributed + after.stats.invalidMessages + after.stats.dropped < textMessages) {
    if (Date.now() > deadline) throw new Error(`the bench counted ${after.stats.unattributed + after.stats.invalidMessages + after.stats.dropped} of ${textMessages} messages within 120 s after the last was sent (link ${unit.connected ? 'up' : 'down'})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    after = await ask(child);
  }
  const seconds = (performance.now() - started) / 1000;
  unit.disconnect();
  child.send({ type: 'stop' } satisfies ToBench);
  console.log(
    JSON.stringify(
      {
        messages: total,
        seconds: Number(seconds.toFixed(1)),
        messagesPerSecond: Math.round(total / seconds),
        benchRssMiB: { before: Number(before.rssMiB.toFixed(1)), after: Number(after.rssMiB.toFixed(1)) },
        benchHeapMiB: { before: Number(before.heapMiB.toFixed(1)), after: Number(after.heapMiB.toFixed(1)) },
        counted: { unattributed: after.stats.unattributed, invalid: after.stats.invalidMessages, contained: after.stats.contained, textMessages },
        hellos: { sent: hellos, refused: after.refused },
        probe: { turns: after.probeTurns, failures: after.probeFailures },
      },
      null,
      2,
    ),
  );
}

if (process.argv.includes('--bench-side')) await benchSide();
else await fuzzerSide();
