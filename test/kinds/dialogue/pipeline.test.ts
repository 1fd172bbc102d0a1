import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as modelLatency } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { CampaignConfigSchema, loadCampaignConfig, pipelinesTurns, type LoadedCampaign } from '../../../src/kinds/dialogue/config.ts';
import type { CampaignTiers } from '../../../src/kinds/dialogue/tiers.ts';
import { createLlmJudge } from '../../../src/judge/llm.ts';
import { OracleJudge } from '../../../src/judge/oracle.ts';
import type { Judge } from '../../../src/judge/types.ts';
import { ConcurrencyLimiter, LlmUsageTracker } from '../../../src/llm/index.ts';
import { createLlmSimulator } from '../../../src/simulator/llm.ts';
import { TemplateSimulator } from '../../../src/simulator/template.ts';
import type { UserSimulator } from '../../../src/simulator/types.ts';
import { ResultStore } from '../../../src/store/store.ts';
import { benchModelResponder, startFakeLlmServer, stepOf, type FakeLlmServer } from '../../helpers/fakeLlmServer.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

/**
 * Pipelining (issue #26 item 3): with `pipeline: auto` the judges after the deciding one overlap the simulator's
 * next move. The stored conversations must not depend on it: byte for byte the same with it on and off, timing
 * fields (start, duration, head-unit latency) aside.
 */
let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const TIMING = new Set(['startedAt', 'durationMs', 'latencyMs']);
/** The stored conversations as JSON, timing fields left out and the run id (part of each head-unit session id) replaced. */
const stored = (store: ResultStore, runId: string) =>
  [...store.conversations(runId)].map((c) => JSON.stringify(c, (key, value) => (TIMING.has(key) ? undefined : value)).replaceAll(runId, 'RUN'));

/** How often the simulator was asked for its next move while a judge was still judging the turn before (of the same conversation). */
interface Overlap {
  judging: Set<string>;
  movesWhileJudging: number;
}

/**
 * A second oracle, recorded only (the oracle before it decides), that takes a few event-loop rounds per turn and marks
 * its verdicts' reasoning. It keeps the ref "oracle": the run resolves every other ref as a model host.
 */
function slowSecondJudge(overlap: Overlap): Judge {
  const inner = new OracleJudge();
  const rounds = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    tier: 'oracle',
    ref: 'oracle',
    prompts: [],
    async evaluateTurn(input) {
      overlap.judging.add(input.spec.key);
      try {
        await rounds();
        const verdict = await inner.evaluateTurn(input);
        return { ...verdict, reasoning: `second: ${verdict.reasoning}` };
      } finally {
        overlap.judging.delete(input.spec.key);
      }
    },
    async evaluateConversation(input) {
      const verdict = await inner.evaluateConversation(input);
      return { ...verdict, reasoning: `second: ${verdict.reasoning}` };
    },
  };
}

/** The simulator, counting the next moves asked for while a turn was still being judged. */
function watching(simulator: UserSimulator, overlap: Overlap): UserSimulator {
  return {
    kind: simulator.kind,
    describe: simulator.describe,
    prompts: simulator.prompts,
    startConversation(spec) {
      const session = simulator.startConversation(spec);
      return {
        extractTargets: () => session.extractTargets(),
        openingUtterance: (targets, context) => session.openingUtterance(targets, context),
        nextUtterance(input) {
          if (overlap.judging.has(spec.key)) overlap.movesWhileJudging++;
          return session.nextUtterance(input);
        },
      };
    },
  };
}

async function runBoth(campaign: LoadedCampaign, tiersFor: () => CampaignTiers, overlaps: Record<'auto' | 'off', Overlap>) {
  const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-pipeline-')), 'icabench.db'));
  try {
    const results: Record<string, string[]> = {};
    for (const pipeline of ['auto', 'off'] as const) {
      campaign.config.pipeline = pipeline;
      const overlap = overlaps[pipeline];
      const tiers = tiersFor();
      const { runId } = await runCampaign(campaign, { store, tiers: { ...tiers, simulator: watching(tiers.simulator, overlap) } });
      results[pipeline] = stored(store, runId);
    }
    return results;
  } finally {
    store.close();
  }
}

describe('pipelining the judges with the next simulator move', () => {
  it('a deterministic campaign stores the same conversations byte for byte with pipeline auto and off', async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 12;
    const overlaps = { auto: { judging: new Set<string>(), movesWhileJudging: 0 }, off: { judging: new Set<string>(), movesWhileJudging: 0 } };
    const results = await runBoth(
      campaign,
      () => ({ simulator: new TemplateSimulator(), judges: [new OracleJudge(), slowSecondJudge(overlaps[campaign.config.pipeline])] }),
      overlaps,
    );
    expect(results.auto).toHaveLength(12);
    expect(results.auto).toEqual(results.off);
    // both judges' verdicts are on every stored turn, in precedence order
    const first = JSON.parse(results.auto[0]);
    expect(first.turns[0].verdicts.map((v: { reasoning: string }) => v.reasoning.startsWith('second: '))).toEqual([false, true]);
    // the comparison is between a pipelined and a strict run: only the first overlapped
    expect(overlaps.auto.movesWhileJudging).toBeGreaterThan(0);
    expect(overlaps.off.movesWhileJudging).toBe(0);
  });

  it('a model simulator and a model judge beside the oracle (fake server) store the same conversations with pipeline auto and off', async () => {
    const respond = benchModelResponder();
    const judgingNow = new Set<string>();
    const overlapAtServer = { auto: 0, off: 0 };
    let mode: 'auto' | 'off' = 'auto';
    server = await startFakeLlmServer({
      respond: async (request) => {
        const system = stepOf(request) ?? '';
        const conversation = String(request.body?.seed ?? request.body?.options?.seed);
        if (system.includes('SelectAndGenerate') && judgingNow.has(conversation)) overlapAtServer[mode]++;
        if (!system.includes('EvaluateTurn')) return respond(request);
        judgingNow.add(conversation);
        try {
          // the model judge's latency: the pipelined loop asks the simulator meanwhile
          await modelLatency(40);
          return respond(request);
        } finally {
          judgingNow.delete(conversation);
        }
      },
    });
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 4;
    const overlaps = { auto: { judging: new Set<string>(), movesWhileJudging: 0 }, off: { judging: new Set<string>(), movesWhileJudging: 0 } };
    const limiter = new ConcurrencyLimiter(8);
    const results = await runBoth(
      campaign,
      () => {
        mode = campaign.config.pipeline;
        const tracker = new LlmUsageTracker();
        return {
          simulator: createLlmSimulator(`openai-compat:${server!.url}/v1#sim`, { tracker, provider: { limiter } }),
          judges: [new OracleJudge(), createLlmJudge(`openai-compat:${server!.url}/v1#judge`, { tracker, provider: { limiter } })],
          tracker,
        };
      },
      overlaps,
    );
    expect(results.auto).toHaveLength(4);
    expect(results.auto).toEqual(results.off);
    expect(JSON.parse(results.auto[0]).turns[0].verdicts.map((v: { tier: string }) => v.tier)).toEqual(['oracle', 'llm']);
    expect(overlapAtServer.auto).toBeGreaterThan(0);
    expect(overlapAtServer.off).toBe(0);
  });

  it('pipeline defaults to auto; the paper preset keeps the strict order', () => {
    const base = { name: 'x', seeds: 'seeds.yaml', conversations: 1 };
    const lab = CampaignConfigSchema.parse(base);
    expect(lab.pipeline).toBe('auto');
    expect(pipelinesTurns(lab)).toBe(true);
    expect(pipelinesTurns({ ...lab, pipeline: 'off' })).toBe(false);
    expect(pipelinesTurns({ ...lab, method: 'paper' })).toBe(false);
  });
});
