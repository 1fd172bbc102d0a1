import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resumedRun, runEndStatus } from '../../src/run/resume.ts';
import { ResultStore } from '../../src/store/store.ts';

let dir: string | undefined;
let store: ResultStore | undefined;
afterEach(() => {
  store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  store = undefined;
  dir = undefined;
});

describe('resumedRun', () => {
  it('is null without --resume, the run with it, and refuses an unknown run or one of another kind', () => {
    dir = mkdtempSync(join(tmpdir(), 'icabench-resume-'));
    store = ResultStore.open(join(dir, 'icabench.db'));
    const id = store.createItemRun({ name: 'm', kind: 'manual-qa', config: {}, plan: [{ key: 'q1', item: {} }] });
    expect(resumedRun(store, undefined)).toBeNull();
    expect(resumedRun(store, id, 'manual-qa')?.id).toBe(id);
    expect(resumedRun(store, id)?.id).toBe(id);
    expect(() => resumedRun(store!, 'nope')).toThrow('--resume: no run nope in this workspace (icabench runs lists them)');
    expect(() => resumedRun(store!, id, 'dialogue')).toThrow(`--resume: run ${id} is a manual-qa run, not a dialogue run`);
  });
});

describe('runEndStatus', () => {
  const end = { aborted: false, stopReason: null, budgetHit: false, done: 3, planned: 3 };
  it('interrupted on abort or a stop reason, budget_exhausted only with work left, completed otherwise', () => {
    expect(runEndStatus(end)).toBe('completed');
    expect(runEndStatus({ ...end, aborted: true })).toBe('interrupted');
    expect(runEndStatus({ ...end, stopReason: 'head unit gone', budgetHit: true, done: 1 })).toBe('interrupted');
    expect(runEndStatus({ ...end, budgetHit: true, done: 2 })).toBe('budget_exhausted');
    // the budget ran out as the last item finished: nothing is missing
    expect(runEndStatus({ ...end, budgetHit: true })).toBe('completed');
  });
});
