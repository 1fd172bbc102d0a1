import { expect } from 'vitest';
import { ResultStore } from '../../src/store/store.ts';

/** A stopped run is resumable: stored as interrupted, with planned work still to do. */
export function expectInterruptedWithWorkLeft(dbPath: string, runId: string): void {
  const store = ResultStore.open(dbPath);
  try {
    expect(store.getRun(runId)?.status).toBe('interrupted');
    expect([...store.remainingSpecs(runId)].length).toBeGreaterThan(0);
  } finally {
    store.close();
  }
}
