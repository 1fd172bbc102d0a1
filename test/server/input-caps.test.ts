import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_LIMITS, limitBytes, type FileLimit } from '../../src/domain/input-files.ts';
import { startHarness } from './helpers.ts';

/**
 * A campaign started from the bench app whose config names a file over its size cap (#34 item 7): the start is
 * refused with a 4xx naming the file, its size, the cap and the variable that raises it, and no run is stored.
 */
const CASES: Array<{ kind: string; file: string; limit: FileLimit; what: string; config: (file: string, workspace: string) => string }> = [
  { kind: 'manual-qa (manual)', file: 'big.md', limit: FILE_LIMITS.manual, what: 'manual file', config: (file) => `kind: manual-qa\nname: big manual\nmanual: [${file}]\n` },
  {
    kind: 'manual-qa (test set)',
    file: 'big.jsonl',
    limit: FILE_LIMITS.testSet,
    what: 'test set',
    config: (file, workspace) => {
      writeFileSync(join(workspace, 'car.md'), '# Car\n## Washing\n1. Fold in the mirrors.\n2. Switch off the rain sensor.\n');
      return `kind: manual-qa\nname: big test set\nmanual: [${join(workspace, 'car.md')}]\ntestSet: ${file}\n`;
    },
  },
  { kind: 'tool-agents (task file)', file: 'big.json', limit: FILE_LIMITS.taskFile, what: 'task file', config: (file) => `kind: tool-agents\nname: big tasks\ntasks: [${file}]\nrepeats: 1\n` },
];

describe('the bench app refuses a campaign whose files are over their size cap', () => {
  it.each(CASES)('$kind: 422, the file, its size and the cap named, nothing stored', { timeout: 120_000 }, async ({ file, limit, what, config }) => {
    const h = await startHarness();
    try {
      const path = join(h.workspace, file);
      writeFileSync(path, '');
      truncateSync(path, limitBytes(limit) + 1);
      const started = await h.api('/api/campaign/start', { body: { configName: 'manual-qa.yaml', text: config(path, h.workspace) } });
      expect(started.status, JSON.stringify(started.json)).toBe(422);
      expect(started.json.error.code).toBe('campaign_failed');
      expect(started.json.error.message).toContain(`${path}: the ${what} is `);
      expect(started.json.error.message).toContain(`larger than the limit of ${limitBytes(limit) / 2 ** 20} MiB`);
      expect(started.json.error.message).toContain(`set ${limit.env}=`);
      expect(h.store.listRuns()).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
