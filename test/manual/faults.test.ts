import { beforeAll, describe, expect, it } from 'vitest';
import { MANUAL_FAULT_PROFILE_NAMES, MANUAL_FAULT_PROFILES, ManualQaSkill, type ManualFaultProfile } from '../../src/headunit/reference/manual-skill.ts';
import type { ManualCorpus } from '../../src/manual/corpus.ts';
import { DeterministicManualEvaluator } from '../../src/manual/evaluate.ts';
import { MANUAL_METRICS, metricFails } from '../../src/manual/model.ts';
import { Bm25Retriever } from '../../src/manual/retrieval.ts';
import { generateDeterministicTestSet, type TestItem } from '../../src/manual/testset.ts';
import { bmwCorpus } from './helpers.ts';

describe('the deterministic evaluator against the reference manual-QA skill (41 BMW chapters)', () => {
  let corpus: ManualCorpus;
  let items: TestItem[];
  let skill: ManualQaSkill;
  let evaluator: DeterministicManualEvaluator;
  // every question of the 41 chapters: minutes on a loaded 2-core machine
  beforeAll(async () => {
    corpus = await bmwCorpus();
    items = generateDeterministicTestSet(corpus);
    skill = new ManualQaSkill(corpus, new Bm25Retriever(corpus.chunks));
    evaluator = new DeterministicManualEvaluator(corpus);
  });

  it('faults off: no metric flags an answer taken from the question’s section (0 false alarms); retrieval misses stay under 2 %', async () => {
    let misses = 0;
    const alarms: string[] = [];
    for (const item of items) {
      const answer = await skill.answer(item.question, () => false);
      expect(answer.fired).toEqual([]);
      // answering from another section is the skill's own failure (its retrieval), not a false alarm
      if (!item.sectionIds.includes(answer.sectionId!)) {
        misses++;
        continue;
      }
      const evaluation = evaluator.evaluate(item, answer.text);
      for (const metric of MANUAL_METRICS) if (metricFails(evaluation.metrics[metric])) alarms.push(`${item.id} ${metric}`);
      // a clean answer from the right section is on the question's topic, sentence by sentence
      expect(evaluation.metrics.relevance).toMatchObject({ status: 'judged', value: 1 });
    }
    expect(alarms).toEqual([]);
    expect(misses / items.length).toBeLessThan(0.02);
  }, 600_000);

  // every third question keeps the run short; each profile still fires on hundreds of questions
  it.each(MANUAL_FAULT_PROFILE_NAMES)('%s is detected by the metric it targets on at least 95 percent of the questions where it fires', async (profile: ManualFaultProfile) => {
    let fired = 0;
    let detected = 0;
    for (const item of items.filter((_, i) => i % 3 === 0)) {
      const answer = await skill.answer(item.question, (p) => p === profile);
      if (!answer.fired.includes(profile) || !item.sectionIds.includes(answer.sectionId!)) continue;
      fired++;
      if (metricFails(evaluator.evaluate(item, answer.text).metrics[MANUAL_FAULT_PROFILES[profile]])) detected++;
    }
    expect(fired).toBeGreaterThan(100);
    expect(detected / fired).toBeGreaterThanOrEqual(0.95);
  }, 600_000);
});
