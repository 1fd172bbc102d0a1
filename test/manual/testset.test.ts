import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeterministicManualEvaluator } from '../../src/manual/evaluate.ts';
import { generateDeterministicTestSet, onePerSection, readTestSet, TESTSET_FORMAT, writeTestSet, type TestItem } from '../../src/manual/testset.ts';
import { bmwCorpus, readWarningsCsv } from './helpers.ts';

describe('deterministic test set and the warnings oracle (41 BMW chapters)', () => {
  it('covers every procedure and every warning; questions are unique', async () => {
    const corpus = await bmwCorpus();
    const items = generateDeterministicTestSet(corpus);
    const used = new Set(items.flatMap((i) => i.chunkIds));
    const procedures = corpus.chunks.filter((c) => c.kind === 'procedure');
    expect(procedures.length).toBe(558);
    expect(procedures.filter((p) => !used.has(p.id)).map((p) => p.id)).toEqual([]);
    const warned = new Set(items.flatMap((i) => i.warningIds));
    expect(corpus.warnings().filter((w) => !warned.has(w.id)).map((w) => w.id)).toEqual([]);
    expect(new Set(items.map((i) => i.question)).size).toBe(items.length);
    expect(new Set(items.map((i) => i.kind))).toEqual(new Set(['procedure', 'troubleshooting', 'maintenance', 'safety', 'definition']));
    // steps are essential and ordered; statements optional
    for (const item of items) {
      for (const fact of item.facts) {
        if (fact.role === 'step') expect(fact.essential && !fact.safetyCritical && fact.order !== null).toBe(true);
        if (fact.role === 'statement') expect(fact.safetyCritical).toBe(false);
      }
    }
  }, 300_000);

  it('warnings oracle: the safety-critical tags are exactly the warnings.csv ids of these chapters (P = R = 1.0)', async () => {
    const corpus = await bmwCorpus();
    const items = generateDeterministicTestSet(corpus);
    const evaluator = new DeterministicManualEvaluator(corpus);
    // the tags as SplitTag's deterministic tier reports them (on any answer; the tags do not depend on it)
    const tagged = new Set<string>();
    for (const item of items) {
      const evaluation = evaluator.evaluate(item, '');
      for (const fact of evaluation.referenceFacts) {
        if (!fact.safetyCritical) continue;
        const source = item.facts.find((f) => f.id === fact.id)!;
        tagged.add(source.warningId!);
      }
    }
    const chapterIds = new Set(corpus.chunks.map((c) => c.id));
    const truth = new Set(readWarningsCsv().map((w) => w.id).filter((id) => chapterIds.has(id)));
    const tp = [...tagged].filter((id) => truth.has(id)).length;
    expect(truth.size).toBe(375);
    expect(tp / tagged.size).toBe(1);
    expect(tp / truth.size).toBe(1);
  }, 300_000);

  it('round-trips through JSONL; a bad line fails with the file, the line and the field', async () => {
    const corpus = await bmwCorpus();
    const items = generateDeterministicTestSet(corpus).slice(0, 20);
    const dir = mkdtempSync(join(tmpdir(), 'testset-'));
    await writeTestSet(join(dir, 'set.jsonl'), items);
    expect(await readTestSet(join(dir, 'set.jsonl'))).toEqual(items);
    const lines = items.slice(0, 3).map((i) => JSON.stringify(i));
    lines[1] = JSON.stringify({ ...items[1], kind: 'gossip' });
    writeFileSync(join(dir, 'bad.jsonl'), `${lines.join('\n')}\n`);
    await expect(readTestSet(join(dir, 'bad.jsonl'))).rejects.toThrow(/bad\.jsonl:2: kind: Invalid option/);
    writeFileSync(join(dir, 'dup.jsonl'), `${JSON.stringify(items[0])}\n${JSON.stringify(items[0])}\n`);
    await expect(readTestSet(join(dir, 'dup.jsonl'))).rejects.toThrow(/dup\.jsonl:2: id .* appears twice/);
  }, 300_000);
});

describe('one question per section (GEAR samples its evaluation set so)', () => {
  const at = (id: string, section: string): TestItem => ({ format: TESTSET_FORMAT, id, kind: 'procedure', difficulty: 'beginner', question: `${id}?`, answer: '', facts: [], chapter: 'c', sectionIds: [section, 'other'], chunkIds: [], warningIds: [], generator: 'deterministic', parentId: null });

  it('keeps one of each main section, in the order the sections first appear, the same for the same seed', () => {
    // sections A (3 questions), B (1), C (2): 6 questions → 3, one per main section; "other" (a second section) is not a main section
    const items = [at('a1', 'A'), at('b1', 'B'), at('a2', 'A'), at('c1', 'C'), at('a3', 'A'), at('c2', 'C')];
    const picked = onePerSection(items, 7);
    expect(picked.map((i) => i.sectionIds[0])).toEqual(['A', 'B', 'C']);
    expect(['a1', 'a2', 'a3']).toContain(picked[0].id);
    expect(picked[1].id).toBe('b1');
    expect(['c1', 'c2']).toContain(picked[2].id);
    expect(onePerSection(items, 7)).toEqual(picked);
    // every question of a section can be the one: over seeds, each of A's three is drawn
    expect(new Set(Array.from({ length: 40 }, (_, seed) => onePerSection(items, seed)[0].id))).toEqual(new Set(['a1', 'a2', 'a3']));
  });

  it('on the vendored manual: as many questions as main sections, each section once', async () => {
    const all = generateDeterministicTestSet(await bmwCorpus());
    const sections = new Set(all.map((i) => i.sectionIds[0]));
    const picked = onePerSection(all, 42);
    expect(picked).toHaveLength(sections.size);
    expect(new Set(picked.map((i) => i.sectionIds[0]))).toEqual(sections);
  }, 120_000);
});
