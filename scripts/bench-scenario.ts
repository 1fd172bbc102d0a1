/**
 * One scenario of the bench harness (scripts/bench-harness.ts) in a child process of its own, so its peak RSS is its
 * own: `--scenario model|deterministic|in-process --workspace DIR --conversations N [--concurrency C] [--url URL]
 * [--one-model] [--cache-hints llama.cpp] [--two-tier] [--pipeline off]`. It reports its figures to the parent
 * (process.send). It imports only what the tree had before issue #37, so the harness can run it in a checkout of an
 * earlier commit (`--baseline-ref`): the same campaign with that commit's prompts, against the same fake model host.
 */
import { loadavg } from 'node:os';
import { loadCampaignConfig } from '../src/kinds/dialogue/config.ts';
import { createLlmJudge } from '../src/judge/llm.ts';
import { OracleJudge } from '../src/judge/oracle.ts';
import { ConcurrencyLimiter, LlmUsageTracker } from '../src/llm/index.ts';
import type { CacheHints } from '../src/llm/session-slots.ts';
import { createLlmSimulator } from '../src/simulator/llm.ts';
import { InProcessHeadUnit } from '../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../src/headunit/reference/reference-headunit.ts';
import type { ConnectedHeadUnit } from '../src/run/connect.ts';
import { ResultStore } from '../src/store/store.ts';
import { llmUsage } from '../src/run/run-facts.ts';
import { workspaceStorePath } from '../src/store/workspace.ts';
import { runCampaign } from '../test/helpers/run-kinds.ts';
import { arg, flag, text } from './bench-args.ts';


/** The limiter's places: the model host's slots. */
const AT_ONCE = 8;

/** What one scenario child reports. */
export interface ScenarioFigures {
  conversations: number;
  turns: number;
  calls: number;
  wallSeconds: number;
  cpuMs: number;
  peakRssMiB: number;
  runId: string;
  load1m: number;
  /** model runs: the shared limiter's slots, the time they were held over wall time × slots, and the mean hold per call (ms) */
  slots?: { busy: number; holdMs: number };
}

async function scenario(name: string): Promise<void> {
  const workspace = text('workspace')!;
  const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
  campaign.config.conversations = arg('conversations', 50);
  // --concurrency: conversations in flight (the model host scenario's 1, 8, 32); the limiter stays at the host's slots
  campaign.config.concurrency = arg('concurrency', AT_ONCE);
  // --pipeline off: the strict order of Algorithm 1, to compare with the default (auto) on the same code
  campaign.config.pipeline = text('pipeline') === 'off' ? 'off' : 'auto';
  const store = ResultStore.open(workspaceStorePath(workspace));
  const tracker = new LlmUsageTracker();
  let tiers;
  let limiter: ConcurrencyLimiter | undefined;
  if (name === 'model') {
    const url = text('url')!;
    // one limiter for the one server: AT_ONCE calls at once, whichever client calls
    limiter = new ConcurrencyLimiter(AT_ONCE);
    // --one-model (the model host scenario): one local model serves both roles, as a lab with one GPU runs it, so its
    // slots can keep a conversation's prompt for either role; else two models through the two client libraries
    const simulatorRef = flag('one-model') ? `openai-compat:${url}/v1#bench-model` : 'ollama:bench-sim';
    // --cache-hints llama.cpp: each conversation on its own slot of the host (id_slot, cache_prompt; src/llm/session-slots.ts)
    const hints = text('cache-hints') ? { cacheHints: text('cache-hints') as CacheHints } : {};
    const judgeRef = flag('one-model') ? `openai-compat:${url}/v1#bench-model` : `openai-compat:${url}/v1#bench-judge`;
    tiers = {
      simulator: createLlmSimulator(simulatorRef, { tracker, provider: { ollamaHost: url, limiter, ...hints } }),
      // --two-tier: the oracle first in precedence (it decides every turn of the reference unit), the model judge recorded beside it
      judges: [...(flag('two-tier') ? [new OracleJudge(campaign.config.scoring, campaign.config.safety)] : []), createLlmJudge(judgeRef, { tracker, provider: { limiter, ...hints } })],
      // as a real run has it: each conversation's calls handed to the store with it (llm.calls), part of the bench's cost per call
      tracker,
    };
  }
  // the reference unit called directly instead of over its loopback bridge: what the bridge costs per turn
  let headUnit: ConnectedHeadUnit | undefined;
  if (name === 'in-process' && campaign.config.headUnit.type === 'reference') {
    const { worldSeed, faults, safety } = campaign.config.headUnit;
    const reference = new ReferenceHeadUnit({ worldSeed, faults, safety: safety ?? campaign.config.safety });
    headUnit = { connection: new InProcessHeadUnit(reference), bridge: null, reference, audio: null, ensureReady: async () => undefined, close: async () => undefined };
  }
  let turns = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const result = await runCampaign(campaign, {
    store,
    ...(tiers ? { tiers } : {}),
    ...(headUnit ? { headUnit } : {}),
    onEvent: (event) => {
      if (event.type === 'turn') turns++;
    },
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  // the calls as stored (the tracker hands them to the store conversation by conversation)
  const calls = llmUsage(store, result.runId, turns)?.calls ?? 0;
  store.close();
  const figures: ScenarioFigures = {
    conversations: result.done,
    turns,
    calls,
    wallSeconds,
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    runId: result.runId,
    load1m: loadavg()[0],
    ...(limiter ? { slots: { busy: limiter.slotUse.heldMs / (wallSeconds * 1000 * AT_ONCE), holdMs: limiter.slotUse.heldMs / Math.max(1, limiter.slotUse.calls) } } : {}),
  };
  process.send?.(figures);
  process.exit(0);
}


if (text('scenario')) await scenario(text('scenario')!);
