import { describe, expect, it } from 'vitest';
import { combinedVerdict } from '../../../src/analysis/verdict.ts';
import type { ContextVector } from '../../../src/domain/context.ts';
import { InProcessHeadUnit } from '../../../src/headunit/in-process.ts';
import type { ConnectedHeadUnit } from '../../../src/run/connect.ts';
import { ReferenceHeadUnit } from '../../../src/headunit/reference/reference-headunit.ts';
import type { HeadUnitHandler, HeadUnitReplyBody } from '../../../src/headunit/types.ts';
import { summarizeRun } from '../../../src/report/summary.ts';
import { campaignFromYaml, tempStore } from './helpers.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

/** Action types the oracle checks against a request: replacing the first of them with a refusal is one labelled failure. */
const CHECKED = new Set(['poi_results', 'route', 'trip_plan', 'climate', 'media', 'vehicle_info']);

/**
 * A test unit that injects exactly one failure per conversation: the faultless reference head unit,
 * except that the first reply acting on a request becomes a generic refusal ("fallback_response").
 */
class OneFaultPerConversation implements HeadUnitHandler {
  readonly unit = { name: 'one-fault', version: '1' };
  readonly capabilities;
  private readonly injected = new Set<string>();

  constructor(private readonly inner = new ReferenceHeadUnit()) {
    this.capabilities = inner.capabilities;
  }

  startSession(sessionId: string, context: ContextVector) {
    return this.inner.startSession(sessionId, context);
  }

  endSession(sessionId: string) {
    return this.inner.endSession(sessionId);
  }

  async handleTurn(sessionId: string, turn: number, text: string, context: ContextVector | undefined): Promise<HeadUnitReplyBody> {
    const reply = await this.inner.handleTurn(sessionId, turn, text, context);
    if (this.injected.has(sessionId) || !reply.actions.some((a) => CHECKED.has(a.type))) return reply;
    this.injected.add(sessionId);
    return { text: "Sorry, I can't help with that right now.", actions: [] };
  }
}

function connected(handler: HeadUnitHandler): ConnectedHeadUnit {
  return { connection: new InProcessHeadUnit(handler), bridge: null, reference: null, ensureReady: async () => undefined, close: async () => undefined };
}

describe('findings decide the verdict', () => {
  const cleanups: Array<() => void> = [];
  const run = async (scoring: string) => {
    const store = tempStore((close) => cleanups.push(close));
    const campaign = campaignFromYaml(`name: one-fault\nconversations: 12\nconcurrency: 2\nseed: 11\n${scoring}`);
    const { runId } = await runCampaign(campaign, { store, headUnit: connected(new OneFaultPerConversation()) });
    const results = [...store.conversations(runId)];
    return { results, summary: await summarizeRun(store, runId) };
  };

  it('with the defaults, a unit that injects one failure per conversation passes no conversation with a labelled failure; failOn: [] gives the pure-score verdicts', async () => {
    const gated = await run('');
    const completed = gated.results.filter((r) => r.status === 'completed');
    expect(completed).toHaveLength(12);
    // the injected refusal is labelled in every conversation
    for (const result of completed) expect(combinedVerdict(result).findings.map((f) => f.label)).toContain('fallback_response');
    expect(gated.summary.conversationsWithFindings).toBe(12);
    expect(gated.summary.perConversation.filter((c) => c.outcome === 'pass' && c.findings.length > 0)).toEqual([]);
    expect(gated.summary).toMatchObject({ passed: 0, failed: 12, failRate: 1, findingsRate: 1 });

    const pure = await run('scoring: { failOn: [] }\n');
    // the same conversations (same seed, deterministic unit), judged by C alone: one refusal is not enough to fail most of them
    expect(pure.results.map((r) => r.turns.map((t) => t.reply?.text))).toEqual(gated.results.map((r) => r.turns.map((t) => t.reply?.text)));
    expect(pure.summary.perConversation.map((c) => c.outcome)).toEqual(pure.summary.perConversation.map((c) => (c.scorePass ? 'pass' : 'fail')));
    expect(pure.summary.perConversation.map((c) => c.outcome)).toEqual(gated.summary.perConversation.map((c) => (c.scorePass ? 'pass' : 'fail')));
    expect(pure.summary.passed).toBeGreaterThan(0);
    expect(pure.summary.conversationsWithFindings).toBe(12);
    cleanups.forEach((close) => close());
  }, 120_000);
});
