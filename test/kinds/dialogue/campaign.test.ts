import { afterEach, describe, expect, it } from 'vitest';
import { connectHeadUnit, type BridgeClient } from '../../../src/bridge/client.ts';
import { startBridgeServer } from '../../../src/bridge/server.ts';
import type { CampaignEvent } from '../../../src/run/events.ts';
import { buildTiers } from '../../../src/kinds/dialogue/tiers.ts';
import type { ContextVector } from '../../../src/domain/context.ts';
import { bridgeReadiness, type ConnectedHeadUnit } from '../../../src/run/connect.ts';
import { ReferenceHeadUnit } from '../../../src/headunit/reference/reference-headunit.ts';
import type { HeadUnitHandler, HeadUnitReplyBody } from '../../../src/headunit/types.ts';
import { campaignFromYaml, tempStore as tempStoreIn } from './helpers.ts';
import { runCampaign } from '../../helpers/run-kinds.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const campaign = campaignFromYaml;
const tempStore = () => tempStoreIn((close) => cleanups.push(close));

describe('campaign runner', () => {
  it('runs every planned conversation against the reference head unit over the bridge and stores each once', async () => {
    const loaded = campaign('name: t\nconversations: 12\nconcurrency: 3\npersonas: [polite, impatient]\nheadUnit: { type: reference, faults: { profiles: all, rate: 0.5 } }\n');
    const store = tempStore();
    const events: CampaignEvent['type'][] = [];
    const result = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config), onEvent: (e) => events.push(e.type) });
    expect(result).toMatchObject({ status: 'completed', done: 12, planned: 12 });
    const stored = [...store.conversations(result.runId)];
    expect(stored).toHaveLength(12);
    expect(new Set(stored.map((c) => c.spec.key)).size).toBe(12);
    expect(stored.every((c) => c.status === 'completed' && c.turns.length >= 1)).toBe(true);
    expect(stored.some((c) => c.turns.some((t) => t.verdicts[0].labels.length > 0))).toBe(true);
    expect(events[0]).toBe('run_started');
    expect(events.at(-1)).toBe('run_finished');
    expect(events.filter((e) => e === 'conversation_finished')).toHaveLength(12);
    expect(store.getRun(result.runId)!.status).toBe('completed');
  });

  it('records sut_error for a head unit that disconnects, times out, or sends malformed or oversized replies, and carries on', async () => {
    const loaded = campaign('name: misbehaving\nconversations: 10\nconcurrency: 1\n');
    const store = tempStore();
    const token = 'test-token';
    const bridge = await startBridgeServer({ token, turnTimeoutMs: 300, maxMessageBytes: 64 * 1024 });
    const reference = new ReferenceHeadUnit();
    let client: BridgeClient | null = null;
    // conversation index → how the head unit misbehaves on its second turn
    const misbehaviour: Record<string, 'disconnect' | 'timeout' | 'malformed' | 'oversized'> = { c00001: 'disconnect', c00003: 'timeout', c00005: 'malformed', c00007: 'oversized' };
    const handler: HeadUnitHandler = {
      unit: reference.unit,
      capabilities: reference.capabilities,
      startSession: (id, ctx) => reference.startSession(id, ctx),
      endSession: (id) => reference.endSession(id),
      async handleTurn(sessionId: string, turn: number, text: string, ctx: ContextVector | undefined): Promise<HeadUnitReplyBody> {
        const mode = Object.entries(misbehaviour).find(([k]) => sessionId.includes(`/${k}-`))?.[1];
        if (mode && turn === 1) {
          if (mode === 'disconnect') {
            setTimeout(() => void client?.close().then(async () => { client = await connectHeadUnit({ url: bridge.url, token, handler }); }), 10);
            return new Promise(() => undefined);
          }
          if (mode === 'timeout') return new Promise(() => undefined);
          if (mode === 'malformed') return { text: 42 } as unknown as HeadUnitReplyBody;
          return { text: 'x'.repeat(200 * 1024), actions: [] };
        }
        return reference.handleTurn(sessionId, turn, text, ctx);
      },
    };
    client = await connectHeadUnit({ url: bridge.url, token, handler });
    const connection = await bridge.waitForHeadUnit(5000);
    const connected: ConnectedHeadUnit = { connection, bridge, reference: null, ensureReady: bridgeReadiness(bridge, connection), close: async () => undefined };
    cleanups.push(async () => {
      await client?.close();
      await bridge.close();
    });
    const result = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config), headUnit: connected });
    expect(result.done).toBe(10);
    const stored = [...store.conversations(result.runId)];
    const byIndex = (k: string) => stored.find((c) => c.spec.key.startsWith(k))!;
    expect(byIndex('c00001')).toMatchObject({ status: 'sut_error' });
    expect(byIndex('c00001').error).toMatch(/disconnected/);
    expect(byIndex('c00003').error).toMatch(/timeout/);
    expect(byIndex('c00005').error).toMatch(/malformed/);
    expect(byIndex('c00007').error).toMatch(/too_large|disconnected/);
    // the turn before the failure is kept with the conversation
    for (const k of Object.keys(misbehaviour)) expect(byIndex(k).turns).toHaveLength(1);
    for (const k of ['c00000', 'c00002', 'c00004', 'c00006', 'c00008', 'c00009']) expect(byIndex(k).status).toBe('completed');
  });

  it('stops gracefully on abort and --resume finishes the rest without losing or repeating a conversation', async () => {
    const loaded = campaign('name: resumable\nconversations: 16\nconcurrency: 2\n');
    const store = tempStore();
    const tiers = await buildTiers(loaded.config);
    const controller = new AbortController();
    let finished = 0;
    const first = await runCampaign(loaded, {
      store,
      tiers,
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'conversation_finished' && ++finished === 5) controller.abort();
      },
    });
    expect(first.status).toBe('interrupted');
    const afterFirst = [...store.conversations(first.runId)].map((c) => c.spec.key);
    expect(afterFirst.length).toBeGreaterThanOrEqual(5);
    expect(afterFirst.length).toBeLessThan(16);
    const second = await runCampaign(loaded, { store, tiers, resumeRunId: first.runId });
    expect(second).toMatchObject({ runId: first.runId, status: 'completed', done: 16 });
    const keys = [...store.conversations(first.runId)].map((c) => c.spec.key);
    expect(keys).toHaveLength(16);
    expect(new Set(keys).size).toBe(16);
    expect(keys).toEqual(expect.arrayContaining(afterFirst));
  });

  it('stops starting conversations when the time budget is spent', async () => {
    const loaded = campaign('name: budget\nconversations: 50\nconcurrency: 1\nbudgetMinutes: 0.000001\n');
    const store = tempStore();
    const result = await runCampaign(loaded, { store, tiers: await buildTiers(loaded.config) });
    expect(result.status).toBe('budget_exhausted');
    expect(result.done).toBeLessThan(50);
    expect(store.getRun(result.runId)!.status).toBe('budget_exhausted');
  });
});
