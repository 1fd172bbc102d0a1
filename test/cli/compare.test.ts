import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { comparisonWarningsText } from '../../src/domain/comparable.ts';
import { KindViews } from '../../src/server/kind-views.ts';
import { ResultStore } from '../../src/store/store.ts';
import { workspaceStorePath } from '../../src/store/workspace.ts';
import { runCli } from '../helpers/cli.ts';
import { result } from '../store/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-compare-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * #35: `icabench compare` of two stored runs goes through their kind's view (src/run/kind-view.ts), as the app's compare
 * page does, and prints the same warnings: runs judged by other verdict rules, methods, judges or safety policies, or
 * that ran other plans, are said to be read side by side with care.
 */
describe('icabench compare of stored runs', () => {
  it('prints the warnings the compare page shows, first, and keeps --json whole (warnings on stderr)', async () => {
    const workspace = join(dir, 'ws');
    const store = ResultStore.open(workspaceStorePath(workspace));
    let ids: string[];
    let served: { warnings: string[] };
    try {
      const conversations = [result('k1', [{ labels: [] }], { score: 0.9 }), result('k2', [{ labels: ['constraint_missed'] }], { score: 0.5 })];
      const configs = [
        { name: 'lab', method: 'lab', judges: ['oracle'], scoring: { theta: 0.75 } },
        { name: 'paper', method: 'paper', judges: ['oracle', 'qwen'], scoring: { theta: 0.6 } },
      ];
      ids = configs.map((config) => {
        const id = store.createRun({ name: config.name, mode: 'guided', config, plan: conversations.map((c) => c.spec) });
        for (const c of conversations) store.saveConversation(id, c);
        return id;
      });
      served = (await new KindViews({ store, workspace }).compare(store.getRun(ids[0])!, store.getRun(ids[1])!)) as unknown as { warnings: string[] };
    } finally {
      store.close();
    }
    expect(served.warnings).toEqual([
      'the runs differ in their method: lab vs paper',
      'the runs differ in their verdict rules (scoring: failOn, θ, inconclusive, weights)',
      'the runs differ in their judges: oracle vs oracle,qwen',
    ]);
    const warning = comparisonWarningsText(served.warnings)!;

    const text = await runCli(['compare', ids[0], ids[1], '--workspace', workspace]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toBe(warning);
    expect(lines[1]).toMatch(/^A lab: 2 conversations, fail rate/);
    // two stored runs of one plan: conversation by conversation
    expect(text.stdout).toContain('fixed (fail in A, pass in B): 0');

    const json = await runCli(['compare', ids[0], ids[1], '--workspace', workspace, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ a: { name: 'lab' }, b: { name: 'paper' } });
    expect(json.stderr).toContain(warning);

    // the same runs with the same settings: no warning
    const same = await runCli(['compare', ids[0], ids[0], '--workspace', workspace]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).not.toContain('Read these side by side with care');
  }, 120_000);
});
