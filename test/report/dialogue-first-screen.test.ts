import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeRunOutputs } from '../../src/report/write.ts';
import { ResultStore } from '../../src/store/store.ts';
import { result } from '../store/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-dialogue-first-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the dialogue first screen's finding counts", () => {
  it('count a label over every stored conversation, as the summary does, so a share never exceeds 100 % when conversations errored', async () => {
    // two completed conversations, and three that errored after a turn labelled constraint_missed
    const all = [
      result('ok', [{ labels: [] }], { score: 0.95 }),
      result('fail', [{ labels: ['constraint_missed'] }], { score: 0.4 }),
      ...['e1', 'e2', 'e3'].map((key) => result(key, [{ labels: ['constraint_missed'] }], { status: 'sut_error', error: 'socket closed', verdicts: [] })),
    ];
    const store = ResultStore.open(join(dir, 'ws', 'results.sqlite'));
    try {
      const id = store.createRun({ name: 'errored', mode: 'guided', config: {}, plan: all.map((c) => c.spec) });
      for (const c of all) store.saveConversation(id, c);
      const { summary, firstScreen } = await writeRunOutputs(store, id, join(dir, 'out'), { unit: 'the reference unit', faults: null });
      const finding = firstScreen.findings.find((f) => f.title === 'constraint missed')!;
      expect(summary.failureTypes.constraint_missed.conversations).toBe(4);
      // before the fix: "in 4 of 2 completed conversations (200.0 %)"
      expect(finding.detail).toBe('(major) in 4 of 5 conversations (80.0 %)');
      expect(finding.short).toBe('constraint missed in 4 conversations');
    } finally {
      store.close();
    }
  });
});
