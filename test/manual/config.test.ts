import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadManualQaConfig, planManualQa } from '../../src/manual/config.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

describe('the manual-QA campaign config (kind: manual-qa)', () => {
  it('loads bench-configs/manual-qa.yaml and plans a seeded sample of the deterministic questions', async () => {
    const loaded = loadManualQaConfig(resolve(REPO_ROOT, 'bench-configs/manual-qa.yaml'));
    expect(loaded.files).toHaveLength(41);
    expect(loaded.config.manualFaults.profiles).toBe('all');
    const first = await planManualQa(loaded);
    expect(first.items).toHaveLength(300);
    const again = await planManualQa(loaded);
    expect(again.items.map((i) => i.id)).toEqual(first.items.map((i) => i.id));
  });

  it('rejects an unknown key and a bad kind with the file, the line and the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'manual-qa-'));
    writeFileSync(join(dir, 'bad.yaml'), 'kind: manual-qa\nname: x\nmanual: [a.md]\nkinds: [gossip]\nquestions: 3\n');
    expect(() => loadManualQaConfig(join(dir, 'bad.yaml'))).toThrow(/bad\.yaml:4: kinds: expected "all" or a list of question kinds \(definition, procedure, troubleshooting, safety, maintenance\)[\s\S]*bad\.yaml:1: \(top level\): Unrecognized key: "questions"/);
  });
});
