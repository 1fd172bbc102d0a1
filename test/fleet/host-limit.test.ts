import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { openFleetRunner } from '../../src/fleet/coordinator.ts';
import { dialogueKind } from '../../src/kinds/dialogue/kind.ts';
import { ResultStore } from '../../src/store/store.ts';
import { benchModelResponder, startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { spawnFixtureWorker, stopWorker, waitForWorkers, type WorkerProcess } from './helpers.ts';
import { startRedis, type TestRedis } from './redis-server.ts';
import { runCampaign } from '../helpers/run-kinds.ts';

describe('shared model-host limit across the fleet', () => {
  let redis: TestRedis;
  let model: FakeLlmServer;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    model = await startFakeLlmServer({ respond: benchModelResponder(), latencyMs: 40, models: ['judge'] });
  });
  afterAll(async () => {
    await Promise.all(workers.map(stopWorker));
    await model?.close();
    await redis?.stop();
  });

  it('6 workers against a model server with 4 slots: never more than 4 calls at once', { timeout: 240_000 }, async () => {
    const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
    campaign.config.conversations = 24;
    campaign.config.judges = [`openai-compat:${model.url}/v1#judge`];
    campaign.config.llm.maxConcurrent = 4;
    // each worker alone would send up to 4 (its own limiter), 6 of them up to 24 without the shared limit (21 measured with it switched off)
    for (let i = 0; i < 6; i++) workers.push(spawnFixtureWorker(redis.url, `gpu-client-${i}`, { concurrency: 3 }));
    await waitForWorkers(redis.url, 6);
    const store = ResultStore.open(join(mkdtempSync(join(tmpdir(), 'icabench-fleet-limit-')), 'icabench.db'));
    try {
      const executor = await openFleetRunner(dialogueKind, campaign, { redisUrl: redis.url, log: () => undefined, progressMs: 0 });
      const result = await runCampaign(campaign, { store, executor });
      expect(result.status).toBe('completed');
      expect([...store.conversations(result.runId)].every((c) => c.verdicts[0]?.judge === campaign.config.judges[0])).toBe(true);
      expect(model.chatRequests().length).toBeGreaterThan(24);
      expect(model.peakConcurrent).toBeLessThanOrEqual(4);
    } finally {
      store.close();
    }
  });
});
