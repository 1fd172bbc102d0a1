/**
 * Local-models benchmark: a guided campaign (the real campaign runner, SQLite store, reference head unit)
 * with the LLM simulator (ollama client) and the LLM judge (openai client) against the fake model server,
 * which answers every call after a fixed latency. Server capacity is the concurrency limit; the figure is
 * how close the campaign gets to the throughput that latency allows.
 *
 *   npm run bench:llm [-- --latency 100 --concurrency 8 --conversations 64 --workers 8]
 *
 * --concurrency is the server's parallel slots (OLLAMA_NUM_PARALLEL), enforced by the bench's limiter;
 * --workers is the campaign's concurrency (conversations in flight), default the same.
 *
 * The fake server runs in its own process, as a real model server would, so the bench's own CPU work
 * does not delay the server's answers (and vice versa).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCampaignConfig } from '../src/kinds/dialogue/config.ts';
import { createLlmJudge } from '../src/judge/llm.ts';
import { ConcurrencyLimiter, LlmUsageTracker } from '../src/llm/index.ts';
import { createLlmSimulator } from '../src/simulator/llm.ts';
import { ResultStore } from '../src/store/store.ts';
import { benchModelResponder, startFakeLlmServer, type FakeLlmServer } from '../test/helpers/fakeLlmServer.ts';
import { runCampaign } from '../test/helpers/run-kinds.ts';
import { arg } from './bench-args.ts';


const latencyMs = arg('latency', 100);
const concurrency = arg('concurrency', 8);
const conversations = arg('conversations', 64);
/** conversations in flight; more than the server's slots keeps them busy while a worker is between calls (the limiter queues the rest) */
const workers = arg('workers', concurrency);

if (process.argv.includes('--serve')) {
  const server = await startFakeLlmServer({ latencyMs, respond: benchModelResponder() });
  process.send?.({ url: server.url });
  process.on('message', async (message) => {
    if (message === 'peak') {
      const cpu = process.cpuUsage();
      process.send?.({ peak: server.peakConcurrent, chats: server.chatRequests().length, connections: server.connections, delays: server.answerDelays(), cpuMs: (cpu.user + cpu.system) / 1000 });
    }
    if (message === 'stop') {
      await server.close();
      process.exit(0);
    }
  });
} else {
  await bench();
}

async function bench(): Promise<void> {
  const child = fork(new URL(import.meta.url).pathname, ['--serve', '--latency', String(latencyMs)], { execArgv: ['--import', 'tsx'] });
  const ask = <T>(message?: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (reply) => resolve(reply as T));
      if (message) child.send(message);
    });
  const server = await ask<{ url: string }>();
  const dir = mkdtempSync(join(tmpdir(), 'icabench-bench-llm-'));
  try {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = conversations;
    campaign.config.concurrency = workers;
    const tracker = new LlmUsageTracker();
    // one limiter for the one server: its capacity is `concurrency` calls at once, whichever client calls
    const limiter = new ConcurrencyLimiter(concurrency);
    const simulator = createLlmSimulator('ollama:bench-sim', { tracker, provider: { ollamaHost: server.url, limiter } });
    const judge = createLlmJudge(`openai-compat:${server.url}/v1#bench-judge`, { tracker, provider: { limiter } });
    const store = ResultStore.open(join(dir, 'bench.sqlite'));
    const loadBefore = loadavg()[0];
    const started = performance.now();
    let lastStartMs = 0;
    let turnCount = 0;
    const statuses: Record<string, number> = {};
    const result = await runCampaign(campaign, {
      store,
      tiers: { simulator, judges: [judge] },
      onEvent: (event) => {
        if (event.type === 'turn') turnCount++;
        if (event.type === 'conversation_started') lastStartMs = performance.now() - started;
        if (event.type === 'conversation_finished') statuses[event.result.status] = (statuses[event.result.status] ?? 0) + 1;
      },
    });
    const seconds = (performance.now() - started) / 1000;
    store.close();
    const summary = tracker.summary(turnCount);
    const callsPerSecond = summary.calls / seconds;
    const boundCallsPerSecond = concurrency / (latencyMs / 1000);
    const turnsPerSecond = turnCount / seconds;
    const serverStats = await ask<{ peak: number; chats: number; connections: number; delays: ReturnType<FakeLlmServer['answerDelays']>; cpuMs: number }>('peak');
    const slots = limiter.slotUse;
    const boundTurnsPerSecond = concurrency / (summary.callsPerTurn * (latencyMs / 1000));
    console.log(
      JSON.stringify(
        {
          machine: { cpus: availableParallelism(), loadAverage1mBefore: Number(loadBefore.toFixed(2)), loadAverage1mAfter: Number(loadavg()[0].toFixed(2)) },
          latencyMs,
          serverSlots: concurrency,
          campaignWorkers: workers,
          conversations: result.done,
          runStatus: result.status,
          conversationStatuses: statuses,
          turns: turnCount,
          calls: summary.calls,
          callsPerTurn: Number(summary.callsPerTurn.toFixed(3)),
          wallSeconds: Number(seconds.toFixed(2)),
          turnsPerSecond: Number(turnsPerSecond.toFixed(2)),
          boundTurnsPerSecond: Number(boundTurnsPerSecond.toFixed(2)),
          callsPerSecond: Number(callsPerSecond.toFixed(1)),
          boundCallsPerSecond,
          shareOfBound: Number((callsPerSecond / boundCallsPerSecond).toFixed(3)),
          // the same share against the latency the calls actually had (the server's timer plus HTTP and scheduling)
          shareOfBoundAtObservedLatency: Number((callsPerSecond / (concurrency / (summary.meanLatencyMs / 1000))).toFixed(3)),
          peakServerConcurrency: serverStats.peak,
          serverChatRequests: serverStats.chats,
          // HTTP keep-alive: connections opened for all those requests
          serverConnections: serverStats.connections,
          meanLatencyMs: Number(summary.meanLatencyMs.toFixed(1)),
          // where the share goes: share of bound = slot occupancy × latency / mean slot hold
          // server: request fully received → answer written (the fake model's own time; never under latencyMs)
          serverAnswerMs: { mean: Number(serverStats.delays.meanMs.toFixed(2)), min: Number(serverStats.delays.minMs.toFixed(2)), max: Number(serverStats.delays.maxMs.toFixed(1)) },
          // limiter: a slot is held from the provider call's start to its parsed response (server time + HTTP + client work)
          meanSlotHoldMs: Number((slots.heldMs / slots.calls).toFixed(2)),
          // share of the run's slot time (slots × wall) that a call held a slot: idle at the start, between calls, and in the tail
          slotOccupancy: Number((slots.heldMs / (concurrency * seconds * 1000)).toFixed(3)),
          // wind-down: from the last conversation's start to the end, when fewer and fewer workers have work
          windDownSeconds: Number((seconds - lastStartMs / 1000).toFixed(2)),
          errors: summary.errors,
          benchCpuMsPerCall: Number(((process.cpuUsage().user + process.cpuUsage().system) / 1000 / summary.calls).toFixed(2)),
          peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
          // the fake server's process, start-up included
          serverCpuMsPerCall: Number((serverStats.cpuMs / serverStats.chats).toFixed(2)),
        },
        null,
        2,
      ),
    );
  } finally {
    child.send('stop');
    rmSync(dir, { recursive: true, force: true });
  }
}

