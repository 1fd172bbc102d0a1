import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIGS_DIR, startHarness, type Harness } from './helpers.ts';

/**
 * The bench app's start, live snapshot, stop and resume for every kind other than dialogue (the dialogue kind's:
 * server.test.ts), with the real runner on the shipped configs, each edited to a plan long enough that a stop sent
 * right after the start lands mid-run (items take milliseconds).
 */
const KINDS = [
  { config: 'carbench-train.yaml', kind: 'tool-agents', items: 'task trials', edit: (text: string) => text.replace(/^repeats: \d+$/m, 'repeats: 5') },
  { config: 'manual-qa.yaml', kind: 'manual-qa', items: 'questions', edit: (text: string) => text },
  { config: 'suite-basics.yaml', kind: 'suite', items: 'conversations', edit: (text: string) => `${text.replace(/^concurrency: \d+$/m, 'concurrency: 2')}repeats: 10\n` },
] as const;

async function finished(h: Harness): Promise<{ state: string; finalStatus: string; kind: string; nouns: { items: string }; runId: string; error: string | null }> {
  for (;;) {
    const live = (await h.api('/api/campaign')).json;
    if (live.state === 'finished' || live.state === 'failed') return live;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(KINDS)('the bench app runs a $kind campaign', ({ config, kind, items, edit }) => {
  it('starts it, stops it mid-run, lists it resumable, resumes it under the same run id to its end', { timeout: 300_000 }, async () => {
    const h = await startHarness();
    try {
      const text = edit(readFileSync(join(CONFIGS_DIR, config), 'utf8'));
      const started = await h.api('/api/campaign/start', { body: { configName: config, text } });
      expect(started.status, JSON.stringify(started.json)).toBe(202);
      const runId: string = started.json.runId;
      const stopped = await h.api('/api/campaign/stop', { body: {} });
      expect(stopped.json).toMatchObject({ state: 'finished', finalStatus: 'interrupted', kind, nouns: { items } });
      const interrupted = h.store.getRun(runId)!;
      expect(interrupted.status).toBe('interrupted');
      expect(interrupted.stored).toBeLessThan(interrupted.planned);
      expect((await h.api(`/api/runs/${runId}`)).json.run).toMatchObject({ status: 'interrupted', resumeRefusal: null });

      const resumed = await h.api('/api/campaign/resume', { body: { runId } });
      expect(resumed.status, JSON.stringify(resumed.json)).toBe(202);
      expect(resumed.json.runId).toBe(runId);
      const live = await finished(h);
      expect(live, live.error ?? '').toMatchObject({ state: 'finished', finalStatus: 'completed', runId, kind, nouns: { items } });
      const done = h.store.getRun(runId)!;
      expect(done).toMatchObject({ status: 'completed', stored: interrupted.planned, planned: interrupted.planned });
      expect(h.store.listRuns()).toHaveLength(1);
      // its page's summary comes from the store, as summary.json does
      const summary = await h.api(`/api/runs/${runId}/summary.json`);
      expect(summary.status).toBe(200);
      expect(JSON.stringify(summary.json)).toContain(runId);
    } finally {
      await h.close();
    }
  });
});
