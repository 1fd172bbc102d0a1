import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadManualCorpus, loadManualQaConfig, manualSkillFor, planManualQa } from '../../src/kinds/manual-qa/config.ts';
import { ManualCorpus } from '../../src/manual/corpus.ts';
import { buildManualIndex } from '../../src/manual/manual-index.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

describe('the manual-QA campaign config (kind: manual-qa)', () => {
  it('loads bench-configs/manual-qa.yaml and plans a seeded sample of the deterministic questions', async () => {
    const loaded = loadManualQaConfig(resolve(REPO_ROOT, 'bench-configs/manual-qa.yaml'));
    expect(loaded.files).toHaveLength(41);
    expect(loaded.config.manualFaults.profiles).toBe('all');
    const corpus = await loadManualCorpus(loaded);
    const first = await planManualQa(loaded, corpus);
    expect(first.items).toHaveLength(300);
    expect(first.generation).toBeNull();
    const again = await planManualQa(loaded, corpus);
    expect(again.items.map((i) => i.id)).toEqual(first.items.map((i) => i.id));
  }, 300_000);

  it('rejects an unknown key and a bad kind with the file, the line and the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'manual-qa-'));
    writeFileSync(join(dir, 'bad.yaml'), 'kind: manual-qa\nname: x\nmanual: [a.md]\nkinds: [gossip]\nquestions: 3\n');
    expect(() => loadManualQaConfig(join(dir, 'bad.yaml'))).toThrow(/bad\.yaml:4: kinds: expected "all" or a list of question kinds \(definition, procedure, troubleshooting, safety, maintenance\)[\s\S]*bad\.yaml:5: questions: unknown key "questions" \(allowed here: kind, name, /);
  });

  it('dense retrieval names its embedder: the TF-IDF fallback when the configured model is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'manual-qa-'));
    writeFileSync(join(dir, 'car.md'), '# Car\n## Washing\n1. Fold in the mirrors.\n2. Switch off the rain sensor.\n## Tires\nCheck the pressure monthly.\n');
    writeFileSync(join(dir, 'dense.yaml'), `kind: manual-qa\nname: d\nmanual: [car.md]\nretrieval: dense\nembeddingModel: ${join(dir, 'no-model')}\n`);
    const loaded = loadManualQaConfig(join(dir, 'dense.yaml'));
    const corpus = new ManualCorpus(await buildManualIndex(loaded.files));
    const lines: string[] = [];
    const { skill, retrieval, close } = await manualSkillFor(loaded.config, corpus, (l) => lines.push(l));
    expect(retrieval).toMatch(/^dense \(lexical TF-IDF fallback/);
    expect(lines.join('\n')).toMatch(/Fix: /);
    const answer = await skill.answer('What are the steps for washing?', () => false);
    expect(answer.text).toContain('1. Fold in the mirrors.');
    await close();
  });
});
