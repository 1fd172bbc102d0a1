import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openWorkspaceStore } from '../../src/store/workspace.ts';

describe('openWorkspaceStore', () => {
  it('a store this call created and nobody wrote a run to is removed with the folders it created', () => {
    const root = mkdtempSync(join(tmpdir(), 'icabench-ws-'));
    const opened = openWorkspaceStore(join(root, 'a', 'b'));
    expect(opened.created).toBe(true);
    expect(existsSync(join(root, 'a', 'b', 'icabench.db'))).toBe(true);
    opened.closeAndDiscardIfEmpty();
    expect(readdirSync(root)).toEqual([]);
  });

  it('keeps an existing workspace folder, and a store that holds a run', () => {
    const root = mkdtempSync(join(tmpdir(), 'icabench-ws-'));
    mkdirSync(join(root, 'ws'));
    const empty = openWorkspaceStore(join(root, 'ws'));
    empty.closeAndDiscardIfEmpty();
    expect(readdirSync(join(root, 'ws'))).toEqual([]);
    const used = openWorkspaceStore(join(root, 'ws'));
    used.store.createRun({ name: 'x', mode: 'guided', config: null, plan: [] });
    used.closeAndDiscardIfEmpty();
    expect(existsSync(join(root, 'ws', 'icabench.db'))).toBe(true);
    const again = openWorkspaceStore(join(root, 'ws'));
    expect(again.created).toBe(false);
    again.closeAndDiscardIfEmpty();
    expect(existsSync(join(root, 'ws', 'icabench.db'))).toBe(true);
  });
});
