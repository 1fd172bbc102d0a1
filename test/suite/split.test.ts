import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSuite, SuiteFileSchema } from '../../src/suite/format.ts';
import { suiteFiles } from '../../src/suite/split.ts';

describe('an imported suite larger than a suite file may be is written as several that suite check reads back', () => {
  it('splits into parts each within the limit, in order, every conversation once, each part loadable', () => {
    const suite = SuiteFileSchema.parse({
      suite: 'big',
      conversations: Array.from({ length: 40 }, (_, i) => ({ id: `c${i}`, turns: [{ user: `navigate to the charging station number ${i} please` }] })),
    });
    const dir = mkdtempSync(join(tmpdir(), 'icabench-split-'));
    try {
      const files = suiteFiles(suite, join(dir, 'big.yaml'), 'test', 1500);
      expect(files.length).toBeGreaterThan(1);
      expect(files.map((f) => f.path)).toEqual(files.map((_, i) => join(dir, `big-${i + 1}.yaml`)));
      const ids: string[] = [];
      for (const file of files) {
        expect(Buffer.byteLength(file.text)).toBeLessThanOrEqual(1500);
        writeFileSync(file.path, file.text);
        ids.push(...loadSuite(file.path).suite.conversations.map((c) => c.id));
      }
      expect(ids).toEqual(suite.conversations.map((c) => c.id));
      // a suite that fits stays one file at --out
      expect(suiteFiles(suite, join(dir, 'big.yaml'), 'test').map((f) => f.path)).toEqual([join(dir, 'big.yaml')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
