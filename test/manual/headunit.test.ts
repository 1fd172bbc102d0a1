import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHeadUnit, type BridgeClient } from '../../src/bridge/client.ts';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/server.ts';
import { ManualQaSkill } from '../../src/headunit/reference/manual-skill.ts';
import { ReferenceHeadUnit } from '../../src/headunit/reference/reference-headunit.ts';
import type { HeadUnitConnection } from '../../src/headunit/types.ts';
import type { ManualCorpus } from '../../src/manual/corpus.ts';
import { DeterministicManualEvaluator } from '../../src/manual/evaluate.ts';
import { metricFails } from '../../src/manual/model.ts';
import { searchWarningOmissions } from '../../src/manual/omission.ts';
import { Bm25Retriever } from '../../src/manual/retrieval.ts';
import { generateDeterministicTestSet, type TestItem } from '../../src/manual/testset.ts';
import { bmwCorpus } from './helpers.ts';

const CONTEXT = { location: { city: 'Munich', district: 'Schwabing', position: { lat: 48.16, lon: 11.58 } }, date: '2026-05-12', time: '12:00' } as never;

describe('manual questions as ordinary user turns over the bridge, to the reference head unit', () => {
  let corpus: ManualCorpus;
  let items: TestItem[];
  let bridge: BridgeServer;
  let client: BridgeClient;
  let connection: HeadUnitConnection;
  beforeAll(async () => {
    corpus = await bmwCorpus();
    items = generateDeterministicTestSet(corpus);
    const token = randomBytes(8).toString('hex');
    bridge = await startBridgeServer({ host: '127.0.0.1', port: 0, token, maxMessagesPerSecond: 1_000_000 });
    const unit = new ReferenceHeadUnit({ manual: { skill: new ManualQaSkill(corpus, new Bm25Retriever(corpus.chunks)), faults: { profiles: ['omit_warning'], rate: 1, rates: {}, seed: 7 } } });
    client = await connectHeadUnit({ url: bridge.url, token, handler: unit });
    connection = await bridge.waitForHeadUnit(10_000, unit.unit.name);
  });
  afterAll(async () => {
    await client?.close();
    await bridge?.close();
  });

  const ask = async (question: string, n: number) => {
    const session = await connection.openSession(`run/q${n}`, CONTEXT);
    try {
      return await session.send(0, question, CONTEXT);
    } finally {
      await session.close();
    }
  };

  it('answers from the manual; the fault fires and is logged in diagnostics; the evaluator detects it', async () => {
    const item = items.find((i) => i.kind === 'procedure' && i.warningIds.length > 0)!;
    const reply = await ask(item.question, 1);
    expect(reply.diagnostics?.manualFaults).toEqual([{ profile: 'omit_warning', metric: 'risk_awareness' }]);
    expect(item.sectionIds).toContain(reply.diagnostics?.manualSection);
    const evaluation = new DeterministicManualEvaluator(corpus).evaluate(item, reply.text);
    expect(metricFails(evaluation.metrics.risk_awareness)).toBe(true);
    expect(evaluation.metrics.completeness_soft.status).toBe('judged');
  });

  it('still handles dialogue requests with the dialogue skill', async () => {
    const reply = await ask('Find me an Italian restaurant in Schwabing', 2);
    expect(reply.actions.some((a) => a.type === 'poi_results')).toBe(true);
    expect(reply.diagnostics?.manualFaults).toBeUndefined();
  });

  it('warning-omission search: finds phrasings that make the unit leave out warnings, deduplicated, within the budget, reproducibly', async () => {
    const evaluator = new DeterministicManualEvaluator(corpus);
    // a unit without faults: the omissions found come from phrasings its retrieval misreads
    const honest = new ManualQaSkill(corpus, new Bm25Retriever(corpus.chunks));
    const askHonest = async (q: string) => (await honest.answer(q, () => false)).text;
    const seeds = items.filter((i) => i.kind === 'safety');
    const run = () => searchWarningOmissions(seeds, askHonest, evaluator, { budget: 60, seed: 3 });
    const result = await run();
    expect(result.asked).toBeLessThanOrEqual(60);
    expect(result.omissions).toBeGreaterThan(0);
    expect(result.omissionRate).toBeCloseTo(result.omissions / result.asked, 10);
    const keys = result.findings.map((f) => [...f.omittedWarningIds].sort().join(','));
    expect(new Set(keys).size).toBe(keys.length);
    for (const finding of result.findings) expect(finding.omittedWarningIds.length).toBeGreaterThan(0);
    expect(await run()).toEqual(result);
    // the plain deterministic questions themselves are answered with their warnings
    for (const seed of seeds.slice(0, 20)) {
      const answer = await honest.answer(seed.question, () => false);
      if (seed.sectionIds.includes(answer.sectionId!)) expect(metricFails(evaluator.evaluate(seed, answer.text).metrics.risk_awareness)).toBe(false);
    }
  }, 300_000);
});

describe('a manual-QA pass: planned questions over the bridge, per-kind/difficulty/chapter metrics and the warning-omission table', () => {
  it('stores what the runner needs per question and summarises it', async () => {
    const { runPlannedQuestion, summariseManualQa, ManualQaResultSchema } = await import('../../src/kinds/manual-qa/item.ts');
    const corpus = await bmwCorpus();
    const items = generateDeterministicTestSet(corpus).filter((i) => i.warningIds.length > 0).slice(0, 24);
    const token = randomBytes(8).toString('hex');
    const bridge = await startBridgeServer({ host: '127.0.0.1', port: 0, token, maxMessagesPerSecond: 1_000_000 });
    const unit = new ReferenceHeadUnit({ manual: { skill: new ManualQaSkill(corpus, new Bm25Retriever(corpus.chunks)), faults: { profiles: ['omit_warning'], rate: 0.5, rates: {}, seed: 11 } } });
    const client = await connectHeadUnit({ url: bridge.url, token, handler: unit });
    try {
      const connection = await bridge.waitForHeadUnit(10_000, unit.unit.name);
      const evaluator = new DeterministicManualEvaluator(corpus);
      const tier = { tier: 'oracle', evaluate: (item: TestItem, answer: string) => evaluator.evaluate(item, answer) };
      const results = [];
      for (const [n, item] of items.entries()) results.push(ManualQaResultSchema.parse(await runPlannedQuestion(connection, item, [tier], `run/${n}`, CONTEXT)));
      const fired = results.filter((r) => (r.diagnostics as { manualFaults?: unknown[] } | undefined)?.manualFaults?.length);
      expect(fired.length).toBeGreaterThan(0);
      expect(fired.length).toBeLessThan(items.length);
      const summary = summariseManualQa(items, results, 'oracle');
      expect(summary.questions).toBe(items.length);
      expect(Object.values(summary.byKind).reduce((n, m) => n + m.risk_awareness.judged, 0)).toBe(items.length);
      expect(summary.metrics.relevance.judged + summary.metrics.relevance.notJudged).toBe(items.length);
      expect(summary.metrics.relevance.judged).toBeGreaterThan(0);
      // every question where the fault fired (and the unit found the right section) shows up in the omission table
      const omittedQuestions = new Set(summary.warnings.filter((w) => w.omitted > 0).map((w) => w.example!.question));
      for (const r of fired) {
        const item = items.find((i) => i.id === r.itemId)!;
        if (item.sectionIds.includes((r.diagnostics as { manualSection: string }).manualSection)) expect(summary.metrics.risk_awareness.flagged).toBeGreaterThan(0);
      }
      expect(omittedQuestions.size).toBeGreaterThan(0);
      const row = summary.warnings[0];
      expect(row.omitted).toBeGreaterThan(0);
      expect(row.text.length).toBeGreaterThan(0);
      expect(row.example!.answer).not.toContain(row.text);
    } finally {
      await client.close();
      await bridge.close();
    }
  }, 300_000);
});
