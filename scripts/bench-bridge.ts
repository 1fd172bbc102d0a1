/**
 * Bridge throughput: turns per second and round-trip time over socket.io on loopback with an instant
 * head unit (so the figures are the bridge's own cost). Run: npm run bench:bridge
 */
import { startBridgeServer } from '../src/bridge/server.ts';
import { connectHeadUnit } from '../src/bridge/client.ts';
import type { HeadUnitHandler } from '../src/headunit/types.ts';
import type { ContextVector } from '../src/domain/context.ts';

const TURNS_PER_SESSION = 400;
const CONTEXT: ContextVector = {
  location: { city: 'Munich', district: 'Maxvorstadt', position: { lat: 48.15, lon: 11.57 } },
  date: '2026-03-14',
  time: '18:30',
};

const instant: HeadUnitHandler = {
  unit: { name: 'bench-instant', version: '1' },
  capabilities: { text: true, audio: false, vehicleContext: false, structuredActions: true },
  startSession() {},
  async handleTurn(_sessionId, turn) {
    return { text: `reply ${turn}`, actions: [{ type: 'climate', setpointC: 21, zone: 'all' }] };
  },
  endSession() {},
};

// the rate limit guards against a flooding unit; lift it so it does not cap the measurement
const server = await startBridgeServer({ token: 'bench', maxMessagesPerSecond: 1_000_000 });
const client = await connectHeadUnit({ url: server.url, token: 'bench', handler: instant });
const unit = await server.waitForHeadUnit(5_000);

async function run(concurrentSessions: number): Promise<{ turnsPerSecond: number; meanRoundTripMs: number; p95RoundTripMs: number }> {
  const sessions = await Promise.all(
    Array.from({ length: concurrentSessions }, (_, i) => unit.openSession(`c${concurrentSessions}-s${i}`, CONTEXT)),
  );
  const roundTrips: number[] = [];
  const started = performance.now();
  await Promise.all(
    sessions.map(async (session) => {
      for (let turn = 0; turn < TURNS_PER_SESSION; turn += 1) {
        const t0 = performance.now();
        await session.send(turn, 'find a fast charger near me', CONTEXT);
        roundTrips.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(sessions.map((session) => session.close()));
  roundTrips.sort((a, b) => a - b);
  return {
    turnsPerSecond: Math.round(roundTrips.length / seconds),
    meanRoundTripMs: Number((roundTrips.reduce((a, b) => a + b, 0) / roundTrips.length).toFixed(3)),
    p95RoundTripMs: Number(roundTrips[Math.floor(roundTrips.length * 0.95)].toFixed(3)),
  };
}

await run(1); // warm-up
for (const concurrency of [1, 8, 32]) {
  const result = await run(concurrency);
  console.log(
    `sessions=${concurrency} turns=${concurrency * TURNS_PER_SESSION} turns/s=${result.turnsPerSecond} ` +
      `mean RTT=${result.meanRoundTripMs} ms p95 RTT=${result.p95RoundTripMs} ms`,
  );
}
console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB (bench and head unit in one process)`);
await client.close();
await server.close();
