import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { writeRunOutputs } from '../../src/report/write.ts';
import { exportJsonl } from '../../src/store/export.ts';
import { ResultStore } from '../../src/store/store.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

/**
 * `icabench report` and `export` stream a run from the store: each conversation is used only while it is the one the
 * stream is at. The store here hands out every conversation as a revocable view (every object inside it too) and
 * revokes it when the stream moves on to the next one, so a report that kept conversations to use later (a list of
 * the run, a second look at an earlier one) fails on the revoked view instead of silently holding the run in memory.
 */

/** A deep, revocable view of `value`: nested objects are views too, all revoked by the returned `revoke`. */
function revocableView<T extends object>(value: T): { view: T; revoke: () => void } {
  const revokers: Array<() => void> = [];
  // one view per object, so identity comparisons (the deciding verdict is one of the verdicts) hold as on the original
  const views = new WeakMap<object, object>();
  const wrap = <V extends object>(target: V): V => {
    const known = views.get(target);
    if (known) return known as V;
    const { proxy, revoke } = Proxy.revocable(target, {
      get(object, property, receiver) {
        const inner = Reflect.get(object, property, receiver);
        // frozen/non-configurable data properties must return their own value (a Proxy invariant)
        const descriptor = Reflect.getOwnPropertyDescriptor(object, property);
        if (descriptor && !descriptor.configurable && !descriptor.writable) return inner;
        return inner !== null && typeof inner === 'object' ? wrap(inner) : inner;
      },
    });
    revokers.push(revoke);
    views.set(target, proxy);
    return proxy;
  };
  return { view: wrap(value), revoke: () => revokers.forEach((revoke) => revoke()) };
}

/** The store, but its conversation stream revokes each conversation once the next is asked for (and at its end); counts how many were live at most. */
function streamingOnly(store: ResultStore): { store: ResultStore; streams: () => number; mostLive: () => number } {
  let streams = 0;
  let live = 0;
  let mostLive = 0;
  const wrapped = Object.create(store) as ResultStore;
  wrapped.conversations = function* (runId: string): Generator<ConversationResult> {
    streams++;
    for (const result of store.conversations(runId)) {
      const { view, revoke } = revocableView(result);
      live++;
      mostLive = Math.max(mostLive, live);
      try {
        yield view;
      } finally {
        revoke();
        live--;
      }
    }
  };
  return { store: wrapped, streams: () => streams, mostLive: () => mostLive };
}

const filesOf = (dir: string) => Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));

describe('report and export stream the run from the store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-streaming-'));
  let store: ResultStore;
  let runId: string;

  beforeAll(async () => {
    const campaign = loadCampaignConfig(resolve('bench-configs/quickstart.yaml'));
    campaign.config.conversations = 24;
    store = ResultStore.open(join(dir, 'icabench.db'));
    ({ runId } = await runCampaign(campaign, { store }));
  }, 120_000);

  it('writes the same report files using each conversation only while the stream is at it', async () => {
    (await writeRunOutputs(store, runId, join(dir, 'plain'), { unit: 'the built-in reference head unit', faults: null })).summary;
    const streaming = streamingOnly(store);
    (await writeRunOutputs(streaming.store, runId, join(dir, 'streamed'), { unit: 'the built-in reference head unit', faults: null })).summary;
    expect(streaming.streams()).toBeGreaterThan(0);
    expect(streaming.mostLive()).toBe(1);
    expect(filesOf(join(dir, 'streamed'))).toEqual(filesOf(join(dir, 'plain')));
    // the run has failing conversations, so the failure-diversity section (which keeps a text per failing conversation) ran
    expect(JSON.parse(readFileSync(join(dir, 'plain', 'summary.json'), 'utf8')).diversity.failing).toBeGreaterThan(0);
  });

  it('exports the same JSONL the same way', async () => {
    const read = async (from: ResultStore) => {
      const out = new PassThrough();
      const chunks: Buffer[] = [];
      out.on('data', (chunk: Buffer) => chunks.push(chunk));
      const lines = await exportJsonl(from, runId, out);
      out.end();
      return { lines, text: Buffer.concat(chunks).toString('utf8') };
    };
    const streaming = streamingOnly(store);
    const [plain, streamed] = [await read(store), await read(streaming.store)];
    expect(streamed).toEqual(plain);
    expect(plain.lines).toBe(24);
    expect(streaming.mostLive()).toBe(1);
  });
});
