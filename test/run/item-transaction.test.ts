import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaignKind, type AnyCampaignKind } from '../../src/kinds/registry.ts';
import { readRunFacts, RUN_FACTS } from '../../src/run/run-facts.ts';
import { openItemRunner } from '../../src/run/envelope.ts';
import { ResultStore } from '../../src/store/store.ts';
import { startFakeLlmServer, type FakeLlmServer } from '../helpers/fakeLlmServer.ts';
import { dataPath } from '../helpers/repoData.ts';
import { manualResponder } from '../manual/helpers.ts';

/**
 * The kinds stored as item results keep each item's model calls (`llm.calls`) in the item's own transaction
 * (KindStorage.save): running an item writes nothing to the store, so a SIGKILL before its save loses the item and its
 * calls together (the item runs again on resume, its calls with it), and a save that fails writes neither.
 */
describe('manual-qa and tool-agents store an item and its model calls in one transaction', () => {
  let server: FakeLlmServer;
  let dir: string;
  const chapters = readdirSync(dataPath('bmw-manual/xml'))
    .filter((f) => f.endsWith('.xml'))
    .sort()
    .slice(0, 2)
    .map((f) => dataPath(`bmw-manual/xml/${f}`));
  beforeAll(async () => {
    const manual = manualResponder();
    // one server for both kinds: the policy judge's request names its model, the manual evaluator's does not
    server = await startFakeLlmServer({
      models: ['judge-model'],
      respond: (request) => (JSON.stringify(request.body.messages).includes('expert data labeler') ? { content: JSON.stringify({ reasoning: 'fine', policy_followed: true }), promptTokens: 80, completionTokens: 5 } : manual(request)),
    });
    dir = mkdtempSync(join(tmpdir(), 'item-transaction-'));
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify(JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')).slice(0, 2)));
  });
  afterAll(() => server?.close());

  const configs = (ref: string): Record<string, string> => ({
    'manual-qa': `kind: manual-qa\nname: manual-tx\nmanual: ${JSON.stringify(chapters)}\nlimit: 2\njudges: [oracle, "${ref}"]\n`,
    'tool-agents': `kind: tool-agents\nname: tools-tx\ntasks: [tasks.json]\nrepeats: 1\njudges: ["${ref}", rule]\n`,
  });

  for (const kindName of ['manual-qa', 'tool-agents']) {
    it(`${kindName}: an item's calls travel with it to its save; a save that fails writes neither`, async () => {
      const ref = `openai-compat:${server.url}/v1#judge-model`;
      const path = join(dir, `${kindName}.yaml`);
      writeFileSync(path, configs(ref)[kindName]);
      const kind: AnyCampaignKind = await campaignKind(kindName);
      const loaded = kind.load(path);
      const plan = await kind.plan(loaded, () => undefined);
      const store = ResultStore.open(join(dir, `${kindName}.db`));
      const runner = await openItemRunner(kind, loaded, {});
      try {
        const runId = kind.storage.create(store, loaded, plan, runner.meta);
        const invocation = runner.record(store, runId, () => undefined);
        const before = server.chatRequests().length;
        const finished = await runner.run(runId, plan[0], new AbortController().signal, () => undefined);
        const made = server.chatRequests().length - before;
        expect(made).toBeGreaterThan(0);
        // the item ran and made its calls, and the store holds neither yet: a kill here loses both, never one of them
        expect(readRunFacts(store, runId, RUN_FACTS.llmCalls)).toEqual([]);
        expect(store.itemResults(runId, { done: true })).toEqual([]);
        expect(finished.facts).toEqual([{ kind: RUN_FACTS.llmCalls, data: { conversation: plan[0].key, calls: expect.any(Array) } }]);
        expect(finished.facts[0].data.calls).toHaveLength(made);

        kind.storage.save(store, runId, plan[0].key, finished);
        expect(store.itemResults(runId, { done: true }).map((row) => row.key)).toEqual([plan[0].key]);
        expect(readRunFacts(store, runId, RUN_FACTS.llmCalls).map((fact) => [fact.conversation, fact.calls.length])).toEqual([[plan[0].key, made]]);
        // the same item again: the store refuses it, and its calls are not written either (one transaction)
        expect(() => kind.storage.save(store, runId, plan[0].key, finished)).toThrow(/already stored/);
        expect(readRunFacts(store, runId, RUN_FACTS.llmCalls)).toHaveLength(1);
        // a fact the store refuses after the item's row was written: the whole save rolls back, the item is not stored
        const second = await runner.run(runId, plan[1], new AbortController().signal, () => undefined);
        expect(() => kind.storage.save(store, runId, plan[1].key, { ...second, facts: [...second.facts, { kind: '', data: null }] })).toThrow(/a fact needs a kind/);
        expect(store.itemResults(runId, { done: true }).map((row) => row.key)).toEqual([plan[0].key]);
        expect(readRunFacts(store, runId, RUN_FACTS.llmCalls)).toHaveLength(1);
        invocation.invocationEnded();
      } finally {
        await runner.close();
        store.close();
      }
    }, 120_000);
  }
});
